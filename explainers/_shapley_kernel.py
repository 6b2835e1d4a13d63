"""Kernel SHAP (Lundberg & Lee 2017, arXiv 1705.07874) with a standard error: shap's ``KernelExplainer`` over a
k-means summary of the background, run :data:`KERNEL_REPEATS` times with seeded coalition draws; the mean is
the estimate and the spread of the runs over ``sqrt(runs)`` its standard error (docs/methods.md, "SHAP").
Used by :class:`explainers.shap_explainer.ShapExplainer` when ``algorithm="kernel"``.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["kernel_explainer", "repeated_kernel_shap", "KMEANS_K", "KERNEL_REPEATS"]

KMEANS_K = 20
KERNEL_REPEATS = 4
"""Seeded Kernel SHAP runs per request; their spread over sqrt(runs) is the standard error."""


def kernel_explainer(f, background: pd.DataFrame, seed: int):
    """shap's ``KernelExplainer`` of ``f`` over the background summarised by k-means to at most
    :data:`KMEANS_K` weighted centroids."""
    import shap  # imported on first use: the other backends need none of it

    summary = shap.kmeans(background.to_numpy(dtype=float), min(KMEANS_K, len(background)))
    return shap.KernelExplainer(f, summary, seed=seed)


def repeated_kernel_shap(explainer, X: np.ndarray, *, seed: int, rel_tol: float, judge: int | None):
    """Kernel SHAP as the mean of :data:`KERNEL_REPEATS` seeded runs; standard error = their spread / sqrt(runs).

    shap's ``KernelExplainer`` samples coalitions from numpy's global random state and reports no
    error; run ``r`` seeds that state with ``seed + r`` (restored afterwards). Returns values and
    standard errors (n_rows, n_features, n_outputs), base values (n_outputs,) and per-row
    ``converged``: every standard error of the judged output at most
    ``rel_tol * |f(x) - base|`` (no more runs are added when it is not).
    """
    state = np.random.get_state()
    try:
        runs = []
        for r in range(KERNEL_REPEATS):
            np.random.seed(seed + r)
            runs.append(np.asarray(explainer.shap_values(X, silent=True), dtype=float))
    finally:
        np.random.set_state(state)
    runs = np.stack(runs)
    if runs.ndim == 3:
        runs = runs[..., None]
    vals, se = runs.mean(axis=0), runs.std(axis=0, ddof=1) / np.sqrt(KERNEL_REPEATS)
    base = np.asarray(explainer.expected_value, dtype=float).ravel()
    t = slice(None) if judge is None else slice(judge, judge + 1)
    tol = rel_tol * np.abs(vals.sum(axis=1))[:, t]  # |f(x) - base|
    converged = (se[:, :, t] <= np.maximum(tol, 1e-12)[:, None, :]).all(axis=(1, 2))
    return vals, base, se, converged
