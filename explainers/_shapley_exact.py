"""Exact Shapley values by enumerating every coalition, with raw columns (or any groups of columns) as players.

Shapley 1953 ("A value for n-person games"): ``φ_j = Σ_{S ⊆ N∖{j}} |S|! (d−|S|−1)! / d! · (v(S ∪ {j}) − v(S))``.
The game is SHAP's interventional one (Lundberg & Lee 2017, arXiv 1705.07874; Janzing et al. 2020,
"Feature relevance quantification in explainable AI: a causal problem", AISTATS):
``v(S) = mean over background rows b of f(x_S, b_rest)``. A player may own several columns (a raw
column's one-hot children): all of them come from ``x`` or all from ``b``.

This is what "SHAP of a raw column" means for a Pipeline; the signed sum of its one-hot children's
SHAP values (:func:`explainers._grouping.group_signed_sum`) is additive but is not this value when
the model has interactions. The cost is ``2**n_players * n_background`` model rows per explained row,
so it is offered only when that fits :data:`EXACT_MAX_MODEL_ROWS` (and at most
:data:`EXACT_MAX_PLAYERS` players); beyond, the converged permutation estimate
(:mod:`explainers._permutation`) with its standard errors is used instead.
"""
from __future__ import annotations

from math import factorial

import numpy as np

__all__ = ["exact_shapley", "exact_fits", "EXACT_MAX_PLAYERS", "EXACT_MAX_MODEL_ROWS"]

EXACT_MAX_PLAYERS = 14
EXACT_MAX_MODEL_ROWS = 2_000_000
"""Most model rows (coalitions x background rows) one exact explanation may cost."""


def exact_fits(n_players: int, n_background: int) -> bool:
    """True when enumerating every coalition fits :data:`EXACT_MAX_PLAYERS` and :data:`EXACT_MAX_MODEL_ROWS`."""
    return n_players <= EXACT_MAX_PLAYERS and 2 ** n_players * n_background <= EXACT_MAX_MODEL_ROWS


def exact_shapley(f, x: np.ndarray, background: np.ndarray, groups: np.ndarray | None = None, *,
                  max_rows: int = 50_000) -> tuple[np.ndarray, np.ndarray]:
    """Exact interventional Shapley values of one row, players = groups of columns.

    Parameters
    ----------
    f : callable
        Maps an ndarray of shape (n, n_columns) to outputs of shape (n, n_outputs).
    x : ndarray of shape (n_columns,)
    background : ndarray of shape (n_background, n_columns)
    groups : ndarray of int of shape (n_columns,), optional
        Player (0 .. n_players-1) owning each column; default one player per column.
    max_rows : int, default=50000
        Largest batch ``f`` is called on; the values do not depend on it.

    Returns
    -------
    values : ndarray of shape (n_players, n_outputs)
        Output units of ``f``; ``values.sum(0) + base == f(x)`` up to float rounding.
    base : ndarray of shape (n_outputs,)
        Mean of ``f`` over the background (``v`` of the empty coalition).

    Raises
    ------
    ValueError
        If the shapes disagree or there are more than :data:`EXACT_MAX_PLAYERS` players.
    """
    x = np.asarray(x, dtype=float).ravel()
    bg = np.asarray(background, dtype=float)
    groups = np.arange(x.size) if groups is None else np.asarray(groups, dtype=int)
    if bg.ndim != 2 or bg.shape[1] != x.size or groups.shape != (x.size,) or len(bg) == 0:
        raise ValueError(f"x ({x.size} columns), background {bg.shape} and groups {groups.shape} do not match")
    d = int(groups.max()) + 1
    if d > EXACT_MAX_PLAYERS:
        raise ValueError(f"{d} players need 2**{d} coalitions; exact enumeration stops at {EXACT_MAX_PLAYERS}")
    m = len(bg)
    codes = np.arange(2 ** d)
    players = ((codes[:, None] >> np.arange(d)[None, :]) & 1).astype(bool)  # (2^d, d): bit j = player j in S
    cols = players[:, groups]
    v = []
    step = max(1, max_rows // m)
    for a in range(0, len(cols), step):
        block = cols[a:a + step]
        rows = np.where(block[:, None, :], x[None, None, :], bg[None, :, :]).reshape(len(block) * m, x.size)
        v.append(np.asarray(f(rows), dtype=float).reshape(len(block), m, -1).mean(axis=1))
    v = np.concatenate(v)  # (2^d, n_outputs)
    size = players.sum(axis=1)
    weight = np.array([factorial(s) * factorial(d - s - 1) / factorial(d) for s in range(d)])
    values = np.zeros((d, v.shape[1]))
    for j in range(d):
        without = codes[~players[:, j]]
        values[j] = (weight[size[without]][:, None] * (v[without | (1 << j)] - v[without])).sum(axis=0)
    return values, v[0]
