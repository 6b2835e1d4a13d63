"""Compiled walk of :mod:`explainers.tree_shap._hybrid`: every coalition's hybrid row through every tree at once.

For one background row ``b`` and one tree, the coalitions (sets of kept input columns) travel down the tree together
while ``x`` and ``b`` go the same way at a split; where they part, the coalitions keeping the split's column follow
``x`` and the others follow ``b`` (an in-place partition of their indices). Each coalition reaches exactly the leaf
its hybrid row ``(x_S, b_rest)`` reaches, so the leaf values added are the model's own, tree after tree in the
model's order. numba is imported only when this module is (see :mod:`explainers.tree_shap._compiled`).
"""
from __future__ import annotations

import numpy as np
from numba import njit  # imported only when a hybrid expectation is computed

__all__ = ["hybrid_margins", "forest_margins"]


@njit(cache=True, nogil=True)
def _left(v, threshold, missing_left):  # pragma: no cover (compiled)
    if np.isnan(v):
        return missing_left
    return v <= threshold


@njit(cache=True, nogil=True)
def hybrid_margins(feature, threshold, left, right, missing_left, value, roots, max_nodes, x, B, member,
                   out):  # pragma: no cover (compiled)
    """Add, for each coalition ``s`` and background row ``b``, every tree's leaf value of the hybrid row to
    ``out[b, s, :]`` (trees in order; ``out`` holds the model's base value on entry).

    ``feature`` (-1 at a leaf), ``threshold``, ``left``, ``right`` (absolute node numbers), ``missing_left``:
    the concatenated trees' nodes; ``value`` (n_nodes, n_outputs); ``roots``: each tree's first node;
    ``max_nodes``: the largest tree's node count (the walk's stack); ``x`` (n_columns,); ``B`` (n_background,
    n_columns); ``member`` (n_coalitions, n_columns) bool: column kept from ``x``.
    """
    m = member.shape[0]
    K = value.shape[1]
    idx = np.empty(m, np.int64)
    s_node = np.empty(max_nodes + 1, np.int64)
    s_lo = np.empty(max_nodes + 1, np.int64)
    s_hi = np.empty(max_nodes + 1, np.int64)
    for b in range(B.shape[0]):
        for t in range(roots.shape[0]):
            for i in range(m):
                idx[i] = i
            s_node[0] = roots[t]
            s_lo[0] = 0
            s_hi[0] = m
            top = 1
            while top > 0:
                top -= 1
                n = s_node[top]
                lo = s_lo[top]
                hi = s_hi[top]
                while feature[n] >= 0:
                    f = feature[n]
                    gx = _left(x[f], threshold[n], missing_left[n])
                    gb = _left(B[b, f], threshold[n], missing_left[n])
                    if gx == gb:
                        n = left[n] if gx else right[n]
                        continue
                    i = lo
                    j = hi - 1
                    while i <= j:  # coalitions keeping column f first
                        if member[idx[i], f]:
                            i += 1
                        else:
                            tmp = idx[i]
                            idx[i] = idx[j]
                            idx[j] = tmp
                            j -= 1
                    x_side = left[n] if gx else right[n]
                    b_side = right[n] if gx else left[n]
                    if i == lo:
                        n = b_side
                    elif i == hi:
                        n = x_side
                    else:
                        s_node[top] = b_side
                        s_lo[top] = i
                        s_hi[top] = hi
                        top += 1
                        n = x_side
                        hi = i
                for q in range(lo, hi):
                    s = idx[q]
                    for k in range(K):
                        out[b, s, k] += value[n, k]
    return out


@njit(cache=True, nogil=True)
def forest_margins(feature, threshold, left, right, missing_left, value, roots, X, out):  # pragma: no cover (compiled)
    """Add every tree's leaf value for each row of ``X`` to ``out[row, :]`` (trees in order; ``out`` holds the base
    value on entry): the model's raw prediction, summed as scikit-learn sums it."""
    K = value.shape[1]
    for r in range(X.shape[0]):
        for t in range(roots.shape[0]):
            n = roots[t]
            while feature[n] >= 0:
                n = left[n] if _left(X[r, feature[n]], threshold[n], missing_left[n]) else right[n]
            for k in range(K):
                out[r, k] += value[n, k]
    return out
