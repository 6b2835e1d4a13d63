"""Cost estimates, pipeline views and number formatting for :mod:`explainers.shap_explainer`."""
from __future__ import annotations

import numpy as np

from ._grouping import feature_groups
from ._permutation import MAX_ORDERINGS
from .model_adapter import ModelAdapter, TreeView
from .model_kinds import is_linear_model

__all__ = ["estimate_cost", "linear_pipeline_view", "pct", "permutation_evals"]


def permutation_evals(n_features: int, orderings: int = MAX_ORDERINGS) -> int:
    """Coalitions evaluated per row by permutation SHAP at most (each against every background row).

    Each ordering walks ``n_features - 1`` coalitions besides the empty and full ones, which are shared.
    """
    return orderings * max(n_features - 1, 1) + 2


def estimate_cost(n_features: int, n_background: int, algorithm: str, n_outputs: int = 1) -> dict:
    """Model evaluations and peak memory of explaining one row, before the job starts.

    Returns
    -------
    dict
        ``model_rows_per_row`` (rows the model predicts per explained row; for permutation SHAP the
        most it may take, :data:`explainers._permutation.MAX_ORDERINGS` orderings; it usually stops
        earlier, at its tolerance) and ``memory_mb`` (float64 masked rows held at once, in MiB;
        permutation SHAP calls the model on at most 20,000 rows at a time, exact enumeration on
        50,000, :func:`explainers._permutation.permutation_shap`).
    """
    evals = {"permutation": permutation_evals(n_features), "kernel": 2 * n_features + 2048,
             "exact": 2 ** min(n_features, 62)}.get(algorithm, 1)
    rows = evals * n_background
    if algorithm == "permutation":
        batch = min(rows, max(n_background, 20_000 // max(1, n_background) * n_background))
    elif algorithm == "exact":
        batch = min(rows, max(n_background, 50_000 // max(1, n_background) * n_background))
    else:
        batch = rows
    mem = batch * (n_features + n_outputs) * 8 / 2**20 if algorithm in ("permutation", "kernel", "exact") \
        else n_background * n_features * 8 / 2**20
    return {"model_rows_per_row": int(rows), "memory_mb": round(float(mem), 1)}


def linear_pipeline_view(adapter: ModelAdapter) -> TreeView | None:
    """A Pipeline ending in a linear model whose steps map each output feature to one raw column.

    Returns the final model, the transform that feeds it, each transformed feature's raw column and
    names (the :class:`~explainers.model_adapter.TreeView` shape), or None.
    """
    m = adapter.model
    if type(m).__name__ != "Pipeline" or not is_linear_model(m.steps[-1][1]):
        return None
    pre = m[:-1]
    groups = feature_groups(pre, len(adapter.codec.names))
    if groups is None:
        return None
    try:
        names = tuple(str(n) for n in pre.get_feature_names_out())
    except (AttributeError, ValueError):
        names = tuple(f"{adapter.codec.names[g]} [{i}]" for i, g in enumerate(groups))

    def transform(Z):
        T = pre.transform(adapter.raw(Z))
        return T.toarray() if hasattr(T, "toarray") else np.asarray(T, dtype=float)

    return TreeView(m.steps[-1][1], transform, groups, names)


def pct(fraction: float) -> str:
    """``0.0025`` -> ``"0.25 %"`` (never scientific notation)."""
    text = f"{fraction * 100:.6f}".rstrip("0").rstrip(".")
    return f"{text} %"
