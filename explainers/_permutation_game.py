"""The interventional game of :mod:`explainers._permutation`, one background row at a time.

The value of a coalition ``S`` is the mean over the background of ``v_r(S) = f(x_S, r_{-S})``, so the
Shapley value is the mean over background rows of each row's game's value ``phi_r`` (Shapley values are linear
in the game). Row ``r``'s game has only the features where ``r`` differs from ``x`` (``D_r``) as players: the
others are null players (adding one changes no model row). This module evaluates those per-row games:
:class:`_CoalitionValues` maps (coalition, background row) pairs to model outputs, each distinct model row once;
:func:`play_round` walks one ordering per (ordering, background row) and enumerates the ``2^|D_r|`` coalitions of
the rows whose own players are few, then applies Shapley's formula to those.
"""
from __future__ import annotations

from math import comb, factorial

import numpy as np
import pandas as pd

__all__ = ["KEYED_MAX_SHARE", "play_round", "walk_rows"]

_KEY_BITS = 62
"""A coalition's key (its features' bits, times the background size, plus the background row) fits in int64."""
KEYED_MAX_SHARE = 0.5
"""Rows are keyed when at most this share of the walk's rows can be distinct (hashing a key costs about as
much as a cheap model's row: a 30-tree GradientBoosting on 30 columns took 1.5x longer keyed at 35 % repeats)."""
KEY_COST_S = 1e-6
"""CPU seconds a key costs (hashing it, about 0.1 µs measured, and building its row), with a margin of about 4:
a model whose row (from the timed background call) costs ``c`` is keyed when at most ``1 - KEY_COST_S / c`` of the
walk's rows are expected to be distinct (a k-NN's 63 µs row: nearly always)."""
_CHUNK = 4_000_000
"""Most (ordering, background row, feature) cells built at once by the unkeyed walk (bytes of its boolean masks)."""


def walk_rows(players: np.ndarray, orderings: int) -> np.ndarray:
    """Expected distinct model rows of ``orderings`` random walks of games of ``players`` players (empty, full included).

    A walk meets one coalition of each size ``s`` (1 .. players - 1), uniform among the ``C(players, s)`` of that
    size (as does its reverse), so ``C (1 - (1 - 1/C)^orderings)`` of them are expected to be distinct.
    """
    players = np.asarray(players, dtype=np.int64)
    out = np.full(players.shape, 2.0)
    for p in np.unique(players):
        c = np.array([comb(int(p), s) for s in range(1, int(p))], dtype=float)
        out[players == p] += (c * -np.expm1(orderings * np.log1p(-1.0 / c))).sum() if len(c) else 0.0
    return np.minimum(out, np.exp2(players))


class _CoalitionValues:
    """``f(x_S, r_{-S})`` for pairs of a coalition ``S`` and a background row ``r``.

    A background row ``r`` equal to ``x`` on feature ``j`` gives the same model row with or without ``j``
    in ``S``: the row of ``(S, r)`` is the row of ``(S | E_r, r)``, ``E_r = {j : bg[r, j] == x[j]}``. Pairs
    are keyed by ``(S | E_r, r)`` and each distinct one is evaluated once, in batches of at most
    ``max_rows`` rows, and remembered for later rounds (one-hot or categorical tables repeat most rows:
    Adult's 14 columns share half their values with a typical background row). The values are those of
    evaluating every row; only the model's work shrinks. Background row ``r`` can give at most
    ``min(2^|D_r|, orderings * (|D_r| - 1) + 2)`` distinct rows (``D_r`` the features where it differs from
    ``x``), :func:`walk_rows` of them expected; when their sum exceeds :data:`KEYED_MAX_SHARE` of the walk's rows at
    the budget, or ``1 - KEY_COST_S / row_cost_s`` if that is more (continuous columns and a cheap model, where
    keying costs more than the model calls it saves), or the table is too wide for an int64
    key (``n_features + log2(n_background) > 62``), every row is evaluated, still in batches.

    Keyed pairs of different background rows can still give the same model row: ``(S, r)`` and ``(S', r')``
    whose rows agree off the coalitions (``x`` itself once ``S`` covers ``D_r``, whatever ``r``; ``x`` with one
    column set to a common level near the end of every walk). So where it fits in an int64 the key is the model
    row itself: column ``j`` holds 0 for ``x[j]`` (in ``S``, or a background value equal to it) or ``1 + `` the
    rank of ``bg[r, j]`` among the column's other background values, in mixed radix (Adult's 14 columns with
    100 background rows: about 47 bits). Each distinct model row then goes to the model once, ``x`` and the
    background rows included (``seen``: their outputs, computed beforehand), with the values of evaluating every
    row (Adult, 16 orderings: about 12 % fewer rows than with ``(S | E_r, r)`` keys, the fallback for tables
    whose rows need more than 62 bits).
    """

    def __init__(self, f, x, bg, max_rows, k, orderings, row_cost_s=None, seen=None):
        self.f, self.x, self.bg, self.max_rows, self.k = f, x, bg, max(1, int(max_rows)), k
        m, d = bg.shape
        self.differ = (bg != x).sum(axis=1)
        distinct = walk_rows(self.differ, orderings).sum()
        share = KEYED_MAX_SHARE if not row_cost_s else max(KEYED_MAX_SHARE, 1.0 - KEY_COST_S / row_cost_s)
        self.keyed = d + max(m - 1, 1).bit_length() <= _KEY_BITS and distinct <= share * orderings * (d - 1) * m
        self.bits = np.left_shift(np.int64(1), np.arange(d, dtype=np.int64)) if d < 63 else None
        self.same = (bg == x).astype(np.int64) @ self.bits if self.keyed else None  # E_r as bits, one per row
        self.known, self.values = pd.Index(np.empty(0, np.int64)), np.empty((0, k))
        self.rows_evaluated = 0
        self.content = _row_code(x, bg) if self.keyed else None
        if self.content is not None and seen is not None:  # f(bg), f(x) computed already: x is key 0
            keys = np.concatenate([[0], self.content[0].sum(axis=1)])
            first = np.unique(keys, return_index=True)[1]
            self.known = pd.Index(keys[first])
            self.values = np.concatenate([np.reshape(seen[1], (1, k)), np.reshape(seen[0], (m, k))])[first]

    def _eval(self, rows):
        self.rows_evaluated += len(rows)
        return np.asarray(self.f(rows), dtype=float).reshape(len(rows), -1)

    def _keys(self, coalitions: np.ndarray, r: np.ndarray) -> np.ndarray:
        """int64 key of each pair ``(S, bg[r])``: the model row's code, or ``(S | E_r, r)`` where it does not fit."""
        m, d = self.bg.shape
        if self.content is None:
            return (coalitions | self.same[r]) * m + r
        weights, out, step = self.content[0], np.empty(len(r), dtype=np.int64), max(1, _CHUNK // (8 * d))
        for a in range(0, len(r), step):  # bounded temporaries (a round at the cap holds ~10^6 pairs)
            inside = (coalitions[a:a + step, None] >> np.arange(d)) & 1 == 1
            out[a:a + step] = np.where(inside, 0, weights[r[a:a + step]]).sum(axis=1)
        return out

    def _rows(self, keys: np.ndarray) -> np.ndarray:
        """The model rows of keys made by :meth:`_keys`."""
        m, d = self.bg.shape
        if self.content is None:
            return np.where((keys[:, None] // m >> np.arange(d)) & 1 == 1, self.x, self.bg[keys % m])
        _, tables, scale, radix = self.content
        return np.column_stack([tables[j][keys // scale[j] % radix[j]] for j in range(d)])

    def of_masks(self, masks: np.ndarray, r: np.ndarray) -> np.ndarray:
        """``f`` of the rows ``(masks[i], bg[r[i]])`` (boolean masks, shape (n, d)), shape (n, n_outputs)."""
        if self.keyed:
            return self.of_bits(masks.astype(np.int64) @ self.bits, r)
        parts = [np.empty((0, self.k))]
        for a in range(0, len(masks), self.max_rows):
            parts.append(self._eval(np.where(masks[a:a + self.max_rows], self.x, self.bg[r[a:a + self.max_rows]])))
        return np.concatenate(parts)

    def of_bits(self, coalitions: np.ndarray, r: np.ndarray) -> np.ndarray:
        """``f`` of ``(S, bg[r[i]])`` for coalitions given as int64 feature bits, shape (n, n_outputs)."""
        m, d = self.bg.shape
        if not self.keyed:
            return self.of_masks((coalitions[:, None] >> np.arange(d)) & 1 == 1, r)
        keys = self._keys(coalitions, r)
        codes, uniq = pd.factorize(keys)  # hashing, O(rows): sorting the keys cost as much as a cheap model
        where = self.known.get_indexer(uniq)
        fresh = where < 0
        if fresh.any():
            new = uniq[fresh]
            where[fresh] = len(self.known) + np.arange(len(new))
            parts = [self.values] + [self._eval(self._rows(new[a:a + self.max_rows]))
                                     for a in range(0, len(new), self.max_rows)]
            self.values = np.concatenate(parts)
            self.known = self.known.append(pd.Index(new))
        return self.values[where][codes]


def _row_code(x: np.ndarray, bg: np.ndarray):
    """Model rows ``(x_S, r_{-S})`` as int64 codes: per background row and column the code's term when the column
    is not in ``S``, each column's values by code (``x[j]`` first), scales and radices; None past 62 bits."""
    m, d = bg.shape
    weights, tables, scale, radix, at = np.zeros((m, d), dtype=np.int64), [], [], [], 1
    for j in range(d):
        other = bg[:, j] != x[j]
        levels = np.unique(bg[other, j])  # NaNs: one level (NaN never equals x[j], as in D_r)
        code = np.where(other, np.searchsorted(levels, bg[:, j]) + 1, 0)
        tables.append(np.concatenate([x[j:j + 1], levels]))
        scale.append(at)
        radix.append(len(levels) + 1)
        weights[:, j] = code * at
        at *= len(levels) + 1
        if at > 2 ** _KEY_BITS:
            return None
    return weights, tables, np.array(scale, dtype=np.int64), np.array(radix, dtype=np.int64)


def _walk_bits(v: _CoalitionValues, perms: np.ndarray, rows: np.ndarray):
    """Coalitions 1..d-1 of every walk as int64 bits, and each one's background row (keyed walks)."""
    n_ord, b, d = perms.shape
    cum = np.cumsum(v.bits[perms], axis=2)[:, :, :-1]
    return cum.ravel(), np.broadcast_to(rows[None, :, None], (n_ord, b, d - 1)).ravel()


def _walk_values(v: _CoalitionValues, perms: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """``f`` of coalitions 1..d-1 of every walk, every row evaluated (unkeyed walks), shape (n_ord * b * (d-1), k)."""
    n_ord, b, d = perms.shape
    ranks = np.empty_like(perms)
    np.put_along_axis(ranks, perms, np.broadcast_to(np.arange(d), perms.shape).copy(), axis=2)
    flat, owner = ranks.reshape(n_ord * b, d), np.tile(rows, n_ord)
    step = max(1, _CHUNK // (d * (d - 1)))
    return np.concatenate([v.of_masks((flat[a:a + step, None, :] < np.arange(1, d)[None, :, None]).reshape(-1, d),
                                      np.repeat(owner[a:a + step], d - 1)) for a in range(0, n_ord * b, step)])


def _exact_masks(v: _CoalitionValues, rows: np.ndarray):
    """Every coalition of each row's own players but the empty and full ones: masks, their rows, the players."""
    d = v.bg.shape[1]
    players = [np.flatnonzero(v.bg[r] != v.x) for r in rows]
    masks, owner = [np.zeros((0, d), dtype=bool)], [np.zeros(0, dtype=np.int64)]
    for r, D in zip(rows, players):
        sub = np.arange(1, max(2 ** len(D) - 1, 1), dtype=np.int64)
        mk = np.zeros((len(sub), d), dtype=bool)
        mk[:, D] = (sub[:, None] >> np.arange(len(D))) & 1 == 1
        masks.append(mk)
        owner.append(np.full(len(sub), r, dtype=np.int64))
    return np.concatenate(masks), np.concatenate(owner), players


def _shapley_of_tables(rows, players, vals, f_bg, fx, d):
    """Shapley's formula (Shapley 1953) on each row's table of ``v_r`` over the subsets of its players."""
    k = fx.size
    out = np.zeros((len(rows), d, k))
    at = 0
    for i, (r, D) in enumerate(zip(rows, players)):
        n = len(D)
        if n == 0:
            continue
        table = np.empty((2 ** n, k))
        table[0], table[-1] = f_bg[r], fx
        table[1:-1] = vals[at:at + 2 ** n - 2]
        at += max(2 ** n - 2, 0)
        sub = np.arange(2 ** n)
        size = np.array([s.bit_count() for s in range(2 ** n)])
        w = np.array([factorial(s) * factorial(n - s - 1) / factorial(n) for s in range(n)])
        for a, j in enumerate(D):
            without = sub[(sub >> a) & 1 == 0]
            out[i, j] = (w[size[without], None] * (table[without | (1 << a)] - table[without])).sum(axis=0)
    return out


def play_round(v: _CoalitionValues, perms: np.ndarray, walked: np.ndarray, exact: np.ndarray, f_bg: np.ndarray,
               fx: np.ndarray):
    """One round: the walks of ``walked`` rows and the exact values of ``exact`` rows, in one batch of model calls.

    Parameters
    ----------
    perms : ndarray of shape (n_ord, len(walked), d)
        The ordering background row ``walked[b]`` walks in ordering ``o``: every row has its own orderings, so
        the rows' errors do not move together (one ordering shared by all rows made their contributions
        correlated: on an Adult k-NN the mean over 100 rows varied 13 to 80 times more).
    exact : ndarray of int
        Rows whose game is enumerated: the ``2^|D_r|`` coalitions of its own players, Shapley's formula.
    f_bg, fx : the background rows' outputs (the empty coalition) and the row's (the full one).

    Returns
    -------
    contrib : ndarray of shape (n_ord, len(walked), d, k)
        Each walk's marginal contribution of every feature (null players' exactly 0).
    phi : ndarray of shape (len(exact), d, k)
        Shapley values of each exact row's game.
    """
    n_ord, b, d = perms.shape
    k = fx.size
    em, eo, players = _exact_masks(v, exact)
    if v.keyed:
        wb, wr = _walk_bits(v, perms, walked) if b else (np.zeros(0, np.int64), np.zeros(0, np.int64))
        vals = v.of_bits(np.concatenate([wb, em.astype(np.int64) @ v.bits]), np.concatenate([wr, eo]))
        mid, ex = vals[:len(wb)], vals[len(wb):]
    else:
        mid = _walk_values(v, perms, walked) if b else np.zeros((0, k))
        ex = v.of_masks(em, eo)
    walk = np.concatenate([np.broadcast_to(f_bg[walked][None, :, None, :], (n_ord, b, 1, k)),
                           mid.reshape(n_ord, b, d - 1, k), np.broadcast_to(fx, (n_ord, b, 1, k))], axis=2)
    steps = np.diff(walk, axis=2)  # by position in the ordering
    contrib = np.empty_like(steps)
    np.put_along_axis(contrib, perms[..., None], steps, axis=2)  # by feature
    return contrib, _shapley_of_tables(exact, players, ex, f_bg, fx, d)
