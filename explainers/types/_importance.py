"""Permutation feature importance: how much a score drops when one column's values are shuffled."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._json import _jsonable


@dataclass(frozen=True)
class PermutationImportance:
    """Permutation importance of every feature over repeated shuffles (Breiman 2001; Fisher, Rudin & Dominici 2019).

    Parameters
    ----------
    feature_names : tuple of str, length n_features
    importances : ndarray of shape (n_features,)
        Mean drop of the score over the repeats: ``baseline_score - score with the feature's column shuffled``.
    standard_error : ndarray of shape (n_features,)
        Standard error of that mean over the repeats: ``std(ddof=1) / sqrt(n_repeats)`` (0 with one repeat).
    repeats : ndarray of shape (n_features, n_repeats)
        Each repeat's drop (scikit-learn's ``importances``).
    baseline_score : float
        The score of the unshuffled rows.
    scoring : str
        ``"roc_auc"``, ``"accuracy"`` or ``"r2"`` of the explained output against the true target.
    n_repeats, seed, n_rows : int
        Shuffles per feature, the seed (scikit-learn's ``random_state``), the rows scored.
    target : str
        What the output explains (the explained class or the target's name).
    source : str
        One line saying how it was computed.
    """

    feature_names: tuple[str, ...]
    importances: np.ndarray
    standard_error: np.ndarray
    repeats: np.ndarray
    baseline_score: float
    scoring: str
    n_repeats: int
    seed: int
    n_rows: int
    target: str
    source: str
    method: str = "permutation_importance"

    def __post_init__(self) -> None:
        d = len(self.feature_names)
        object.__setattr__(self, "feature_names", tuple(map(str, self.feature_names)))
        for name, shape in (("importances", (d,)), ("standard_error", (d,)), ("repeats", (d, int(self.n_repeats)))):
            a = np.asarray(getattr(self, name), dtype=float)
            if a.shape != shape:
                raise ValueError(f"{name} has shape {a.shape}, expected {shape} ({d} features, "
                                 f"{self.n_repeats} repeats)")
            object.__setattr__(self, name, a)

    def to_dict(self) -> dict:
        return _jsonable(self)

    @classmethod
    def from_dict(cls, d: dict) -> "PermutationImportance":
        """The result :meth:`to_dict` gave (arrays back to float64, names to a tuple).

        Raises
        ------
        KeyError, TypeError, ValueError
            If ``d`` is not such an object.
        """
        return cls(tuple(d["feature_names"]), np.array(d["importances"], dtype=float),
                   np.array(d["standard_error"], dtype=float), np.array(d["repeats"], dtype=float).reshape(
                       len(d["feature_names"]), int(d["n_repeats"])),
                   float(d["baseline_score"]), str(d["scoring"]), int(d["n_repeats"]), int(d["seed"]),
                   int(d["n_rows"]), str(d["target"]), str(d["source"]), str(d.get("method", "permutation_importance")))
