"""Interventional Tree SHAP over a :class:`~explainers.tree_shap._forest.Forest`, by leaves, in numpy.

The game (Lundberg et al. 2020, "From local explanations to global understanding with explainable AI for trees",
Nature Machine Intelligence 2:56-67, arXiv 1905.04610; Janzing et al. 2020 for the interventional reading): for a
row ``x`` and one background row ``r``, a coalition ``S`` of players is worth ``f(z)``, where ``z`` takes the
columns of ``S``'s players from ``x`` and every other column from ``r``; the value explained is the mean over the
background rows of the Shapley values of these games.

By leaves: a tree's output is a sum of its leaves, ``f(z) = sum_l v_l 1[z reaches l]``, and both Shapley values and
the mean are linear, so each leaf is a game of its own. On the path to leaf ``l``, group the split tests by the
player whose column they read. For one pair (x, r) each player on the path is then

* satisfied by both rows: it cannot change whether ``z`` reaches ``l`` (no share);
* satisfied by x only (set A, ``a`` players): ``z`` reaches ``l`` only if the player is in S;
* satisfied by r only (set B, ``b`` players): ``z`` reaches ``l`` only if the player is not in S;
* satisfied by neither: no ``z`` reaches ``l`` (the pair adds nothing for this leaf).

The leaf's game is ``v_l 1[A ⊆ S, B ∩ S = ∅]``, whose Shapley values are closed form: a player of A gets
``v_l (a-1)! b! / (a+b)!`` (it must come after the rest of A and before all of B in a random order), a player of B
gets ``-v_l a! (b-1)! / (a+b)!``. Summing over leaves, trees and background rows is exact: no sampling, no
approximation, and the values add up to ``f(x) - mean_r f(r)`` by construction (efficiency).

Players are columns or groups of columns (``groups``): a one-hot column's children are one player when they share
a group, which gives the raw column's Shapley value (its children all move from x or all from r) in the same
polynomial time.

Speed: which of a leaf's players a row satisfies is one bitmask (``uint64``, a bit per player on the path); the
background rows are kept per leaf as their distinct masks with counts, so a row costs
``sum over leaves of (distinct background masks x players on the path)`` operations.
"""
from __future__ import annotations

import sys
from dataclasses import dataclass
from math import factorial

import numpy as np
from scipy import sparse

from ._forest import Forest

__all__ = ["MAX_PATH_PLAYERS", "LeafGame", "leaf_game", "interventional_values"]

MAX_PATH_PLAYERS = 62
"""Most distinct players on one root-to-leaf path (a bit each in a uint64 mask)."""
MAX_PATH_CELLS = 8_000_000
"""Most ``leaves x path depth`` cells a forest may have here (about 64 MB an array of them); larger forests are
refused with a ValueError before their paths are read, and explained another way."""
CHUNK_CELLS = 3_000_000
"""Largest ``rows x (leaf, background mask) entries x players per path`` block held at once."""
COMPILED_MIN_ROWS = 64
"""Batches of at least this many rows sum the leaf games in compiled code (:mod:`._compiled`, numba): about 5x
faster a row, but numba's import costs about 50 MB and 0.4 s, which one row at a time (a server's clicks) should
not pay. Smaller batches are compiled too once numba is loaded anyway (:data:`COMPILED_WHEN_LOADED`)."""
COMPILED_WHEN_LOADED = True
"""Sum any batch in compiled code when something else has imported numba already (a large batch, the Persuasive
page's expectations in the trees): nothing left to pay, and one live row of Adult's HistGradientBoosting pipeline
takes 3.9 instead of 6.6 ms (its whole Tree SHAP explanation, 100 background rows), with the same values."""


def _compiled(n_rows: int) -> bool:
    """Whether a batch of ``n_rows`` rows is summed in compiled code (:data:`COMPILED_MIN_ROWS`)."""
    return n_rows >= COMPILED_MIN_ROWS or (COMPILED_WHEN_LOADED and n_rows > 0 and "numba" in sys.modules)


@dataclass(frozen=True)
class LeafGame:
    """A forest's leaves as games over their paths' players, with the background summarised per leaf.

    Parameters
    ----------
    node, left, slot : ndarray of shape (n_leaves, depth)
        Each path's nodes (index into the forest's internal nodes, -1 past the end), the side taken, and the slot
        (0 .. n_slots - 1) of the node's player among the leaf's players.
    full : ndarray of uint64, shape (n_leaves,)
        Bitmask of the leaf's used slots.
    player : ndarray of int, shape (n_leaves, n_slots)
        Player of each slot, -1 when unused.
    value : ndarray of shape (n_leaves, n_outputs)
    leaf, mask, count : ndarray of shape (n_entries,)
        The background per leaf: each distinct mask of satisfied slots, and how many background rows have it.
    n_background : int
    """

    node: np.ndarray
    left: np.ndarray
    slot: np.ndarray
    full: np.ndarray
    player: np.ndarray
    value: np.ndarray
    leaf: np.ndarray
    mask: np.ndarray
    count: np.ndarray
    n_background: int


class _Nodes:
    """Every internal node of every tree, tested on rows at once (index = position in the forest's node list)."""

    def __init__(self, forest: Forest) -> None:
        self.forest, self.start, total = forest, [], 0
        for t in forest.trees:  # a node's global index: start[tree] + its index in the tree
            self.start.append(total)
            total += len(t.feature)
        self.feature = np.concatenate([t.feature for t in forest.trees])
        self.threshold = np.concatenate([t.threshold for t in forest.trees])
        self.missing = np.concatenate([t.missing_left for t in forest.trees])
        self.f32 = np.concatenate([np.full(len(t.feature), t.float32) for t in forest.trees])
        self.cats = [(self.start[i] + int(j), t, int(j)) for i, t in enumerate(forest.trees)
                     if t.is_cat is not None for j in np.flatnonzero(t.is_cat)]

    def goes_left(self, X: np.ndarray, nodes: np.ndarray) -> np.ndarray:
        """Whether each row goes left at each of ``nodes`` (global indices), shape (n_rows, len(nodes))."""
        f = self.feature[nodes]
        V = X[:, f]
        f32 = self.f32[nodes]
        if f32.any():
            V = np.where(f32[None, :], V.astype(np.float32).astype(np.float64), V)
        out = np.where(np.isnan(V), self.missing[nodes][None, :], V <= self.threshold[nodes][None, :])
        if self.cats:
            where = {int(n): i for i, n in enumerate(nodes)}
            for g, t, j in self.cats:
                if g in where:
                    out[:, where[g]] = t._categorical_left(V[:, where[g]], j)
        return out


def _paths(forest: Forest, groups: np.ndarray):
    """Every root-to-leaf path: (global path nodes, sides) and the leaf's values, in tree order."""
    nodes = _Nodes(forest)
    rows = []
    for ti, t in enumerate(forest.trees):
        stack = [(0, [], [])]
        while stack:
            n, path, dirs = stack.pop()
            if t.feature[n] < 0:
                rows.append((ti, n, path, dirs))
                continue
            stack.append((int(t.right[n]), path + [n], dirs + [False]))
            stack.append((int(t.left[n]), path + [n], dirs + [True]))
    return nodes, rows


def leaf_game(forest: Forest, groups: np.ndarray, background: np.ndarray) -> tuple[LeafGame, _Nodes]:
    """Read ``forest``'s leaves with players ``groups[column]`` and summarise ``background`` per leaf.

    Raises
    ------
    ValueError
        If a path holds more than :data:`MAX_PATH_PLAYERS` distinct players.
    """
    cells = sum(int((t.feature < 0).sum()) * _depth(t) for t in forest.trees)
    if cells > MAX_PATH_CELLS:
        raise ValueError(f"this forest has {cells:,} leaf-path cells; exact Tree SHAP here holds at most "
                         f"{MAX_PATH_CELLS:,}")
    nodes, rows = _paths(forest, groups)
    L, depth = len(rows), max(1, max(len(r[2]) for r in rows))
    node = np.full((L, depth), -1, dtype=np.int64)
    left = np.ones((L, depth), dtype=bool)
    slot = np.zeros((L, depth), dtype=np.int64)
    player = np.full((L, depth), -1, dtype=np.int64)
    value = np.empty((L, forest.n_outputs))
    for i, (ti, leaf, path, dirs) in enumerate(rows):
        t, off = forest.trees[ti], nodes.start[ti]
        value[i] = t.value[leaf]
        seen: dict[int, int] = {}
        for d, (n, go) in enumerate(zip(path, dirs)):
            p = int(groups[t.feature[n]])
            s = seen.setdefault(p, len(seen))
            node[i, d], left[i, d], slot[i, d], player[i, s] = off + n, go, s, p
    used = int((player >= 0).sum(axis=1).max(initial=0))
    if used > MAX_PATH_PLAYERS:
        raise ValueError(f"a path of this model tests {used} distinct players; this Tree SHAP holds at most "
                         f"{MAX_PATH_PLAYERS}")
    used = max(used, 1)
    player = player[:, :used]
    full = _pack(player >= 0)
    leaf, mask, count = _distinct_per_leaf(_masks(nodes, node, left, slot, used, background))
    return LeafGame(node, left, slot, full, player, value, leaf, mask, count, len(background)), nodes


def _distinct_per_leaf(masks: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The distinct masks of each leaf's column of ``masks`` (n_rows, n_leaves) and how many rows have each.

    Returns (leaf, mask, count), ordered by leaf, then mask: ``np.unique`` of the (leaf, mask) pairs, without its
    copies of every pair (a random forest's 100 background rows x 3,068 leaves held 15 MB more at once).
    """
    n = masks.shape[0]
    by_leaf = np.sort(masks.T, axis=1)  # (n_leaves, n_rows); masks < 2**62: their order as int64 or uint64 is one
    first = np.ones(by_leaf.shape, dtype=bool)
    first[:, 1:] = by_leaf[:, 1:] != by_leaf[:, :-1]
    at = np.flatnonzero(first)  # row-major: by leaf, then mask
    return at // n, by_leaf.ravel()[at], np.diff(np.append(at, by_leaf.size)).astype(np.float64)


def _depth(t) -> int:
    """Depth of a tree (edges on its longest root-to-leaf path)."""
    depth = np.zeros(len(t.feature), dtype=np.int64)
    for n in range(len(t.feature)):  # children come after their parent in scikit-learn's node order
        if t.feature[n] >= 0:
            depth[t.left[n]] = depth[t.right[n]] = depth[n] + 1
    return int(depth.max(initial=0))


def _pack(bits: np.ndarray) -> np.ndarray:
    """Bool array (..., S) -> uint64 masks (...), bit s set when ``bits[..., s]``: a slot at a time, so no uint64
    copy of ``bits`` (8 bytes a cell) is ever held."""
    out = np.zeros(bits.shape[:-1], dtype=np.uint64)
    for s in range(bits.shape[-1]):
        out |= bits[..., s].astype(np.uint64) << np.uint64(s)
    return out


def _masks(nodes: _Nodes, node, left, slot, S: int, X: np.ndarray) -> np.ndarray:
    """Bitmask of the slots each row satisfies on each leaf's path, shape (n_rows, n_leaves)."""
    L, depth = node.shape
    on = node >= 0
    used = np.unique(node[on])
    col = np.full(len(nodes.feature), -1)
    col[used] = np.arange(used.size)
    go = nodes.goes_left(X, used)  # (n, n_used)
    masks = np.full((len(X), L), _pack(np.ones(S, dtype=bool)), dtype=np.uint64)  # every slot, until a test fails
    rows = np.arange(L)
    for d in range(depth):  # a slot's bit cleared where the row goes the other way at a node of that slot
        ok = on[:, d]
        if not ok.any():
            break
        r = rows[ok]
        wrong = go[:, col[node[r, d]]] != left[r, d]  # (n, len(r))
        masks[:, r] &= ~(wrong.astype(np.uint64) << slot[r, d].astype(np.uint64))
    return masks


def _weights(S: int) -> tuple[np.ndarray, np.ndarray]:
    """Shapley weights of a leaf's game, indexed [a, b]: a player of A, and a player of B (see module notes)."""
    plus, minus = np.zeros((S + 1, S + 1)), np.zeros((S + 1, S + 1))
    for a in range(S + 1):
        for b in range(S + 1 - a):
            if a:
                plus[a, b] = factorial(a - 1) * factorial(b) / factorial(a + b)
            if b:
                minus[a, b] = factorial(a) * factorial(b - 1) / factorial(a + b)
    return plus, minus


class _Scatter:
    """Sparse maps of a game, made once: entries to leaves, entries' open slots, and (leaf, slot) to players."""

    def __init__(self, game: LeafGame, n_players: int) -> None:
        L, S = game.player.shape
        E = len(game.leaf)
        self.shifts = np.arange(S, dtype=np.uint64)
        self.to_leaf = sparse.csr_matrix((np.ones(E), (np.arange(E), game.leaf)), shape=(E, L))
        # the slots a background mask leaves open (not satisfied by r): where x-only players can be
        open_bits = ((((~game.mask) & game.full[game.leaf])[:, None] >> self.shifts) & np.uint64(1)).astype(bool)
        e, s = np.nonzero(open_bits)
        self.open = sparse.csr_matrix((np.ones(e.size), (e, game.leaf[e] * S + s)), shape=(E, L * S))
        flat = game.player.ravel()
        keep = np.flatnonzero(flat >= 0)
        self.to_player = [sparse.csr_matrix((game.value[keep // S, k], (keep, flat[keep])), shape=(L * S, n_players))
                          for k in range(game.value.shape[1])]


def interventional_values(game: LeafGame, nodes: _Nodes, X: np.ndarray, n_players: int,
                          scatter: _Scatter | None = None) -> np.ndarray:
    """Interventional Shapley values of rows ``X`` over the game's background, (n_rows, n_players, n_outputs).

    Parameters
    ----------
    game : LeafGame
        From :func:`leaf_game`.
    nodes : the node table :func:`leaf_game` returned with it
    X : ndarray of shape (n_rows, n_features)
        The model's input rows.
    n_players : int
    scatter : _Scatter, optional
        The game's sparse maps, when kept between calls.
    """
    L, S = game.player.shape
    plus_w, minus_w = _weights(S)
    out = np.zeros((len(X), n_players, game.value.shape[1]))
    if _compiled(len(X)):
        from ._compiled import leaf_sums

        step = max(1, CHUNK_CELLS // (L * S))
        return leaf_sums(game, ((lo, _masks(nodes, game.node, game.left, game.slot, S, X[lo:lo + step]))
                                for lo in range(0, len(X), step)), plus_w, minus_w, out)
    sc = _Scatter(game, n_players) if scatter is None else scatter
    step = max(1, CHUNK_CELLS // max(1, len(game.leaf) + L * S))
    full_e = game.full[game.leaf]
    for lo in range(0, len(X), step):
        xm = _masks(nodes, game.node, game.left, game.slot, S, X[lo:lo + step])  # (n, L)
        xe = xm[:, game.leaf]  # (n, E)
        valid = (~xe & ~game.mask & full_e) == 0
        a = np.bitwise_count(xe & ~game.mask & full_e).astype(np.int64)
        b = np.bitwise_count(~xm & game.full).astype(np.int64)[:, game.leaf]
        scale = np.where(valid, game.count / game.n_background, 0.0)
        # a player x alone satisfies: +w_plus on each entry that leaves its slot open (r fails it)
        x_bits = ((xm[:, :, None] >> sc.shifts) & np.uint64(1)).astype(np.float64).reshape(len(xm), L * S)
        plus = np.asarray((sc.open.T @ (plus_w[a, b] * scale).T).T) * x_bits
        # a player only r satisfies: -w_minus summed over the leaf's entries
        wm = np.asarray((sc.to_leaf.T @ (minus_w[a, b] * scale).T).T)  # (n, L)
        r_only = ((((~xm) & game.full)[:, :, None] >> sc.shifts) & np.uint64(1)).astype(np.float64)
        share = plus - (r_only * wm[:, :, None]).reshape(len(xm), L * S)
        for k, to_player in enumerate(sc.to_player):
            out[lo:lo + step, :, k] = np.asarray((to_player.T @ share.T).T)
    return out
