"""Tree SHAP's leaf games built without a uint64 per (background row, leaf, slot) (issue 23: peak memory).

Building the game of the sample store's RandomForest(200) held 50 MB at once for a 4.8 MB result (a bool array per
row, leaf and slot, packed through a uint64 copy of it, then ``np.unique`` of every (leaf, mask) pair), which set
the server's peak memory above the peer's. Oracles: the masks and the distinct entries computed here the plain
way (per row, leaf and path node; ``np.unique`` of the pairs), and the size of the array the old packing made.
"""
from __future__ import annotations

import tracemalloc

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer
from sklearn.ensemble import RandomForestClassifier

from explainers.tree_shap import _interventional as ti
from explainers.tree_shap._forest import forest_of


@pytest.fixture(scope="module")
def forest():
    X, y = load_breast_cancer(return_X_y=True)
    model = RandomForestClassifier(n_estimators=50, random_state=0).fit(X, y)
    return forest_of(model), X


def _plain_masks(game, nodes, X) -> np.ndarray:
    """Slots each row satisfies on each leaf's path, row by row and node by node (a slot fails when the row goes
    the other way at any node of that slot; unused slots are set, as the packed masks have them)."""
    L, depth = game.node.shape
    S = game.player.shape[1]
    go = nodes.goes_left(X, np.arange(len(nodes.feature))).tolist()  # the split tests, every row at every node
    node, left, slot = game.node.tolist(), game.left.tolist(), game.slot.tolist()
    out = np.zeros((len(X), L), dtype=np.uint64)
    for i in range(len(X)):
        for leaf in range(L):
            ok = [True] * S
            for d in range(depth):
                n = node[leaf][d]
                if n < 0:
                    break
                if go[i][n] != left[leaf][d]:
                    ok[slot[leaf][d]] = False
            out[i, leaf] = sum(1 << s for s in range(S) if ok[s])
    return out


def test_masks_and_entries_equal_the_plain_computation(forest):
    f, X = forest
    bg = X[:40]
    game, nodes = ti.leaf_game(f, np.arange(X.shape[1]), bg)
    masks = ti._masks(nodes, game.node, game.left, game.slot, game.player.shape[1], bg)
    np.testing.assert_array_equal(masks, _plain_masks(game, nodes, bg))
    pairs = np.stack([np.broadcast_to(np.arange(masks.shape[1]), masks.shape).ravel(),
                      masks.ravel().astype(np.int64)], axis=1)
    uniq, count = np.unique(pairs, axis=0, return_counts=True)
    np.testing.assert_array_equal(game.leaf, uniq[:, 0])
    np.testing.assert_array_equal(game.mask, uniq[:, 1].astype(np.uint64))
    np.testing.assert_array_equal(game.count, count.astype(float))
    assert game.count.sum() == len(bg) * masks.shape[1]


def test_the_game_never_holds_a_uint64_per_row_leaf_and_slot(forest):
    f, X = forest
    bg = X[:100]
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        game, _ = ti.leaf_game(f, np.arange(X.shape[1]), bg)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    L, S = game.player.shape
    one_per_cell = len(bg) * L * S * 8  # what packing the (rows, leaves, slots) bools through uint64 allocated
    assert peak < one_per_cell, (peak, one_per_cell)
