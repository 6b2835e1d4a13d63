"""Evaluate and render structured rules (:class:`~explainers.types.Predicate`, rules): the one rule-text renderer.

Predicates are evaluated on columns of a 2-D array or DataFrame, never through
query strings (``shared/STYLE.md`` A6: imodels' string rules are the thing to avoid).
This module imports nothing else of explainers/ (``types`` renders through it), and reaches a
codec's texts through ``codec.conjunction_parts``.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import pandas as pd

from .numbers import plain


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
    predicate: Any, X: pd.DataFrame | np.ndarray, feature_names: Sequence[str] | None = None
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
    predicates: Sequence[Any], X: pd.DataFrame | np.ndarray, feature_names: Sequence[str] | None = None
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
    """Render a numeric threshold with 4 significant digits (``16.8``, ``0.1425``, ``226,800``: never ``2.268e+05``)."""
    return plain(value, 4, trim=True)


def format_predicate(feature: str, op: str, threshold) -> str:
    """``"worst radius > 16.8"``: a predicate as written, thresholds of ``<=``/``>`` to 4 significant digits."""
    return f"{feature} {op} {format_threshold(threshold) if op in ('<=', '>') else threshold}"


def rule_text(rule, codec=None, *, label=None, always: str = "(always)") -> str:
    """``"IF worst radius > 16.8 AND ... THEN malignant"``: the one renderer of a rule as text.

    Every rule a user reads goes through here: MUSE and CART rules, the persuasive layer's shown
    rules, the Surrogate page and ``python -m app check``.

    Parameters
    ----------
    rule : rule or sequence of str
        A rule (anything with ``predicates`` and ``label``: descriptor and decision rule are one
        conjunction), or the condition's parts already rendered (phrases, codec texts); empty
        parts are skipped.
    codec : TabularCodec, optional
        Renders predicates on encoded columns in the user's levels and dates
        (:meth:`explainers._codec.TabularCodec.conjunction_parts`); without one, each predicate is
        :func:`format_predicate`.
    label : optional
        The label after THEN; default ``rule.label``.
    always : str, default="(always)"
        Kept for callers; a rule without a condition reads ``"ALWAYS malignant"`` (never the
        ``"IF always THEN malignant"`` a first-time user found), so no caller needs it.
    """
    if hasattr(rule, "predicates"):
        if codec is None:
            parts = [format_predicate(p.feature, p.op, p.threshold) for p in rule.predicates]
        else:
            parts = list(codec.conjunction_parts(rule.predicates))
        label = rule.label if label is None else label
    else:
        parts = list(rule)
    condition = " AND ".join(p for p in parts if p)
    return f"IF {condition} THEN {label}" if condition else f"ALWAYS {label}"
