"""Evaluate and render structured rules (:class:`~explainers.types.Predicate`, :class:`~explainers.types.Rule`).

Predicates are evaluated on columns of a 2-D array or DataFrame, never through
query strings (``shared/STYLE.md`` A6: imodels' string rules are the thing to avoid).
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from .types import Predicate, Rule

__all__ = ["predicate_mask", "conjunction_mask", "rule_text", "format_threshold", "format_predicate"]


def _column(X: pd.DataFrame | np.ndarray, feature: str, feature_names: Sequence[str] | None) -> np.ndarray:
    if isinstance(X, pd.DataFrame):
        if feature not in X.columns:
            raise ValueError(f"predicate feature {feature!r} is not a column of X")
        return X[feature].to_numpy()
    if feature_names is None:
        raise ValueError("feature_names is required when X is an array")
    names = list(feature_names)
    if feature not in names:
        raise ValueError(f"predicate feature {feature!r} is not in feature_names")
    return np.asarray(X)[:, names.index(feature)]


def predicate_mask(
    predicate: Predicate, X: pd.DataFrame | np.ndarray, feature_names: Sequence[str] | None = None
) -> np.ndarray:
    """Rows of ``X`` on which ``predicate`` holds.

    Parameters
    ----------
    predicate : Predicate
    X : DataFrame or ndarray of shape (n_rows, n_features)
    feature_names : sequence of str, optional
        Column names of ``X`` when it is an array.

    Returns
    -------
    mask : ndarray of bool, shape (n_rows,)
        Missing values never satisfy a numeric comparison.

    Raises
    ------
    ValueError
        If the feature is unknown or the operator is not one of ``<=, >, ==, in``.
    """
    col = _column(X, predicate.feature, feature_names)
    op, t = predicate.op, predicate.threshold
    if op in ("<=", ">"):
        vals = pd.to_numeric(pd.Series(col), errors="coerce").to_numpy(dtype=float)
        with np.errstate(invalid="ignore"):
            return (vals <= float(t)) if op == "<=" else (vals > float(t))
    if op == "==":
        return np.asarray(pd.Series(col) == t, dtype=bool)
    if op == "in":
        return np.asarray(pd.Series(col).isin(list(t)), dtype=bool)
    raise ValueError(f"unknown predicate operator {op!r}; expected one of '<=', '>', '==', 'in'")


def conjunction_mask(
    predicates: Sequence[Predicate], X: pd.DataFrame | np.ndarray, feature_names: Sequence[str] | None = None
) -> np.ndarray:
    """Rows on which every predicate holds (all rows for an empty conjunction).

    Returns
    -------
    mask : ndarray of bool, shape (n_rows,)
    """
    n = len(X)
    mask = np.ones(n, dtype=bool)
    for p in predicates:
        mask &= predicate_mask(p, X, feature_names)
    return mask


def format_threshold(value: float) -> str:
    """Render a numeric threshold with 4 significant digits (``16.8``, ``0.1425``)."""
    return f"{float(value):.4g}"


def format_predicate(feature: str, op: str, threshold) -> str:
    """``"worst radius > 16.8"``: a predicate as written, thresholds of ``<=``/``>`` to 4 significant digits."""
    return f"{feature} {op} {format_threshold(threshold) if op in ('<=', '>') else threshold}"


def rule_text(rule: Rule) -> str:
    """``"IF worst radius > 16.8 AND ... THEN malignant"``."""
    parts = [format_predicate(p.feature, p.op, p.threshold) for p in rule.predicates]
    cond = " AND ".join(parts) if parts else "(always)"
    return f"IF {cond} THEN {rule.prediction}"
