"""Model-agnostic permutation SHAP with antithetic permutations, in plain numpy.

Štrumbelj & Kononenko 2014 ("Explaining prediction models and individual
predictions with feature contributions", KAIS 41) estimate Shapley values by
walking random feature orderings; shap's ``PermutationExplainer`` does the same
with each ordering followed by its reverse (antithetic). Every walk telescopes
from ``E_bg[f]`` to ``f(x)``, so the estimate is *exactly* additive. The value
function is the interventional one: features not yet added take the values of
each background row (independent masker), averaged over the background.

Written here instead of calling shap because shap's version compiles numba
code on its first call in every process (10-40 s on two cores).
"""
from __future__ import annotations

import numpy as np

__all__ = ["permutation_shap", "n_permutations"]


def n_permutations(n_features: int, budget: int = 500) -> int:
    """Even number of orderings (2 to 10) so that about ``budget`` coalitions are evaluated per row."""
    return int(max(2, min(10, budget // (n_features + 1))) // 2 * 2)


def permutation_shap(f, x: np.ndarray, background: np.ndarray, *, n_perm: int, seed: int = 0,
                     max_rows: int = 20_000) -> tuple[np.ndarray, np.ndarray]:
    """Shapley values of one row by antithetic permutation sampling.

    Parameters
    ----------
    f : callable
        Maps an ndarray of shape (n, n_features) to outputs of shape (n, n_outputs).
    x : ndarray of shape (n_features,)
    background : ndarray of shape (n_background, n_features)
    n_perm : int
        Number of orderings (even: each random ordering and its reverse).
    seed : int, default=0
    max_rows : int, default=20000
        Largest batch ``f`` is called on (coalitions x background rows); a walk over a wide table is
        evaluated in several calls, so memory stays near ``max_rows * n_features * 8`` bytes. The
        values do not depend on it.

    Returns
    -------
    values : ndarray of shape (n_features, n_outputs)
        Output units of ``f``; ``values.sum(0) + base == f(x)`` up to float rounding.
    base : ndarray of shape (n_outputs,)
        Mean of ``f`` over the background.

    Notes
    -----
    Each ordering costs ``(n_features + 1) * n_background`` rows of ``f``, in one call or in
    chunks of at most ``max_rows`` rows (whole coalitions).
    """
    x = np.asarray(x, dtype=float)
    bg = np.asarray(background, dtype=float)
    d, m = x.size, len(bg)
    rng = np.random.default_rng(seed)
    values, base = None, None
    orders = []
    for _ in range(max(1, n_perm // 2)):
        p = rng.permutation(d)
        orders += [p, p[::-1]]
    step = max(1, max_rows // m)  # coalitions per call
    for order in orders:
        masks = np.zeros((d + 1, d), dtype=bool)
        for i, j in enumerate(order):
            masks[i + 1:, j] = True
        parts = []
        for a in range(0, d + 1, step):
            block = masks[a:a + step]
            rows = np.where(block[:, None, :], x[None, None, :], bg[None, :, :]).reshape(len(block) * m, d)
            parts.append(np.asarray(f(rows), dtype=float).reshape(len(block), m, -1).mean(axis=1))
        out = np.concatenate(parts)
        if values is None:
            values, base = np.zeros((d, out.shape[1])), out[0]
        values[order] += np.diff(out, axis=0)
    return values / len(orders), base
