"""Model output with features removed: the value function behind ERASER's measures.

A removed feature takes its value from each background row in turn and the outputs are averaged,
``E_b[f(x_S, b_{\\bar S})]`` (an interventional expectation, as SHAP's value function; Janzing et
al. 2020). Sufficiency and comprehensiveness are DeYoung et al. (2020, "ERASER", ACL,
arXiv 1911.03429): ``f(x) - f(x_S only)`` and ``f(x) - f(x without S)``.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

__all__ = ["PredictFn", "GRID_CELLS", "masked_output", "masked_outputs", "sufficiency", "comprehensiveness"]

PredictFn = Callable[[np.ndarray], np.ndarray]


GRID_CELLS = 4_000_000
"""Most cells (rows x features) of masked rows built at once: sets are evaluated in chunks of this size, so a
10,000-column table never holds every set's rows at once (memory linear in the columns, not quadratic)."""


def masked_outputs(predict_fn: PredictFn, x, keep_sets, background) -> np.ndarray:
    """Expected output for each kept set, with one call of ``predict_fn`` per chunk of :data:`GRID_CELLS` cells.

    Parameters
    ----------
    predict_fn : callable
        ndarray (n, n_features) -> ndarray (n,) of the explained output. If it has a method
        ``expected_outputs(x, keep_sets, background)`` (a tree model's, :class:`explainers.tree_shap.HybridOutputs`),
        its answer is returned unless it is None, and no hybrid row is built.
    x : ndarray of shape (n_features,)
    keep_sets : sequence of ndarray of int
        Indices of the features that keep ``x``'s values (each may be empty).
    background : ndarray of shape (n_background, n_features)

    Returns
    -------
    ndarray of shape (len(keep_sets),)
        In the units of ``predict_fn``.
    """
    x = np.asarray(x, dtype=float)
    bg = np.asarray(background, dtype=float)
    expected = getattr(predict_fn, "expected_outputs", None)  # a tree model's exact shortcut (tree_shap.HybridOutputs)
    if expected is not None and len(keep_sets):
        out = expected(x, keep_sets, bg)
        if out is not None:
            return np.asarray(out, dtype=float)
    per_chunk = max(1, GRID_CELLS // max(bg.size, 1))
    out = []
    for lo in range(0, len(keep_sets), per_chunk):
        chunk = keep_sets[lo:lo + per_chunk]
        grid = np.tile(bg, (len(chunk), 1))
        for i, keep in enumerate(chunk):
            if len(keep):
                keep = np.asarray(keep, dtype=int)
                grid[i * len(bg):(i + 1) * len(bg), keep] = x[keep]
        out.append(np.asarray(predict_fn(grid), dtype=float).reshape(len(chunk), len(bg)).mean(axis=1))
    return np.concatenate(out) if out else np.zeros(0)


def masked_output(predict_fn: PredictFn, x, keep, background) -> float:
    """Expected output when only the features ``keep`` take their values from ``x`` (:func:`masked_outputs`)."""
    return float(masked_outputs(predict_fn, x, [keep], background)[0])


def sufficiency(predict_fn: PredictFn, x, keep, background) -> float:
    """ERASER sufficiency ``f(x) - f(x_S only)``; 0 when the kept features ``S`` suffice."""
    full = float(predict_fn(np.asarray(x, dtype=float)[None, :])[0])
    return full - masked_output(predict_fn, x, keep, background)


def comprehensiveness(predict_fn: PredictFn, x, removed, background) -> float:
    """ERASER comprehensiveness ``f(x) - f(x without S)``; exactly 0 for an empty ``removed``."""
    x = np.asarray(x, dtype=float)
    removed = np.asarray(removed, dtype=int)
    if removed.size == 0:
        return 0.0
    full = float(predict_fn(x[None, :])[0])
    return full - masked_output(predict_fn, x, np.setdiff1d(np.arange(x.size), removed), background)
