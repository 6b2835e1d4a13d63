"""Permutation feature importance (Breiman 2001; Fisher, Rudin & Dominici 2019), a global, model-agnostic method.

The score of the explained output on some rows (held-out rows: the model's skill, not its memory) is compared with
the score after one column's values are shuffled among those rows; the drop, averaged over repeated shuffles, is
that feature's importance. The kernel (:func:`permutation_scores`) takes any ``score(X) -> float``; the
shuffles follow scikit-learn's ``sklearn.inspection.permutation_importance`` exactly (one seed drawn from
``numpy.random.RandomState(seed)``, the same shuffling sequence for every column, each repeat shuffling the
previous repeat's column), so that scikit-learn on the same seed is its oracle (``tests/explainers``). Each
column's repeats are scored in one model call (the shuffled tables stacked), not one call per repeat.
"""
from __future__ import annotations

from typing import Callable

import numpy as np
import pandas as pd

from .types import PermutationImportance

__all__ = ["SCORINGS", "PermutationImportanceExplainer", "permutation_scores", "roc_auc"]

def roc_auc(y, out) -> float:
    """ROC AUC of scores ``out`` for binary ``y`` (the larger label positive), as the Mann–Whitney statistic with
    average ranks for ties: equal to scikit-learn's ``roc_auc_score`` (a test checks), without its input
    validation, which took 87 % of a permutation importance's time on the bundled sample (14 ms a call).

    Raises
    ------
    ValueError
        If ``y`` does not hold exactly two labels.
    """
    y, out = np.asarray(y), np.asarray(out, dtype=float)
    labels = np.unique(y)
    if len(labels) != 2:
        raise ValueError(f"ROC AUC needs two classes, got {len(labels)}")
    pos = y == labels[1]
    n1, n0 = int(pos.sum()), int((~pos).sum())
    from scipy.stats import rankdata  # scipy and scikit-learn at first use, not on a server's start (issue 23)

    ranks = rankdata(out)
    return float((ranks[pos].sum() - n1 * (n1 + 1) / 2) / (n1 * n0))


def _accuracy(y, out) -> float:
    from sklearn.metrics import accuracy_score

    return float(accuracy_score(y, np.asarray(out, dtype=float) >= 0.5))


def _r2(y, out) -> float:
    from sklearn.metrics import r2_score

    return float(r2_score(y, out))


SCORINGS: dict[str, Callable[[np.ndarray, np.ndarray], float]] = {"roc_auc": roc_auc, "accuracy": _accuracy, "r2": _r2}
"""Scores of the explained output against the true target: ROC AUC (a probability or margin), accuracy (a
probability or a 0/1 label, at 0.5), R² (a regressor's prediction). Higher is better for each."""


def permutation_scores(output: Callable[[pd.DataFrame], np.ndarray], metric: Callable[[np.ndarray, np.ndarray], float],
                       X: pd.DataFrame, y, n_repeats: int, seed: int) -> tuple[float, np.ndarray]:
    """``(baseline score, scores with each column shuffled)``, the latter of shape (n_features, n_repeats).

    Parameters
    ----------
    output : callable
        Rows (a DataFrame with ``X``'s columns) to the explained output, shape (n_rows,).
    metric : callable
        ``metric(y, output) -> float``, higher is better.
    X : DataFrame
    y : array-like of shape (n_rows,)
    n_repeats : int
        Shuffles per column (at least 1).
    seed : int
        As scikit-learn's ``random_state``.
    """
    if n_repeats < 1:
        raise ValueError(f"n_repeats must be at least 1, got {n_repeats}")
    y = np.asarray(y)
    n, d = X.shape
    baseline = metric(y, np.asarray(output(X), dtype=float))
    column_seed = np.random.RandomState(seed).randint(np.iinfo(np.int32).max + 1)
    scores = np.empty((d, n_repeats))
    for j in range(d):
        rng, order = np.random.RandomState(column_seed), np.arange(n)
        col = X.iloc[:, j].to_numpy()
        stacked = pd.concat([X] * n_repeats, ignore_index=True)
        shuffled = []
        for _ in range(n_repeats):
            rng.shuffle(order)
            col = col[order]
            shuffled.append(col)
        stacked.isetitem(j, np.concatenate(shuffled))
        out = np.asarray(output(stacked), dtype=float)
        scores[j] = [metric(y, out[r * n:(r + 1) * n]) for r in range(n_repeats)]
    return baseline, scores


class PermutationImportanceExplainer:
    """Permutation importance of the explained output's score.

    Parameters
    ----------
    output : callable
        Rows (DataFrame) to the explained output, shape (n_rows,).
    scoring : {"roc_auc", "accuracy", "r2"}
        How the output is scored against the true target (:data:`SCORINGS`).
    n_repeats : int, default=10
    seed : int, default=0
    target : str, default=""
        What the output explains (for the result's text).
    """

    def __init__(self, output: Callable[[pd.DataFrame], np.ndarray], *, scoring: str, n_repeats: int = 10,
                 seed: int = 0, target: str = "") -> None:
        if scoring not in SCORINGS:
            raise ValueError(f"scoring must be one of {sorted(SCORINGS)}, got {scoring!r}")
        self.output, self.scoring, self.target = output, scoring, target
        self.n_repeats, self.seed = int(n_repeats), int(seed)

    def model_cells(self, n_rows: int, n_features: int) -> int:
        """Cells the model is sent to explain ``n_rows`` rows of ``n_features`` columns: every column's
        ``n_repeats`` shuffled copies of the rows, each ``n_features`` wide (it grows with the square of the width)."""
        return int(n_features) * self.n_repeats * int(n_rows) * int(n_features)

    @staticmethod
    def is_compatible(y, scoring: str) -> str | None:
        """Why the rows' target ``y`` cannot be scored by ``scoring`` (one line), or None if it can."""
        y = np.asarray(y)
        if len(y) < 2:
            return f"permutation importance needs at least 2 rows to score, got {len(y)}"
        if scoring == "roc_auc" and len(np.unique(y)) < 2:
            return "ROC AUC needs both the explained class and the rest among the scored rows"
        return None

    def explain(self, X: pd.DataFrame, y, *, rows: str = "rows") -> PermutationImportance:
        """Permutation importance of every column of ``X`` against the true ``y``.

        ``rows`` names the rows scored in the result's ``source`` (e.g. "held-out rows").

        Raises
        ------
        ValueError
            If :meth:`is_compatible` says why not.
        """
        why = self.is_compatible(y, self.scoring)
        if why:
            raise ValueError(why)
        baseline, scores = permutation_scores(self.output, SCORINGS[self.scoring], X, y, self.n_repeats, self.seed)
        drops = baseline - scores
        se = drops.std(axis=1, ddof=1) / np.sqrt(self.n_repeats) if self.n_repeats > 1 else np.zeros(len(drops))
        source = (f"permutation importance: drop of {self.scoring} (baseline {baseline:.4f}) when one column is "
                  f"shuffled among the {len(X):,} {rows}, mean ± standard error over {self.n_repeats} shuffles "
                  f"(seed {self.seed}; Breiman 2001, Fisher, Rudin & Dominici 2019)")
        return PermutationImportance(tuple(map(str, X.columns)), drops.mean(axis=1), se, drops, float(baseline),
                                     self.scoring, self.n_repeats, self.seed, len(X), self.target, source)
