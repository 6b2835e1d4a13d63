"""What LIME's fits are judged by, for tabular LIME (:class:`explainers.lime_explainer.LimeExplainer`) and text
LIME (:func:`explainers.text.lime_text`) alike (docs/methods.md, "LIME"): the sampling error of the weights,
from ``repeats`` seeded fits whose neighborhood doubles until their spread is small
(:func:`repeat_until_converged`), the weighted R² of a surrogate (:func:`weighted_r2`), and tabular LIME's ridge
surrogate in closed form (:func:`ridge_fit`). Ribeiro, Singh, Guestrin 2016, "Why Should I Trust You?".
"""
from __future__ import annotations

import functools
import time
from dataclasses import dataclass

import numpy as np

__all__ = ["RepeatedFits", "repeat_until_converged", "next_factor", "ridge_fit", "weighted_r2", "one_blas_thread",
           "unidentified_note",
           "REPEATS", "REL_TOLERANCE", "TIME_BUDGET_S", "MAX_SAMPLES"]

REPEATS = 5
"""Independent LIME fits per explanation (their spread gives the standard error)."""
REL_TOLERANCE = 0.05
"""Target: largest standard error at most this share of the largest |weight|."""
TIME_BUDGET_S = 1.0
MAX_SAMPLES = 64_000


def weighted_r2(y: np.ndarray, y_hat: np.ndarray, weights: np.ndarray) -> float:
    """Weighted coefficient of determination (docs/methods.md, "LIME").

    ``1 - Σ w (y - ŷ)² / Σ w (y - ȳ_w)²`` with ``ȳ_w`` the weighted mean.

    Parameters
    ----------
    y, y_hat, weights : ndarray of shape (n_samples,)

    Returns
    -------
    r2 : float, at most 1; ``nan`` if ``y`` is constant under the weights.
    """
    y, y_hat, w = (np.asarray(a, dtype=float) for a in (y, y_hat, weights))
    mean = np.sum(w * y) / np.sum(w)
    denom = np.sum(w * (y - mean) ** 2)
    if denom == 0:
        return float("nan")
    return float(1 - np.sum(w * (y - y_hat) ** 2) / denom)


def one_blas_thread():
    """A context in which BLAS runs on one thread (LIME's ridge fits, the persuasive layer's restricted R²: BLAS
    threads spinning against the model's OpenMP or other processes cost 10-100x), through one
    :class:`threadpoolctl.ThreadpoolController` a process. ``threadpool_limits`` makes a controller each time,
    which lists the loaded libraries from ``/proc/self/maps``: about 18 ms of every LIME round on Adult's one-hot
    pipeline, 6 % of its row (issue 23)."""
    return _controller().limit(limits=1, user_api="blas")


@functools.cache
def _controller():
    import scipy.linalg  # noqa: F401  (ridge_fit's BLAS is loaded before the libraries are listed)
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()


def ridge_fit(Z: np.ndarray, y: np.ndarray, weights: np.ndarray, alpha: float = 1.0):
    """LIME's surrogate: weighted ridge with an unpenalised intercept, as ``sklearn.linear_model.Ridge(alpha=1)``.

    What ``lime.lime_base.LimeBase.explain_instance_with_data`` fits (Ribeiro et al. 2016; every feature
    kept), computed as scikit-learn's ``cholesky`` solver does: centre ``Z`` and ``y`` on their weighted
    means, scale rows by ``sqrt(weights)``, solve ``(Zᵀ Z + alpha I) coef = Zᵀ y``. With fewer samples than
    features (a wide table) the same coefficients come from the samples' side, as scikit-learn's ``cholesky``
    solver does there too: ``coef = Zᵀ (Z Zᵀ + alpha I)⁻¹ y`` (an n x n system instead of d x d: at 10,000
    features and 1,000 samples, 8 MB and about 10¹⁰ operations instead of 800 MB and 10¹²).

    Parameters
    ----------
    Z : ndarray of shape (n_samples, n_features)
    y, weights : ndarray of shape (n_samples,)
    alpha : float, default=1.0

    Returns
    -------
    coef : ndarray of shape (n_features,)
    intercept : float
    score : float
        Weighted in-sample R² (lime's ``score``, :func:`weighted_r2`).
    local_pred : float
        The surrogate at ``Z[0]`` (lime's ``local_pred``; the explained row).
    """
    from scipy.linalg import solve

    w = np.asarray(weights, dtype=float)
    y_mean = float(np.average(y, weights=w))
    root = np.sqrt(w)[:, None]
    if Z.shape[0] < Z.shape[1] < _EXACT_FLOAT32 and np.array_equal(Z.astype(bool), Z):  # LIME's 0/1 indicators
        z_mean = (w @ Z) / w.sum()  # np.average would hold a weighted copy of Z
        coef = _wide_binary_coef(Z, z_mean, root[:, 0], (y - y_mean) * root[:, 0], alpha)
        intercept = y_mean - float(z_mean @ coef)
        fitted = Z @ coef + intercept
        return coef, intercept, weighted_r2(y, fitted, w), float(fitted[0])
    z_mean = np.average(Z, axis=0, weights=w)
    Zs, ys = (Z - z_mean) * root, (y - y_mean) * root[:, 0]
    if Zs.shape[0] < Zs.shape[1]:  # (Zᵀ Z + αI)⁻¹ Zᵀ = Zᵀ (Z Zᵀ + αI)⁻¹: the smaller system
        gram = Zs @ Zs.T
        gram.flat[::gram.shape[0] + 1] += alpha
        coef = Zs.T @ solve(gram, ys, assume_a="pos", overwrite_a=True)
    else:
        gram = Zs.T @ Zs
        gram.flat[::gram.shape[0] + 1] += alpha
        coef = solve(gram, Zs.T @ ys, assume_a="pos", overwrite_a=True)
    intercept = y_mean - float(z_mean @ coef)
    fitted = Z @ coef + intercept
    return coef, intercept, weighted_r2(y, fitted, w), float(fitted[0])


_EXACT_FLOAT32 = 2 ** 24
"""Integers up to this are exact in float32: a count of shared indicators over fewer columns is exact in any order."""


def _wide_binary_coef(Z: np.ndarray, z_mean: np.ndarray, root: np.ndarray, ys: np.ndarray, alpha: float) -> np.ndarray:
    """:func:`ridge_fit`'s coefficients ``Zsᵀ (Zs Zsᵀ + αI)⁻¹ ys`` for a 0/1 ``Z`` with fewer rows than columns, where
    ``Zs = diag(root) (Z - 1 z_meanᵀ)``, without forming ``Zs``.

    ``Zs Zsᵀ = diag(root) (G - v 1ᵀ - 1 vᵀ + c 11ᵀ) diag(root)`` with ``G = Z Zᵀ`` (each entry a count of shared
    indicators: an integer below 2²⁴, so float32 products and sums give it exactly, in half the time and memory of
    float64), ``v = Z z_mean`` and ``c = z_meanᵀ z_mean``; then ``Zsᵀ s = Zᵀ s - z_mean Σ s`` for
    ``s = root ∘ (Zs Zsᵀ + αI)⁻¹ ys``. The same coefficients as forming ``Zs``, to rounding (the terms of each
    entry are at most the number of columns either way).
    """
    from scipy.linalg import solve

    Z32 = Z.astype(np.float32)
    G = (Z32 @ Z32.T).astype(float)  # a symmetric product: BLAS's syrk
    del Z32
    v = Z @ z_mean
    gram = G - v[:, None] - v[None, :] + float(z_mean @ z_mean)
    gram *= root[:, None] * root[None, :]
    gram.flat[::gram.shape[0] + 1] += alpha
    s = root * solve(gram, ys, assume_a="pos", overwrite_a=True)
    return Z.T @ s - z_mean * s.sum()


@dataclass(frozen=True)
class RepeatedFits:
    """The last round of :func:`repeat_until_converged`: ``repeats`` LIME fits and what they say together.

    Parameters
    ----------
    fits : list
        What ``fit`` returned for each seed of the last round (its first item the weights).
    values : ndarray of shape (n_features,)
        Mean weight over the fits.
    standard_error : ndarray of shape (n_features,)
        Sample standard deviation of the weights over the fits divided by ``sqrt(repeats)``.
    num_samples : int
        Neighborhood size per fit in the last round.
    total_samples : int
        Neighborhood rows drawn over every round.
    converged : bool
        ``max(standard_error[judged]) <= tolerance``.
    tolerance : float
        ``rel_tolerance * max(|values[judged]|)``, units of ``values``.
    seconds : float
    stopped_by : {"tolerance", "fixed size", "time budget", "sample cap"}
    judged : ndarray of bool, shape (n_features,), optional
        The features ``converged`` and ``tolerance`` were judged on (``judge`` of the last round; every
        feature when no ``judge`` was given or it kept none). ``None`` means every feature.
    """

    fits: list
    values: np.ndarray
    standard_error: np.ndarray
    num_samples: int
    total_samples: int
    converged: bool
    tolerance: float
    seconds: float
    stopped_by: str
    judged: np.ndarray | None = None


def repeat_until_converged(fit, num_samples: int, *, seed: int, repeats: int = REPEATS,
                           rel_tolerance: float = REL_TOLERANCE, time_budget_s: float = TIME_BUDGET_S,
                           max_samples: int = MAX_SAMPLES, fixed: bool = False, fit_round=None,
                           jump: bool = False, judge=None) -> RepeatedFits:
    """LIME's sampling error: ``repeats`` seeded fits, the neighborhood doubled until their spread is small.

    The one loop behind tabular LIME (:class:`LimeExplainer`) and text LIME
    (:func:`explainers.text.lime_text`), docs/methods.md, "LIME". Each round fits ``fit(s, n)`` for
    seeds ``s = seed .. seed + repeats - 1`` (independent neighborhoods of ``n`` samples); the mean
    weight is the estimate and the spread of the fits over ``sqrt(repeats)`` its standard error.
    ``n`` doubles until the largest standard error is at most ``rel_tolerance`` times the largest
    ``|mean weight|``, unless ``fixed``, the next round would pass ``max_samples``, or its predicted
    time (twice the last round's) would end after ``time_budget_s`` seconds from the start.

    Parameters
    ----------
    fit : callable(seed, num_samples) -> tuple
        One LIME fit; the first item is its weights, ndarray of shape (n_features,).
    num_samples : int
        First neighborhood size per fit.
    seed : int
    repeats : int, default=5
        At least 2.
    rel_tolerance : float, default=0.05
    time_budget_s : float, default=1.0
    max_samples : int, default=64000
    fixed : bool, default=False
        One round of ``num_samples`` (``converged`` still says whether the tolerance was met).
    fit_round : callable(seeds, num_samples) -> list, optional
        A round's fits at once (one per seed, as ``fit`` would return them), e.g. with one batched model call;
        when given, ``fit`` is not called.
    jump : bool, default=False
        Skip sizes that cannot meet the tolerance: the next size is ``n · 2^k``, ``k ≥ 1`` the least with
        ``2^k ≥ (max standard error / tolerance)²`` (a standard error falls as ``1/sqrt(n)``), instead of
        ``2n``; the sizes stay on the doubling ladder and the time budget is judged for that size.
    judge : callable(fits, num_samples) -> ndarray of bool, optional
        Which features the round is judged on: the tolerance is ``rel_tolerance`` times the largest
        ``|mean weight|`` among them and convergence (and ``jump``'s growth) asks only their standard errors
        to be within it. Tabular LIME leaves out features its neighbourhood cannot identify
        (:meth:`explainers.lime_explainer.LimeExplainer.explain`). Default, or a mask with no feature kept:
        every feature. The estimate (mean and spread of the fits) is the same either way.

    Returns
    -------
    RepeatedFits

    Raises
    ------
    ValueError
        If ``repeats < 2`` (a spread needs two fits).
    """
    if int(repeats) < 2:
        raise ValueError(f"repeats must be at least 2 (a standard error needs two fits), got {repeats}")
    n, t0, total = int(num_samples), time.perf_counter(), 0
    while True:
        t_round = time.perf_counter()
        seeds = [seed + i for i in range(repeats)]
        fits = list(fit_round(seeds, n)) if fit_round is not None else [fit(s, n) for s in seeds]
        total += n * repeats
        coefs = np.array([np.asarray(f[0], dtype=float) for f in fits])
        values = coefs.mean(axis=0)
        se = coefs.std(axis=0, ddof=1) / np.sqrt(repeats)
        judged = np.ones(values.shape, bool) if judge is None else np.asarray(judge(fits, n), bool)
        if not judged.any():
            judged = np.ones(values.shape, bool)
        tolerance = rel_tolerance * float(np.max(np.abs(values[judged])))
        worst = float(np.max(se[judged]))
        converged = bool(worst <= tolerance)
        now = time.perf_counter()
        grow = next_factor(worst, tolerance) if jump else 2
        while jump and grow > 2 and grow * n > max_samples:
            grow //= 2
        stop = ("tolerance" if converged else "fixed size" if fixed else
                "sample cap" if grow * n > max_samples else
                "time budget" if (now - t0) + grow * (now - t_round) > time_budget_s else "")
        if stop:
            return RepeatedFits(fits, values, se, n, total, converged, tolerance, time.perf_counter() - t0, stop,
                                judged if judge is not None else None)
        n *= grow


def next_factor(max_se: float, tolerance: float) -> int:
    """``2^k``, ``k ≥ 1`` the least with ``2^k ≥ (max_se / tolerance)²``: the growth a standard error falling
    as ``1/sqrt(n)`` needs to reach the tolerance (at most ``2^10``)."""
    if not tolerance > 0 or not np.isfinite(max_se):
        return 2
    need = (max_se / tolerance) ** 2
    return int(2 ** int(min(10, max(1, np.ceil(np.log2(max(need, 1.0)))))))


def unidentified_note(names: tuple[str, ...], n_features: int, min_changes: int, n: int) -> str:
    """Tabular LIME's source-line words for the features left out of the convergence judgment (``names``, largest
    ``|weight|`` first: those a bar chart may draw), of ``n_features``, at ``n`` samples a fit; "" when none is."""
    if not names:
        return ""
    shown = ", ".join(names[:4]) + (f" and {len(names) - 4} more" if len(names) > 4 else "")
    judged = ("they are not judged against the tolerance" if len(names) < n_features else
              "no feature is, so every one is judged")
    return (f"; {len(names)} of {n_features} features not identified in this neighbourhood "
            f"(indicator changed in fewer than {min_changes} of {n} samples a fit; largest |weight| first: "
            f"{shown}): weights and standard errors shown, {judged}")
