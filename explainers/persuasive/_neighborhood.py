"""The local neighbourhood of the persuasive layer's restricted R² and its fits (docs/methods.md, "Persuasive
measures"): a Gaussian neighbourhood with LIME's kernel, the weighted least-squares R² of a feature subset, a wide
table's R² of 1 shown without the solve, and a top-k curve's nested sets from one QR."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._lime_fits import one_blas_thread
from ._masking import PredictFn

__all__ = ["Neighborhood", "make_neighborhood", "restricted_r2", "nested_r2", "INTERPOLATION_MARGIN"]


@dataclass(frozen=True)
class Neighborhood:
    """A seeded perturbation sample around one row, for restricted local R².

    Parameters
    ----------
    Z : ndarray of shape (n_samples, n_features)
        Standardised offsets from the row (interpretable representation).
    y : ndarray of shape (n_samples,)
        Explained output at each perturbed row.
    w : ndarray of shape (n_samples,)
        LIME's exponential kernel weights ``sqrt(exp(-D^2 / kernel_width^2))``.
    """

    Z: np.ndarray
    y: np.ndarray
    w: np.ndarray


def make_neighborhood(predict_fn: PredictFn, x, scale, *, num_samples: int = 1000, seed: int = 0,
                      kernel_width: float | None = None, categorical=None) -> Neighborhood:
    """Gaussian neighborhood ``x + z * scale`` (``z ~ N(0, I)``), weighted as LIME does.

    Parameters
    ----------
    x, scale : ndarray of shape (n_features,)
        The row and per-feature standard deviations (training data); zero or
        missing scales are set to 1.
    num_samples : int, default=1000
    seed : int, default=0
    kernel_width : float, default=0.75 * sqrt(n_features)
    categorical : mapping of int to ndarray, optional
        For categorical columns (codes), the training values to draw from; their
        column of ``Z`` is 1 where the draw differs from ``x`` (LIME's binary
        representation), 0 where it is the same.
    """
    x = np.asarray(x, float)
    scale = np.asarray(scale, float)
    scale = np.where(np.isfinite(scale) & (scale > 0), scale, 1.0)
    rng = np.random.default_rng(seed)
    Z = rng.normal(size=(num_samples, x.size))
    Z[0] = 0.0
    samples = x + Z * scale
    for j, pool in (categorical or {}).items():
        draw = rng.choice(np.asarray(pool, float), size=num_samples)
        draw[0] = x[j]
        samples[:, j] = draw
        Z[:, j] = (draw != x[j]).astype(float)
    width = kernel_width or 0.75 * np.sqrt(x.size)
    dist = np.sqrt((Z ** 2).sum(axis=1))
    return Neighborhood(Z, np.asarray(predict_fn(samples), float), np.sqrt(np.exp(-dist ** 2 / width ** 2)))


def restricted_r2(nb: Neighborhood, features) -> float:
    """Weighted R² of a linear fit (with intercept) of ``nb.y`` on the columns ``features`` of ``nb.Z``.

    Solved as weighted least squares (minimum norm, so collinear columns are
    fine; memory linear in the columns). 0 for an empty set; the full-feature value minus this is
    ΔR² of docs/methods.md, "Persuasive measures".
    """
    features = np.asarray(list(features), dtype=int)
    d = nb.Z.shape[1]
    if features.size == d and np.array_equal(np.unique(features), np.arange(d)):
        return _full_r2(nb)  # every column (a parent explanation shows them all): one fit per neighbourhood
    return _fit_r2(nb, features)


def _fit_r2(nb: Neighborhood, features: np.ndarray) -> float:
    """:func:`restricted_r2` computed."""
    w = nb.w
    mean = np.average(nb.y, weights=w)
    tss = float(np.sum(w * (nb.y - mean) ** 2))
    if features.size == 0 or tss == 0:
        return 0.0
    root = np.sqrt(w)
    if features.size + 1 >= len(nb.y) and _interpolates(nb.Z, features, root):
        return 1.0  # as many columns as rows, independent: the least squares fit passes through every sample
    A = np.column_stack([np.ones(len(nb.y)), nb.Z[:, features]])
    # least squares on the weighted rows (minimum-norm, so collinear columns are fine): memory n x p, never the
    # p x p normal equations (a 10,001 x 10,001 matrix and its SVD on a 10,000-column table); on one BLAS thread:
    # two threads' spinning made one 500 x 31 fit 30-120 ms instead of 2-3 on a loaded 2-core machine
    with one_blas_thread():
        coef = np.linalg.lstsq(A * root[:, None], nb.y * root, rcond=None)[0]
    rss = float(np.sum(w * (nb.y - A @ coef) ** 2))
    return 1.0 - rss / tss


INTERPOLATION_MARGIN = 1e-6
""":func:`_interpolates` says yes only when the smallest singular value it bounds is at least this share of the
largest: six orders above the cut of ``numpy.linalg.lstsq`` (machine epsilon x the larger dimension, about 2e-12
at 10,000 columns), where the bound's own rounding (machine epsilon x the largest) cannot reach."""


def _interpolates(Z: np.ndarray, features: np.ndarray, root: np.ndarray) -> bool:
    """Whether the weighted least squares of :func:`_fit_r2` on ``features`` (with an intercept) fits every row exactly.

    With ``n`` rows and at least ``n`` columns ``A = diag(root) [1, Z_S]``, the minimum-norm least squares solution
    interpolates when ``A`` has rank ``n``: then ``A A⁺ = I`` and the residual, hence ``1 - R²``, is 0. Rank ``n``
    with room to spare is shown on the first ``2n - 1`` of the columns alone, ``B``: ``A Aᵀ = B Bᵀ + (the rest's)
    Gram ⪰ B Bᵀ``, so ``σ_min(A)² >= λ_min(B Bᵀ)``, and ``σ_max(A)² <= ||A||_F²``; the test asks
    ``λ_min(B Bᵀ) >= (INTERPOLATION_MARGIN ||A||_F)²``. Costs ``O(n³)`` instead of the ``O(n² p)`` of the solve
    (10,001 columns x 500 rows: the Persuasive step's slowest part on a wide table). False means "not shown";
    the caller then solves.
    """
    n = len(root)
    B = np.column_stack([root, Z[:, features[:2 * n - 1]] * root[:, None]])
    with one_blas_thread():
        low = float(np.linalg.eigvalsh(B @ B.T)[0])
    every = features.size == Z.shape[1] and np.array_equal(features, np.arange(Z.shape[1]))
    ZS = Z if every else Z[:, features]  # the full explanation's case: no copy
    frob = float(np.sum(root ** 2 * (1.0 + np.einsum("ij,ij->i", ZS, ZS))))
    return low >= INTERPOLATION_MARGIN ** 2 * frob


def _full_r2(nb: Neighborhood) -> float:
    """:func:`restricted_r2` on every column, computed once per neighborhood (the same for every view of the row;
    on 10,000 columns one fit takes seconds)."""
    if "_r2_full" not in nb.__dict__:
        object.__setattr__(nb, "_r2_full", _fit_r2(nb, np.arange(nb.Z.shape[1])))
    return nb.__dict__["_r2_full"]


def nested_r2(nb: Neighborhood, sets) -> list[float] | None:
    """:func:`restricted_r2` of each of ``sets`` when each holds the one before it (a top-k curve's), from one QR.

    The weighted design's columns are taken in the order the sets add them, after the intercept, and factored once
    (Householder QR, no pivoting): the least-squares fit on the first ``p`` columns is the projection on the first
    ``p`` columns of ``Q``, so its residual sum of squares is ``‖r‖² + Σ_{i ≥ p} (Qᵀy)_i²`` (``r`` the residual of
    every column), a sum of squares with no cancellation. The same R² as :func:`restricted_r2` (to rounding:
    ``tests/explainers/test_persuasive_measures.py`` checks 1e-12 on real rows) for one factorisation instead of one
    least-squares fit a set: on the bundled sample a curve's 31 fits were a tenth of a Persuasive what-if edit.

    Returns None when the sets are not nested or a column adds nothing new to those before it (collinear, or
    constant within the neighbourhood): :func:`restricted_r2` then fits each set as before (minimum norm).
    """
    d = nb.Z.shape[1]
    sets = [np.asarray(sorted(set(int(j) for j in S)), dtype=int) for S in sets]
    order, seen, sizes = [], set(), []
    for S in sets:
        if not seen <= set(S.tolist()):
            return None
        order += [j for j in S.tolist() if j not in seen]
        seen |= set(S.tolist())
        sizes.append(len(seen))
    w = nb.w
    mean = np.average(nb.y, weights=w)
    tss = float(np.sum(w * (nb.y - mean) ** 2))
    if tss == 0 or len(order) + 1 > len(nb.y):
        return None
    root = np.sqrt(w)
    A = np.column_stack([root, nb.Z[:, order] * root[:, None]])
    yw = nb.y * root
    with one_blas_thread():
        q, r = np.linalg.qr(A)
    diag = np.abs(np.diag(r))
    if diag.size and not np.all(diag > 1e-9 * max(float(diag.max()), 1e-300) * len(nb.y)):
        return None
    c = q.T @ yw
    tail = float(np.sum((yw - q @ c) ** 2))  # what no column explains
    after = np.concatenate([np.cumsum((c ** 2)[::-1])[::-1], [0.0]])  # after[p] = Σ_{i ≥ p} c_i²
    out = []
    for S, size in zip(sets, sizes):
        if S.size == 0:
            out.append(0.0)
        elif S.size == d:
            out.append(_full_r2(nb))  # every column: the one fit every view of the row shares
        else:
            out.append(1.0 - (tail + float(after[1 + size])) / tss)
    return out
