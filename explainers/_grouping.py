"""Map a fitted preprocessing step's output features back to the raw columns they come from.

Used to explain a Pipeline's final estimator in its *transformed* space (exact
Tree SHAP) and then report attributions per *raw* column: the attributions of
a raw column's children (e.g. its one-hot indicators) are added with their
signs, row by row, and only then aggregated (mean |attribution|). Summing
absolute values instead would inflate a 200-level one-hot column roughly in
proportion to its number of levels.
"""
from __future__ import annotations

import numpy as np

__all__ = ["feature_groups", "group_signed_sum", "ELEMENTWISE"]

ELEMENTWISE = frozenset({
    "StandardScaler", "MinMaxScaler", "RobustScaler", "MaxAbsScaler", "OrdinalEncoder", "PowerTransformer",
    "QuantileTransformer", "FunctionTransformer", "TargetEncoder", "Binarizer",
})
"""Transformers whose output column j depends on input column j only (one-to-one)."""


def _one_hot_counts(enc, n_in: int) -> list[int] | None:
    counts = getattr(enc, "_n_features_outs", None)
    if counts is None or len(counts) != n_in:
        return None
    return [int(c) for c in counts]


def _map_step(step, parents: np.ndarray) -> np.ndarray | None:
    """Raw column of every output feature of ``step``, given the raw column of each input feature."""
    name = type(step).__name__
    if isinstance(step, str):
        return parents if step == "passthrough" else np.array([], dtype=int)
    if name == "Pipeline":
        for _, sub in step.steps:
            if sub is None or sub == "passthrough":
                continue
            parents = _map_step(sub, parents)
            if parents is None:
                return None
        return parents
    if name == "ColumnTransformer":
        names_in = [str(c) for c in getattr(step, "feature_names_in_", range(len(parents)))]
        n_out = sum(s.stop - s.start for s in step.output_indices_.values())
        out = np.full(n_out, -1, dtype=int)
        for tname, trans, cols in step.transformers_:
            sl = step.output_indices_.get(tname)
            if sl is None or sl.stop == sl.start:
                continue
            cols = [cols] if isinstance(cols, (str, int)) else list(np.arange(len(parents))[cols]) \
                if isinstance(cols, slice) else list(cols)
            if cols and isinstance(cols[0], (bool, np.bool_)):
                cols = [i for i, keep in enumerate(cols) if keep]
            pos = [names_in.index(str(c)) if not isinstance(c, (int, np.integer)) else int(c) for c in cols]
            sub = _map_step(trans, parents[pos])
            if sub is None or len(sub) != sl.stop - sl.start:
                return None
            out[sl] = sub
        return out if (out >= 0).all() else None
    if name == "OneHotEncoder":
        counts = _one_hot_counts(step, len(parents))
        return None if counts is None else np.repeat(parents, counts)
    if name == "SimpleImputer":
        if getattr(step, "indicator_", None) is not None:
            return None
        stats = getattr(step, "statistics_", None)
        keep = np.ones(len(parents), bool)
        if stats is not None and not getattr(step, "keep_empty_features", False) and np.asarray(stats).dtype.kind == "f":
            keep = ~np.isnan(np.asarray(stats, dtype=float))  # all-empty columns are dropped by the imputer
        return parents[keep]
    if name in ELEMENTWISE:
        return parents
    if len(set(parents.tolist())) == 1:  # any transformer of a single raw column stays in that column
        n_out = len(step.get_feature_names_out()) if hasattr(step, "get_feature_names_out") else None
        return None if n_out is None else np.full(n_out, parents[0])
    return None


def feature_groups(preprocessor, n_raw: int) -> np.ndarray | None:
    """Raw column index of each transformed feature, or ``None`` if the mapping is not one-to-many.

    Parameters
    ----------
    preprocessor : fitted transformer (ColumnTransformer, Pipeline, OneHotEncoder, scalers ...)
    n_raw : int
        Number of raw input columns.

    Returns
    -------
    ndarray of int of shape (n_transformed,) or None
        ``None`` when some output mixes several raw columns (PCA, polynomial
        features, imputers with indicators ...): explain in the raw space instead.
    """
    try:
        return _map_step(preprocessor, np.arange(n_raw))
    except (AttributeError, ValueError, TypeError, IndexError):
        return None


def group_signed_sum(values: np.ndarray, groups: np.ndarray, n_raw: int) -> np.ndarray:
    """Add children's attributions with their signs, per row (and per output).

    Parameters
    ----------
    values : ndarray of shape (n_rows, n_transformed) or (n_rows, n_transformed, n_outputs)
    groups : ndarray of int of shape (n_transformed,)
        Raw column of each transformed feature.
    n_raw : int

    Returns
    -------
    ndarray of shape (n_rows, n_raw) or (n_rows, n_raw, n_outputs)
        Same units as ``values``; row sums are unchanged (additivity is kept).
    """
    values = np.asarray(values, dtype=float)
    one_hot = np.zeros((values.shape[1], n_raw))
    one_hot[np.arange(values.shape[1]), groups] = 1.0
    return np.einsum("nt...,tr->nr...", values, one_hot)
