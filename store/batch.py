"""Many rows' explanations at once, each equal to the one the live path gives for that row alone.

``python -m app build`` explains thousands of rows; one call per row spends most of its time outside the
explainers (on Adult's one-hot pipeline a model call costs about 15 ms of column encoding whatever its size,
and a live row makes three to five of them). Here:

- :func:`shap_rows`: an exact backend's values of a whole chunk come from one
  :meth:`~explainers.ShapExplainer.explain_outputs` call (or from the global view already computed), its
  outputs from two model calls, and each row is wrapped by the explainer's own
  :meth:`~explainers.ShapExplainer.from_row`, answered from those outputs instead of calling the model again.
  Sampled backends (seeded row by row) and rows a tree backend had to redo are explained one by one.

LIME is not batched here: its model calls already carry 1,000-8,000 rows each (about 6,300 model rows a row on
Adult's HistGradientBoosting pipeline; since the one-hot shortcut, :mod:`explainers._one_hot_input`, 69 CPU ms a row,
two thirds of it the boosted trees' own prediction); sharing them between 16 rows in threads saved nothing and cost
30 ms a row of thread switching (measured, 48 rows, before the shortcut).

Model outputs are computed row by row by every model Candor explains (trees, linear models, pipelines of
column transformers), so a row's output in a batch is the output it has alone; tests compare both.
"""
from __future__ import annotations

import copy
from typing import Callable

import numpy as np
import pandas as pd

__all__ = ["shap_rows"]


def _answered(explainer, X: pd.DataFrame):
    """A shallow copy of ``explainer`` whose model outputs for rows of ``X`` come from two calls made now."""
    explained = np.asarray(explainer._explained_outputs(X))
    outputs = np.asarray(explainer.adapter.outputs(X))
    at = {label: i for i, label in enumerate(X.index)}
    fast, adapter = copy.copy(explainer), copy.copy(explainer.adapter)
    fast._explained_outputs = lambda x: explained[[at[r] for r in x.index]]
    adapter.outputs = lambda x: outputs[[at[r] for r in x.index]]
    fast.adapter = adapter
    return fast


def shap_rows(explainer, X: pd.DataFrame, known: dict | None = None, alone: Callable | None = None) -> list:
    """SHAP explanations of every row of ``X``, each as ``explainer.explain(X.iloc[[i]])`` gives it.

    Parameters
    ----------
    explainer : ShapExplainer
    X : DataFrame
        The rows (the workspace's encoded table, index = row labels).
    known : dict, optional
        Row label to ``(values, base_value, standard_error)`` already computed for the target output (the
        global view's rows, as the live server wraps them with ``from_row``).
    alone : callable, optional
        ``alone(label)`` explains one row the live way; used for sampled backends and for rows whose
        Tree SHAP was redone by permutation SHAP. Default ``explainer.explain`` on that row.

    Returns
    -------
    list of Explanation, in the order of ``X``.
    """
    alone = alone or (lambda label: explainer.explain(X.loc[[label]]))
    if not explainer.exact or len(X) == 0:
        return [alone(label) for label in X.index]
    known = known or {}
    fast, t = _answered(explainer, X), explainer.target_index
    rest = [label for label in X.index if label not in known]
    found = {}
    if rest:
        out = explainer.explain_outputs(X.loc[rest])
        se, orderings = out.params["standard_error"], out.params.get("orderings")
        for i, label in enumerate(rest):
            if orderings is not None and orderings[i] > 0:  # redone by permutation SHAP: as the row alone
                found[label] = None
            else:
                found[label] = (out.values[i, :, t], float(out.base_values[t]), se[i, :, t],
                                bool(out.params["converged"][i]))
    result = []
    for label in X.index:
        x = X.loc[[label]]
        if label in known:
            values, base, se = known[label]
            result.append(fast.from_row(x, values, base, standard_error=se))
        elif found[label] is None:
            result.append(alone(label))
        else:
            values, base, se, converged = found[label]
            result.append(fast.from_row(x, values, base, tree_rows_recomputed=0, standard_error=se,
                                        converged=converged))
    return result
