"""Attribution results: one row's :class:`Explanation` (with its :class:`Fidelity`), many rows'
:class:`GlobalImportance` and many rows' attributions of every output (:class:`OutputAttributions`)."""
from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from ._arrays import _as_float_array, _column_sums
from ._json import _jsonable

OutputSpace = Literal["probability", "log_odds", "raw"]


@dataclass(frozen=True)
class Fidelity:
    """How faithfully an explanation reproduces the black box.

    Parameters
    ----------
    metric : {"r2", "agreement", "accuracy"}
        ``r2`` is a (weighted) coefficient of determination of a local
        surrogate; ``agreement`` the share of rows where a surrogate predicts
        the black box's label.
    value : float
        The metric's value, in [0, 1] for agreement, at most 1 for R².
    n_samples : int
        Number of rows or perturbed samples the value was computed on.
    split : {"neighborhood", "holdout", "train"}
        Where those samples came from.
    """

    metric: Literal["r2", "agreement", "accuracy"]
    value: float
    n_samples: int
    split: Literal["neighborhood", "holdout", "train"]

    def to_dict(self) -> dict:
        return _jsonable(self)


@dataclass(frozen=True)
class Explanation:
    """A local feature-attribution explanation of one prediction.

    Parameters
    ----------
    method : str
        ``"shap"``, ``"lime"``, ``"integrated_gradients"`` ...
    feature_names : tuple of str, length n_features
    values : ndarray of shape (n_features,)
        Attributions in the units of ``output_space`` for class ``target``.
    base_value : float
        Expected output over the background (SHAP) or the local surrogate's
        intercept (LIME) or the output at the baseline (Integrated Gradients).
    prediction : float
        The model's output for this row, same units as ``values``.
    feature_values : ndarray of shape (n_features,)
        The explained row, in the model's input space.
    output_space : {"probability", "log_odds", "raw"}
    target : str
        Name of the explained class (or of the regression target).
    source : str
        Human-readable description of the method and its settings, shown in
        the UI next to every number, e.g. ``"SHAP 0.51.0 TreeExplainer,
        interventional, 100 background rows"``.
    fidelity : Fidelity or None
        Local fidelity (LIME's R²), if the method has one.
    params : dict
        Settings that produced the values (``seed``, ``num_samples`` ...).

    Raises
    ------
    ValueError
        If ``values``, ``feature_values`` and ``feature_names`` differ in length.
    """

    method: str
    feature_names: tuple[str, ...]
    values: np.ndarray
    base_value: float
    prediction: float
    feature_values: np.ndarray
    output_space: OutputSpace
    target: str
    source: str
    fidelity: Fidelity | None = None
    params: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "feature_names", tuple(str(n) for n in self.feature_names))
        object.__setattr__(self, "values", _as_float_array(self.values, "values", 1))
        object.__setattr__(self, "feature_values", np.asarray(self.feature_values))
        d = len(self.feature_names)
        if self.values.shape != (d,) or self.feature_values.shape != (d,):
            raise ValueError(
                f"values {self.values.shape} and feature_values {self.feature_values.shape} "
                f"must both have shape ({d},) to match feature_names"
            )

    @property
    def additivity_gap(self) -> float:
        """``|base_value + sum(values) - prediction|`` in output units."""
        return float(abs(self.base_value + self.values.sum() - self.prediction))

    def ranking(self) -> np.ndarray:
        """Feature indices by decreasing ``|value|``; ties broken by index (docs/methods.md, "Persuasive layer")."""
        return np.lexsort((np.arange(self.values.size), -np.abs(self.values)))

    def to_dict(self) -> dict:
        return _jsonable(self)


@dataclass(frozen=True)
class GlobalImportance:
    """Attributions of many rows and their global aggregate.

    Parameters
    ----------
    feature_names : tuple of str, length n_features
    values : ndarray of shape (n_rows, n_features)
        Per-row attributions (output units as in ``output_space``).
    feature_values : ndarray of shape (n_rows, n_features)
        The explained rows (numeric), for colouring a beeswarm.
    base_value : float
    output_space : {"probability", "log_odds", "raw"}
    target : str
    source : str
    standard_error : ndarray of shape (n_rows, n_features) or None
        Standard error of each sampled attribution (0 for exact backends), same units as ``values``.

    Notes
    -----
    ``importance`` is the mean ``|attribution|`` per feature (Lundberg et al.
    2020, arXiv 1905.04610): a global aggregate, hence "importance".
    """

    feature_names: tuple[str, ...]
    values: np.ndarray
    feature_values: np.ndarray
    base_value: float
    output_space: OutputSpace
    target: str
    source: str
    standard_error: np.ndarray | None = None

    def __post_init__(self) -> None:
        v = _as_float_array(self.values, "values", 2)
        if v.shape[1] != len(self.feature_names):
            raise ValueError(f"values has {v.shape[1]} columns for {len(self.feature_names)} features")
        object.__setattr__(self, "values", v)
        object.__setattr__(self, "feature_names", tuple(self.feature_names))

    @functools.cached_property
    def importance(self) -> np.ndarray:
        """Mean ``|attribution|`` over every row, per feature, shape (n_features,); computed once, by blocks of
        rows (:data:`CHUNK_ROWS`), so a memory-mapped ``values`` is never copied whole."""
        out = _column_sums(self.values, np.abs) / max(len(self.values), 1)
        out.setflags(write=False)
        return out

    @functools.cached_property
    def importance_standard_error(self) -> np.ndarray:
        """Standard error of :attr:`importance` from the per-row sampling errors, shape (n_features,).

        ``sqrt(Σ_i se_ij²) / n_rows`` (independent rows; ``| |a| − |b| | ≤ |a − b|``); zeros when exact.
        It does not count which rows were sampled, only how well each row was estimated. Computed once, by
        blocks of rows.
        """
        if self.standard_error is None:
            return np.zeros(self.values.shape[1])
        out = np.sqrt(_column_sums(self.standard_error, np.square)) / max(len(self.standard_error), 1)
        out.setflags(write=False)
        return out


@dataclass(frozen=True)
class OutputAttributions:
    """Attributions of many rows for every explained output (one consistent shape).

    Parameters
    ----------
    feature_names : tuple of str, length n_features
    values : ndarray of shape (n_rows, n_features, n_outputs)
        In the units of ``units[k]`` for output ``k``.
    base_values : ndarray of shape (n_outputs,)
    output_names : tuple of str, length n_outputs
        Class labels (or the regression target), never interaction indices.
    output_space : {"probability", "log_odds", "raw"}
    units : tuple of str, length n_outputs
    source : str
    params : dict

    Notes
    -----
    Returned by :meth:`explainers.ShapExplainer.explain_outputs`; not kept in a store or ``dcc.Store`` as it is (no
    ``to_dict``).
    """

    feature_names: tuple
    values: np.ndarray
    base_values: np.ndarray
    output_names: tuple
    output_space: str
    units: tuple
    source: str
    params: dict

    def importance(self, output: int) -> np.ndarray:
        """Mean |attribution| per feature for one output, shape (n_features,)."""
        return np.abs(self.values[:, :, output]).mean(axis=0)
