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

The Shapley value of the interventional game is the mean over background rows
``r`` of the values of each row's own game ``v_r(S) = f(x_S, r_{-S})``, whose
only players are the features ``D_r`` where ``r`` differs from ``x``. Each
background row walks its *own* orderings: one ordering shared by all rows made
the rows' contributions move together (on an Adult k-NN the mean over 100 rows
varied 13 to 80 times more than with independent orderings, for the same model
rows). A row whose ``2^|D_r|`` coalitions cost at most :data:`ENUMERATE_FACTOR`
times the distinct rows its walks are expected to meet is enumerated instead
(Shapley's formula on its own game: exact, no variance), as soon as that holds.

Orderings are added in rounds of antithetic pairs. A pair gives every walked
background row one ordering and its reverse; the pair's estimate is the mean
over background rows of those walks and of the enumerated rows' exact values.
The pairs are independent draws, so the standard error of each feature's mean
is the spread of the pair estimates over the square root of their number (the
central limit theorem, as in Štrumbelj & Kononenko's own error bounds); it is 0
once every row is enumerated. Each explained row draws its orderings from its
own stream, so the errors of a table's rows are independent too. All the
coalitions of a round go to the model in batches spanning many orderings and
background rows, and a model row met again (a background row equal to ``x`` on
the features being added; a coalition met in an earlier ordering; the same row
reached from another background row, ``x`` and the background rows themselves
included) is evaluated once (:mod:`explainers._permutation_game`). Sampling stops when the largest
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

from ._permutation_game import _KEY_BITS, KEYED_MAX_SHARE, _CoalitionValues, play_round, walk_rows  # noqa: F401

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
ENUMERATE_FACTOR = 2.0
"""A background row is enumerated once its ``2^|D_r|`` coalitions are at most this many times the distinct rows its
walks are expected to meet (:func:`walk_rows`) by the end of the round."""


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
        NaN (unknown, not zero) when fewer than two pairs were walked, 0 when every background row was
        enumerated (the values are then exact).
    orderings : int
        Orderings each background row walked or could have walked before it was enumerated: twice the number
        of antithetic pairs, or 1 for a budget of one ordering.
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


class _Game:
    """The rounds of one row: each background row walked with its own orderings, or enumerated once cheap enough.

    Background row ``r``'s game has ``|D_r|`` players; its walk meets at most ``orderings * (|D_r| - 1) + 2``
    distinct model rows and its enumeration exactly ``2^|D_r|``. Before each round, every row whose enumeration
    costs no more than its walk would after the round is enumerated (:func:`explainers._permutation_game.play_round`),
    and its exact values replace its walks in every pair: the pairs stay independent draws of the same
    estimator, and the rows' share of the variance is gone.
    """

    def __init__(self, v, rng, f_bg, fx, factor):
        self.v, self.rng, self.f_bg, self.fx, self.factor = v, rng, f_bg, fx, factor
        m, d = v.bg.shape
        self.walked = np.arange(m)
        self.exact = np.zeros((d, fx.size))  # sum over the enumerated rows of their Shapley values
        self.walks = np.zeros((0, m, d, fx.size))  # antithetic pair means, per background row
        self.orderings = 0

    def play(self, want: int, antithetic: bool = True) -> None:
        """Add ``want`` antithetic pairs (or one lone ordering) for every walked row."""
        m, d = self.v.bg.shape
        self.orderings += (2 if antithetic else 1) * want
        differ = self.v.differ[self.walked]
        cheap = np.exp2(differ) <= walk_rows(differ, self.orderings) * self.factor
        enumerate_, self.walked = self.walked[cheap], self.walked[~cheap]
        fwd = self.rng.permuted(np.broadcast_to(np.arange(d), (want, len(self.walked), d)), axis=2)
        perms = np.concatenate([fwd, fwd[:, :, ::-1]]) if antithetic else fwd
        contrib, phi = play_round(self.v, perms, self.walked, enumerate_, self.f_bg, self.fx)
        self.exact += phi.sum(axis=0)
        self.walks[:, enumerate_] = 0.0
        pair = (contrib[:want] + contrib[want:]) / 2 if antithetic else contrib
        new = np.zeros((want, m, d, self.fx.size))
        new[:, self.walked] = pair
        self.walks = np.concatenate([self.walks, new])

    def estimates(self) -> np.ndarray:
        """Each pair's estimate of the values: enumerated rows exact, walked rows by that pair; (pairs, d, k)."""
        return (self.exact[None] + self.walks.sum(axis=1)) / len(self.v.bg)


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
                     max_rows: int = 20_000, judge: tuple[int, ...] | None = None,
                     enumerate_rows: bool = True) -> SampledShapley:
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
        ordering, and a budget below two pairs (1-3) reports NaN standard errors (0 if every background
        row was enumerated).
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
    enumerate_rows : bool, default=True
        Enumerate a background row's game once that is cheaper than walking it (False: every row is walked,
        as the text path does, whose budget is stated in model evaluations).

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
    repeat; an enumerated background row costs ``2^|D_r| - 2`` once (on Adult's 14 columns, 100 background
    rows, 16 orderings: about 9,500 distinct rows instead of 20,800). Rounds after the first add the
    orderings the current spread predicts are needed (standard error ~ 1/sqrt(pairs)), at least 4 and at
    most as many as already walked.
    """
    x = np.asarray(x, dtype=float).ravel()
    bg = np.asarray(background, dtype=float)
    if bg.ndim != 2 or bg.shape[1] != x.size or len(bg) == 0:
        raise ValueError(f"background of shape {bg.shape} does not match a row of {x.size} features")
    d = x.size
    rng = _row_stream(seed, x)
    clock = time.process_time()
    f_bg = np.asarray(f(bg), dtype=float).reshape(len(bg), -1)
    row_cost = (time.process_time() - clock) / len(bg)  # decides only how rows are found again, never the values
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
    game = _Game(_CoalitionValues(f, x, bg, max_rows, k, budget, row_cost, seen=(f_bg, fx)), rng, f_bg, fx,
                 ENUMERATE_FACTOR if enumerate_rows else 0.0)
    cap = budget // 2  # antithetic pairs the budget holds; an odd budget leaves its last ordering unwalked
    if cap == 0:  # a budget of one ordering: its walk is an unbiased estimate, with no spread to measure
        game.play(1, antithetic=False)
        values = game.estimates().mean(axis=0)
        se = np.zeros((d, k)) if game.walked.size == 0 else np.full((d, k), np.nan)
        return SampledShapley(values, base, se, 1, game.walked.size == 0, tol,
                              "tolerance" if game.walked.size == 0 else "max_orderings")
    start, stopped = time.monotonic(), "max_orderings"
    want = min(cap, max(2, (max(4, min_orderings) + 1) // 2))
    while True:
        game.play(want)
        pairs = game.estimates()
        n = len(pairs)
        se = np.zeros((d, k)) if game.walked.size == 0 else _standard_error(pairs)
        ratio = float((se[:, judge] / tol[judge]).max()) if n >= 2 or game.walked.size == 0 else np.inf
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
    return SampledShapley(values, base, se, 2 * n, stopped == "tolerance", tol, stopped)


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
