"""Model-agnostic permutation SHAP that runs until a stated accuracy, in plain numpy.

Štrumbelj & Kononenko 2014 ("Explaining prediction models and individual
predictions with feature contributions", KAIS 41) estimate Shapley values by
walking random feature orderings; shap's ``PermutationExplainer`` does the same
with each ordering followed by its reverse (antithetic, Mitchell et al. 2022,
"Sampling permutations for Shapley value estimation", JMLR 23). Every walk
telescopes from ``E_bg[f]`` to ``f(x)``, so the estimate is *exactly* additive
however many orderings are taken. The value function is the interventional one:
features not yet added take the values of each background row (independent
masker), averaged over the background.

Orderings are added in rounds of antithetic pairs. The pairs are independent
draws, so the standard error of each feature's mean is the spread of the pair
estimates over the square root of their number (the central limit theorem, as
in Štrumbelj & Kononenko's own error bounds). Each row draws its orderings from
its own stream, so the errors of a table's rows are independent too. All the
coalitions of a round go to the model in batches spanning many orderings and
background rows, and a model row the walk meets again (a background row equal to
``x`` on the features being added; a coalition met in an earlier ordering) is
evaluated once (:class:`_CoalitionValues`): the values are those of the full
walk, for a fraction of the model's work. Sampling stops when the largest
standard error is at most the tolerance ``max(rel_tol * |f(x) - base|, abs_tol)``
(output units), or when the budget (``max_orderings``, optionally
``time_budget_s``) is used up; the result says which.

Written here instead of calling shap because shap's version compiles numba
code on its first call in every process (10-40 s on two cores).
"""
from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass

import numpy as np
import pandas as pd

__all__ = ["permutation_shap", "permutation_shap_rows", "SampledShapley", "REL_TOL", "ABS_TOL_SCALE",
           "MIN_ORDERINGS", "MAX_ORDERINGS"]

REL_TOL = 0.0025
"""Default tolerance: largest standard error at most 0.25 % of ``|f(x) - base|`` ..."""
ABS_TOL_SCALE = 0.001
"""... or, if larger, 0.1 % of the standard deviation of ``f`` over the background (a floor for rows near the base)."""
MIN_ORDERINGS = 16
"""Orderings (8 antithetic pairs) before the spread of the pairs is trusted as a standard error."""
MAX_ORDERINGS = 512
"""Default budget of orderings per row."""


@dataclass(frozen=True)
class SampledShapley:
    """Permutation SHAP of one row with its standard errors.

    Parameters
    ----------
    values : ndarray of shape (n_features, n_outputs)
        Output units of ``f``; ``values.sum(0) + base == f(x)`` up to float rounding.
    base : ndarray of shape (n_outputs,)
        Mean of ``f`` over the background.
    standard_error : ndarray of shape (n_features, n_outputs)
        Standard error of each value (spread of the antithetic pairs / sqrt(pairs)), output units;
        NaN (unknown, not zero) when fewer than two pairs were walked.
    orderings : int
        Orderings walked: twice the number of antithetic pairs, or 1 for a budget of one ordering.
    converged : bool
        True when every standard error is at most ``tolerance``.
    tolerance : ndarray of shape (n_outputs,)
        ``max(rel_tol * |f(x) - base|, abs_tol)`` per output, output units.
    stopped_by : {"tolerance", "max_orderings", "time_budget"}
    """

    values: np.ndarray
    base: np.ndarray
    standard_error: np.ndarray
    orderings: int
    converged: bool
    tolerance: np.ndarray
    stopped_by: str


_KEY_BITS = 62
"""A coalition's key (its features' bits, times the background size, plus the background row) fits in int64."""
KEYED_MAX_SHARE = 0.5
"""Rows are keyed when at most this share of the walk's rows can be distinct (hashing a key costs about as
much as a cheap model's row: a 30-tree GradientBoosting on 30 columns took 1.5x longer keyed at 35 % repeats)."""


class _CoalitionValues:
    """``v(S)`` of the coalitions of a walk: the mean of ``f`` over the background with ``S`` taken from ``x``.

    A background row ``r`` equal to ``x`` on feature ``j`` gives the same model row with or without ``j``
    in ``S``: the row of ``(S, r)`` is the row of ``(S | E_r, r)``, ``E_r = {j : bg[r, j] == x[j]}``. The
    rows of a round are keyed by ``(S | E_r, r)`` and each distinct one is evaluated once, in batches of
    at most ``max_rows`` rows over many orderings and background rows, and remembered for later rounds
    (one-hot or categorical tables repeat most rows: Adult's 14 columns share half their values with a
    typical background row). The values are those of evaluating every row; only the model's work shrinks.
    Background row ``r`` can give at most ``min(2^|D_r|, orderings * (|D_r| - 1) + 2)`` distinct rows
    (``D_r`` the features where it differs from ``x``); when their sum exceeds :data:`KEYED_MAX_SHARE` of
    the walk's rows at the budget (continuous columns, where keying costs more than the model calls it
    saves), or the table is too wide for an int64 key (``n_features + log2(n_background) > 62``), every
    row of the walk is evaluated, still in batches.
    """

    def __init__(self, f, x, bg, max_rows, k, orderings):
        self.f, self.x, self.bg, self.max_rows, self.k = f, x, bg, max(1, int(max_rows)), k
        m, d = bg.shape
        differ = (bg != x).sum(axis=1)
        distinct = np.minimum(np.exp2(differ), orderings * np.maximum(differ - 1, 0) + 2).sum()
        self.keyed = d + max(m - 1, 1).bit_length() <= _KEY_BITS and \
            distinct <= KEYED_MAX_SHARE * orderings * (d - 1) * m
        self.bits = np.left_shift(np.int64(1), np.arange(d, dtype=np.int64))
        self.same = (bg == x).astype(np.int64) @ self.bits  # E_r as bits, one per background row
        self.known, self.values = pd.Index(np.empty(0, np.int64)), np.empty((0, k))

    def _eval(self, rows):
        return np.asarray(self.f(rows), dtype=float).reshape(len(rows), -1)

    def _eval_at(self, masks, flat):
        """``f`` of the rows ``(masks[i // m], bg[i % m])`` for ``i`` in ``flat``, ``max_rows`` at a time."""
        m = len(self.bg)
        parts = [np.empty((0, self.k))]
        for a in range(0, len(flat), self.max_rows):
            block = flat[a:a + self.max_rows]
            parts.append(self._eval(np.where(masks[block // m], self.x, self.bg[block % m])))
        return np.concatenate(parts)

    def __call__(self, masks: np.ndarray) -> np.ndarray:
        """``v`` of each coalition (rows of the boolean ``masks``), shape (n_coalitions, n_outputs)."""
        m, d = self.bg.shape
        if not self.keyed:
            step = max(1, self.max_rows // m)
            return np.concatenate([self._eval(np.where(masks[a:a + step, None, :], self.x, self.bg).reshape(-1, d))
                                   .reshape(len(masks[a:a + step]), m, -1).mean(axis=1)
                                   for a in range(0, len(masks), step)])
        keys = (((masks.astype(np.int64) @ self.bits)[:, None] | self.same[None, :]) * m + np.arange(m)).ravel()
        codes, uniq = pd.factorize(keys)  # hashing, O(rows): sorting the keys cost as much as a cheap model
        at = np.empty(len(uniq), dtype=np.int64)
        at[codes] = np.arange(len(keys))  # one place each key occurs: its row is (masks[at // m], bg[at % m])
        where = self.known.get_indexer(uniq)
        fresh = where < 0
        if fresh.any():
            where[fresh] = len(self.known) + np.arange(int(fresh.sum()))
            self.values = np.concatenate([self.values, self._eval_at(masks, at[fresh])])
            self.known = self.known.append(pd.Index(uniq[fresh]))
        return self.values[where][codes].reshape(len(masks), m, -1).mean(axis=1)


def _contributions(v, perms, base, fx):
    """Each ordering's marginal contribution of every feature, shape (n_orderings, n_features, n_outputs).

    All coalitions of all ``perms`` go to ``v`` (:class:`_CoalitionValues`) at once, so the model is called
    on batches spanning many orderings and background rows.
    """
    n_ord, d = perms.shape
    ranks = np.empty_like(perms)
    np.put_along_axis(ranks, perms, np.arange(d)[None, :].repeat(n_ord, 0), axis=1)
    # intermediate coalitions 1..d-1 of every ordering (the empty and full ones are the same for all)
    masks = (ranks[:, None, :] < np.arange(1, d)[None, :, None]).reshape(n_ord * (d - 1), d)
    k = base.size
    out = np.concatenate([np.broadcast_to(base, (n_ord, 1, k)), v(masks).reshape(n_ord, d - 1, k),
                          np.broadcast_to(fx, (n_ord, 1, k))], axis=1)
    steps = np.diff(out, axis=1)  # by position in the ordering
    return np.take_along_axis(steps, ranks[:, :, None], axis=1)  # by feature


def _row_stream(seed: int, x: np.ndarray) -> np.random.Generator:
    """The orderings' random stream of row ``x``: a function of ``seed`` and the row's values.

    Every row gets its own orderings (one stream for all rows made every row's error come from the same
    orderings, so the errors of a table's rows were correlated and their intervals missed together),
    and a row gets the same orderings alone or inside a table.
    """
    digest = hashlib.blake2b((np.asarray(x, dtype=float) + 0.0).tobytes(), digest_size=16).digest()
    return np.random.default_rng([int(seed), *np.frombuffer(digest, dtype=np.uint32).tolist()])


def _standard_error(pairs):
    """Standard error of the mean of independent antithetic pairs; NaN (unknown) below two pairs."""
    n = len(pairs)
    if n < 2:
        return np.full(pairs.shape[1:], np.nan)
    return pairs.std(axis=0, ddof=1) / np.sqrt(n)


def permutation_shap(f, x: np.ndarray, background: np.ndarray, *, rel_tol: float = REL_TOL,
                     abs_tol: float | None = None, min_orderings: int = MIN_ORDERINGS,
                     max_orderings: int = MAX_ORDERINGS, time_budget_s: float | None = None, seed: int = 0,
                     max_rows: int = 20_000, judge: tuple[int, ...] | None = None) -> SampledShapley:
    """Shapley values of one row by antithetic permutation sampling, until the standard errors are small.

    Parameters
    ----------
    f : callable
        Maps an ndarray of shape (n, n_features) to outputs of shape (n, n_outputs).
    x : ndarray of shape (n_features,)
    background : ndarray of shape (n_background, n_features)
    rel_tol : float, default=0.0025
        Target: the largest standard error at most ``rel_tol * |f(x) - base|`` (per output) ...
    abs_tol : float, optional
        ... or at most this (output units) if larger. Default ``0.001 *`` the standard deviation of
        ``f`` over the background (so that rows whose prediction is the base do not run forever).
    min_orderings : int, default=16
        First round (rounded up to an even number); at least 4, at most the budget.
    max_orderings : int, default=512
        Budget of orderings; sampling stops there, unconverged (``converged=False``). Pairs are never
        split, so an odd budget walks one ordering fewer (41 -> 40); a budget of 1 (or less) walks one
        ordering, and a budget below two pairs (1-3) reports NaN standard errors.
    time_budget_s : float, optional
        Also stop after the round that passes this many seconds (the result then depends on the
        machine's speed; None keeps it a function of ``seed`` and ``x`` alone).
    seed : int, default=0
        With the row's values, seeds the orderings (:func:`_row_stream`): each row of a table is
        sampled independently, and the same row gets the same values alone or in a table.
    max_rows : int, default=20000
        Largest batch ``f`` is called on (coalitions x background rows); the values do not depend on it.
    judge : tuple of int, optional
        Outputs whose standard errors decide convergence (default all).

    Returns
    -------
    SampledShapley
        Values, base, standard errors, orderings walked, whether the tolerance was reached.

    Raises
    ------
    ValueError
        If ``x`` and ``background`` have different numbers of features or the background is empty.

    Notes
    -----
    Each ordering costs at most ``(n_features - 1) * n_background`` rows of ``f``, fewer when rows
    repeat (on Adult's 14 columns, 100 background rows, 512 orderings: about 35,000 rows instead of
    665,600). Rounds after the first add the orderings the current spread predicts are needed
    (standard error ~ 1/sqrt(pairs)), at least 4 and at most as many as already walked.
    """
    x = np.asarray(x, dtype=float).ravel()
    bg = np.asarray(background, dtype=float)
    if bg.ndim != 2 or bg.shape[1] != x.size or len(bg) == 0:
        raise ValueError(f"background of shape {bg.shape} does not match a row of {x.size} features")
    d = x.size
    rng = _row_stream(seed, x)
    f_bg = np.asarray(f(bg), dtype=float).reshape(len(bg), -1)
    base = f_bg.mean(axis=0)
    fx = np.asarray(f(x[None, :]), dtype=float).reshape(1, -1)[0]
    floor = ABS_TOL_SCALE * f_bg.std(axis=0) if abs_tol is None else np.full(base.shape, float(abs_tol))
    tol = np.maximum(rel_tol * np.abs(fx - base), np.maximum(floor, 1e-12))
    k = base.size
    judge = list(range(k)) if judge is None else list(judge)
    if d == 1:
        z = np.zeros((1, k))
        return SampledShapley((fx - base)[None, :], base, z, 1, True, tol, "tolerance")
    budget = max(1, int(max_orderings))
    v = _CoalitionValues(f, x, bg, max_rows, k, budget)
    cap = budget // 2  # antithetic pairs the budget holds; an odd budget leaves its last ordering unwalked
    if cap == 0:  # a budget of one ordering: its walk is an unbiased estimate, with no spread to measure
        contrib = _contributions(v, rng.permutation(d)[None, :], base, fx)
        return SampledShapley(contrib[0], base, np.full((d, k), np.nan), 1, False, tol, "max_orderings")
    pairs = np.zeros((0, d, k))
    start, stopped = time.monotonic(), "max_orderings"
    want = min(cap, max(2, (max(4, min_orderings) + 1) // 2))
    while True:
        fwd = np.stack([rng.permutation(d) for _ in range(want)])
        contrib = _contributions(v, np.concatenate([fwd, fwd[:, ::-1]]), base, fx)
        pairs = np.concatenate([pairs, (contrib[:want] + contrib[want:]) / 2])
        n = len(pairs)
        se = _standard_error(pairs)
        ratio = float((se[:, judge] / tol[judge]).max()) if n >= 2 else np.inf
        if ratio <= 1.0:
            stopped = "tolerance"
            break
        if n >= cap:
            break
        if time_budget_s is not None and time.monotonic() - start > time_budget_s:
            stopped = "time_budget"
            break
        need = int(np.ceil(n * min(ratio, 1e6) ** 2)) - n if np.isfinite(ratio) else n
        want = int(min(max(need, 4), n, cap - n))  # >= 1: n < cap
    values = pairs.mean(axis=0)
    return SampledShapley(values, base, se, 2 * len(pairs), stopped == "tolerance", tol, stopped)


def permutation_shap_rows(f, rows: np.ndarray, background: np.ndarray, *, rel_tol: float = REL_TOL,
                          max_orderings: int = MAX_ORDERINGS, time_budget_s: float | None = None, seed: int = 0,
                          judge: tuple[int, ...] | None = None):
    """Permutation SHAP of each row: values, base, standard errors (n, d, k) and per-row sampling facts.

    :func:`permutation_shap` of every row of ``rows`` (shape (n, n_features)) with the same settings;
    the facts are ``orderings``, ``converged`` and ``tolerance``, one entry per row. Each row's orderings
    come from ``seed`` and its own values, so the rows' errors are independent (a table's 1.96-SE
    intervals cover at the nominal rate together, not all at once or not at all) and a row's values do
    not depend on the other rows.
    """
    res = [permutation_shap(f, row, background, rel_tol=rel_tol, max_orderings=max_orderings,
                            time_budget_s=time_budget_s, seed=seed, judge=judge) for row in rows]
    info = {"orderings": np.array([r.orderings for r in res]), "converged": np.array([r.converged for r in res]),
            "tolerance": np.array([r.tolerance for r in res])}
    return np.stack([r.values for r in res]), res[0].base, np.stack([r.standard_error for r in res]), info
