"""MUSE's itemset counts of one or two items come from matrix products (issue 27): on the 10,000-column pair the pool
counted about 540,000 mined itemsets (40,000 items and the pairs of the 1,000 most frequent) row mask by row mask,
twice, most of the Surrogate step's profile. The oracle is the definition: the rows where every item holds, counted
per class with numpy on the raw matrix.
"""
from __future__ import annotations

import numpy as np

from explainers.muse import _items


def _brute(I, itemsets, Y1):
    out = np.zeros((len(itemsets), Y1.shape[1]), dtype=np.int64)
    for k, s in enumerate(itemsets):
        rows = I[:, list(s)].all(axis=1) if s else np.ones(len(I), bool)
        out[k] = Y1[rows].sum(axis=0)
    return out


def test_itemset_counts_of_one_and_two_items_equal_the_rows_counted_and_skip_the_masks(monkeypatch):
    rng = np.random.default_rng(0)
    N, n_items = 400, 300
    I = rng.random((N, n_items)) < rng.uniform(0.05, 0.9, n_items)
    y = rng.integers(0, 3, N)
    Y1 = np.eye(3, dtype=np.int64)[y]
    ones = [(int(i),) for i in rng.permutation(n_items)[:120]]
    twos = [tuple(sorted(map(int, rng.choice(n_items, 2, replace=False)))) for _ in range(2_000)] + [(5, 5)]
    longer = [tuple(sorted(map(int, rng.choice(n_items, 3, replace=False)))) for _ in range(50)] + [()]
    itemsets = [t for group in zip(ones, twos[:120], longer[:51] + [(0,)] * 69) for t in group] + twos[120:]
    masked = []
    real = _items.itemset_masks
    monkeypatch.setattr(_items, "itemset_masks", lambda I_, sets, **kw: masked.extend(sets) or real(I_, sets, **kw))
    want = _brute(I, itemsets, Y1)
    np.testing.assert_array_equal(_items.itemset_support(I, itemsets, Y1), want)
    assert sorted(masked) == sorted(longer)  # FAILED before: every itemset went through the row masks
    support = _items.itemset_support(I, itemsets)
    np.testing.assert_array_equal(support, want.sum(axis=1) / N)  # the same float64 division of exact counts
    monkeypatch.setattr(_items, "PAIR_ITEMS", 10)  # pairs over more items than that: counted by the masks, the same
    masked.clear()
    np.testing.assert_array_equal(_items.itemset_support(I, itemsets, Y1), want)
    assert len(masked) == len(longer) + len(twos)


def _mined_one_by_one(I, items, min_support, max_width, max_pair_items):
    """The pair branch of ``_mine`` as its loop wrote it: candidates, width and redundancy per key, rows counted."""
    keep = np.flatnonzero(I.mean(axis=0) >= min_support)
    support = I[:, keep].mean(axis=0)
    paired = np.sort(keep[np.argsort(-support, kind="stable")[:max_pair_items]])
    Ik = I[:, paired].astype(np.float32)
    a, b = np.nonzero(np.triu((Ik.T @ Ik) / I.shape[0] >= min_support, k=1))
    cand = [(int(k),) for k in keep] + [(int(paired[i]), int(paired[j])) for i, j in zip(a, b)]
    keys = sorted((k for k in cand if sum(len(items[i].predicates) for i in k) <= max_width
                   and not _items._redundant(k, items)), key=lambda t: (len(t), t))
    sup = [I[:, list(k)].all(axis=1).sum() / I.shape[0] for k in keys]
    return [(k, float(v)) for k, v in zip(keys, sup) if v >= min_support]


def test_mining_many_one_predicate_items_gives_the_loops_itemsets_without_it(monkeypatch):
    """FAILED before: ``_redundant`` was called once per candidate (about 540,000 times on the 10,000-column pair)."""
    import pandas as pd

    rng = np.random.default_rng(1)
    X = pd.DataFrame(rng.normal(size=(200, 40)), columns=[f"f{j}" for j in range(40)])
    X["f1"] = X["f0"] + 0.1 * rng.normal(size=200)  # correlated: joint supports far from independent
    items = _items.make_items(X)
    I = _items.item_matrix(items, X)
    for max_width, max_pair_items in ((3, 1_000), (2, 50), (1, 1_000)):
        want = _mined_one_by_one(I, items, 0.1, max_width, max_pair_items)
        if max_width == 1:
            want = [t for t in want if len(t[0]) == 1]
        calls = []
        monkeypatch.setattr(_items, "_redundant", lambda *a: calls.append(1) or pytest_fail())
        got = _items._mine(I, items, 0.1, max_width, 64, None, 0, max_pair_items)
        monkeypatch.undo()
        assert calls == [] and got == want and len(got) > len(items) * (max_width > 1)


def pytest_fail():
    raise AssertionError("_redundant called")
