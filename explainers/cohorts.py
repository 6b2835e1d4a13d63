"""Cohorts of held-out rows: filters, the error tree, and each cohort's accuracy and fidelity figures.

A cohort is a conjunction of filters ``feature op value`` on the encoded table (category columns hold
codes; filters name their levels). The error tree is the error analysis of Nushi, Kamar & Horvitz (2018)
and of the Responsible AI dashboard: a shallow decision tree fitted to *where the model is wrong* on the
held-out rows, each leaf a cohort with its error rate and size. It is read by the one CART walker
(:class:`explainers.muse.CartSurrogate`, with a depth limit and a least leaf size), so a leaf is a
:class:`~explainers.types.Predicate` conjunction like any rule, and its filters reproduce it exactly.

Each cohort's figures (:func:`cohort_figures`): accuracy with its Wilson (1927) interval, the rule
surrogate's agreement on the cohort (:func:`explainers.muse.agreement_detail`, the one home of agreement and
its interval), and the persuasive story's per-row measures (sufficiency, share of ``|attribution|`` shown)
averaged over the cohort's measured rows with a seeded percentile bootstrap interval
(:func:`explainers.intervals.bootstrap_mean`). :func:`misleads_most` ranks cohorts by the story's sufficiency.

References
----------
.. [1] Nushi, B., Kamar, E., Horvitz, E. (2018). Towards Accountable AI: Hybrid Human-Machine Analyses for
   Characterizing System Failure. HCOMP. arXiv 1809.07424.
.. [2] Wilson, E. B. (1927). Probable inference, the law of succession, and statistical inference. JASA 22.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from .cohort_filters import OPS, Filter, cohort_mask, filters_text, parse_filters  # noqa: F401  (re-exported)
from .intervals import bootstrap_mean, wilson
from . import muse  # its estimators import scikit-learn on first use (a server's start, issue 23)

__all__ = ["Filter", "parse_filters", "filters_text", "cohort_mask", "ErrorLeaf", "ErrorTree", "error_tree",
           "CohortFigures", "cohort_figures", "misleads_most", "is_compatible", "ERROR_TREE_DEPTH"]

ERROR_TREE_DEPTH = 3
"""The error tree's depth (the RAI dashboard's default is 4; 3 keeps a leaf's description to 3 conditions)."""


def is_compatible(capabilities) -> str | None:
    """Why cohorts do not apply to a model with these capabilities, or ``None`` (they need a classifier)."""
    if capabilities.task == "regression":
        return "Cohorts show accuracy, error rates and fairness rates per cohort; they need a classifier."
    return None


@dataclass(frozen=True)
class ErrorLeaf:
    """One leaf of the error tree: its conditions and what it holds of the fitting rows.

    ``error_low``/``error_high`` are the Wilson 95 % interval of ``error_rate``.
    """

    index: int
    filters: tuple[Filter, ...]
    n_rows: int
    n_errors: int
    error_rate: float
    error_low: float
    error_high: float


@dataclass(frozen=True)
class ErrorTree:
    """A shallow tree fitted to where the model is wrong (its leaves, worst error rate first)."""

    leaves: tuple[ErrorLeaf, ...]
    max_depth: int
    min_leaf: int
    n_rows: int
    n_errors: int

    @property
    def error_rate(self) -> float:
        """Errors over rows, every leaf together."""
        return self.n_errors / self.n_rows if self.n_rows else float("nan")


def _tidy(threshold: float, column: np.ndarray) -> float:
    """The shortest decimal that splits ``column`` where ``threshold`` does (a tree's threshold is a float32
    midpoint such as 15.954999923706055; 15.95 selects the same rows and reads as a person would write it)."""
    c = column[np.isfinite(column)]
    below, above = c[c <= threshold], c[c > threshold]
    if not below.size or not above.size:
        return float(threshold)
    lo, hi = float(below.max()), float(above.min())
    for digits in range(0, 12):
        for d in (round((lo + hi) / 2, digits), round(threshold, digits)):
            if lo <= d < hi:
                return float(d)
    return float(threshold)


def _leaf_filters(rule, X: pd.DataFrame, categorical: frozenset = frozenset()) -> tuple[Filter, ...]:
    out, levels = [], {}
    for p in rule.rule:
        if p.op == "in":
            out.append(Filter(p.feature, "in", tuple(float(v) for v in p.threshold)))
        elif p.feature in categorical:  # a split of category codes: the levels on its side, as a set
            kept = levels.get(p.feature, np.unique(X[p.feature].dropna().to_numpy(dtype=float)))
            levels[p.feature] = kept[Filter(p.feature, p.op, float(p.threshold)).mask(kept)]
        else:
            out.append(Filter(p.feature, p.op, _tidy(float(p.threshold), X[p.feature].to_numpy(dtype=float))))
    for feature, kept in levels.items():
        codes = tuple(float(v) for v in kept)
        out.append(Filter(feature, "==", codes[0]) if len(codes) == 1 else Filter(feature, "in", codes))
    order = {str(c): i for i, c in enumerate(X.columns)}
    return tuple(sorted(out, key=lambda f: order[f.feature]))


def error_tree(X: pd.DataFrame, wrong, *, max_depth: int = ERROR_TREE_DEPTH, min_leaf: int | None = None,
               seed: int = 0, categorical: Sequence[str] = ()) -> ErrorTree:
    """Fit a decision tree to ``wrong`` (1 where the model errs) and read each leaf as a cohort.

    Parameters
    ----------
    X : DataFrame of shape (n_rows, n_features)
        Encoded held-out rows (numeric; category codes split as numbers).
    wrong : array-like of bool, shape (n_rows,)
    max_depth : int, default=3
    min_leaf : int, optional
        Fewest rows in a leaf; default ``max(5, n_rows // 50)`` (a leaf of 2 rows is an anecdote).
    seed : int, default=0
    categorical : sequence of str, default=()
        Columns of category codes: the tree splits their codes as numbers, and a leaf states the levels on its
        side of each split as a set (``workclass in Private, State-gov``; one level: ``==``), never as an order
        of the codes, so that its filters name levels as :func:`parse_filters` reads them back.

    Returns
    -------
    ErrorTree
        Leaves in the order error rate (high first), then size; a tree without an error, or without a
        split that separates errors, has one leaf (every row).

    Raises
    ------
    ValueError
        If ``X`` and ``wrong`` differ in length or there are no rows.
    """
    wrong = np.asarray(wrong, dtype=bool)
    if len(wrong) != len(X) or not len(X):
        raise ValueError(f"need one error flag per row and at least one row; got {len(wrong)} flags, {len(X)} rows")
    min_leaf = int(min_leaf if min_leaf is not None else max(5, len(X) // 50))
    leaves = []
    if wrong.any() and not wrong.all():
        cart = muse.CartSurrogate(max_leaf_nodes=2 ** max_depth, max_depth=max_depth, min_samples_leaf=min_leaf,
                                  seed=seed).fit(X, wrong.astype(int))
        rules = [_leaf_filters(r, X, frozenset(map(str, categorical))) for r in cart.rules_]
    else:
        rules = [()]
    for filters in rules:
        m = cohort_mask(X, filters)
        n, k = int(m.sum()), int(wrong[m].sum())
        rate, low, high = wilson(k, n)
        leaves.append((filters, n, k, rate, low, high))
    leaves.sort(key=lambda t: (-(t[3] if np.isfinite(t[3]) else -1), -t[1]))
    return ErrorTree(tuple(ErrorLeaf(i, *t) for i, t in enumerate(leaves)), max_depth, min_leaf, len(X),
                     int(wrong.sum()))


@dataclass(frozen=True)
class CohortFigures:
    """A cohort's accuracy and fidelity figures, each with its 95 % interval.

    Parameters
    ----------
    name : str
    n_rows : int
        Held-out rows in the cohort.
    accuracy, accuracy_low, accuracy_high : float
        Share of rows the model labels correctly, Wilson interval.
    agreement, agreement_low, agreement_high : float
        The rule surrogate's agreement with the model on the cohort (NaN without a surrogate).
    story : dict of str to (mean, low, high, n)
        Each persuasive measure averaged over the cohort's measured rows, bootstrap interval, rows measured.
    """

    name: str
    n_rows: int
    accuracy: float
    accuracy_low: float
    accuracy_high: float
    agreement: float = float("nan")
    agreement_low: float = float("nan")
    agreement_high: float = float("nan")
    story: Mapping[str, tuple] = field(default_factory=dict)


def cohort_figures(name: str, mask, correct, *, rule_set=None, X: pd.DataFrame | None = None, y_model=None,
                   story: Mapping[str, np.ndarray] | None = None, seed: int = 0) -> CohortFigures:
    """The figures of the cohort ``mask`` of held-out rows.

    Parameters
    ----------
    name : str
    mask : array-like of bool, shape (n_rows,)
    correct : array-like of bool, shape (n_rows,)
        Whether the model's label is the true label.
    rule_set : TwoLevelRuleSet, optional
        The rule surrogate; with ``X`` (encoded rows) and ``y_model`` (the model's labels), its agreement.
    story : mapping of str to ndarray of shape (n_rows,), optional
        Per-row persuasive measures, NaN where a row was not measured.
    seed : int, default=0
        Seeds the bootstrap.

    Returns
    -------
    CohortFigures
    """
    m = np.asarray(mask, dtype=bool)
    c = np.asarray(correct, dtype=bool)
    acc = wilson(int(c[m].sum()), int(m.sum()))
    agree = (float("nan"),) * 3
    if rule_set is not None and m.any():
        d = muse.agreement_detail(rule_set, X[m], np.asarray(y_model, dtype=object)[m])
        agree = (d.agreement, d.agreement_low, d.agreement_high)
    measured = {k: bootstrap_mean(np.asarray(v, float)[m], seed=seed) for k, v in (story or {}).items()}
    return CohortFigures(name, int(m.sum()), *acc, *agree, measured)


def misleads_most(cohorts: Sequence[CohortFigures], measure: str = "sufficiency") -> tuple[CohortFigures, ...]:
    """Cohorts ranked by the story's mean ``measure`` (high first: the story keeps least of the prediction).

    Cohorts with no measured row come last, in their given order.
    """
    def key(c):
        mean = c.story.get(measure, (float("nan"),))[0]
        return (0, -mean) if np.isfinite(mean) else (1, 0.0)
    return tuple(sorted(cohorts, key=key))
