"""The matrix-product itemset miner finds exactly the itemsets FP-growth finds (mlxtend), and those are exactly the
itemsets a brute-force count over every combination of columns calls frequent."""
from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest
from mlxtend.frequent_patterns import fpgrowth

from explainers.muse._mining import frequent_itemsets, min_count


def _brute(B, min_support, max_len):
    need = math.ceil(min_support * B.shape[0])
    return {c for L in range(1, max_len + 1) for c in itertools.combinations(range(B.shape[1]), L)
            if B[:, list(c)].all(axis=1).sum() >= need}


def _mlxtend(B, min_support, max_len):
    fi = fpgrowth(pd.DataFrame(B, columns=range(B.shape[1])), min_support=min_support, use_colnames=True,
                  max_len=max_len)
    return {tuple(sorted(int(i) for i in s)) for s in fi["itemsets"]}


@pytest.mark.parametrize("seed,n,m,min_support,max_len", [(0, 40, 8, 0.1, 3), (1, 97, 10, 0.05, 3),
                                                          (2, 200, 12, 0.2, 2), (3, 50, 9, 0.3, 4),
                                                          (4, 64, 7, 0.125, 3), (5, 30, 6, 0.5, 1)])
def test_same_itemsets_as_brute_force_and_fp_growth(seed, n, m, min_support, max_len):
    rng = np.random.default_rng(seed)
    B = rng.random((n, m)) < rng.uniform(0.15, 0.8, m)  # columns of different frequencies
    got = frequent_itemsets(B, min_support, max_len)
    assert len(got) == len(set(got)) and all(list(t) == sorted(t) for t in got)
    assert set(got) == _brute(B, min_support, max_len) == _mlxtend(B, min_support, max_len)
    assert got == sorted(got, key=lambda t: (len(t), t))


def test_the_count_threshold_is_mlxtends_ceiling():
    """0.1 of 25 rows needs 3 rows (2.5 rounded up): an itemset on exactly 2 rows is out, on 3 rows in."""
    assert min_count(0.1, 25) == 3
    B = np.zeros((25, 3), dtype=bool)
    B[:2, 0] = True          # 2 rows
    B[:3, 1] = True          # 3 rows
    B[:3, 2] = True          # 3 rows, and 3 rows together with column 1
    assert frequent_itemsets(B, 0.1, 3) == [(1,), (2,), (1, 2)]
    assert _mlxtend(B, 0.1, 3) == {(1,), (2,), (1, 2)}


def test_nothing_frequent_and_chunks_of_one():
    B = np.eye(6, dtype=bool)
    assert frequent_itemsets(B, 0.5, 3) == []
    rng = np.random.default_rng(7)
    B = rng.random((80, 9)) < 0.6
    assert frequent_itemsets(B, 0.1, 3, chunk=1) == frequent_itemsets(B, 0.1, 3)


def test_mined_itemsets_are_kept_per_matrix_and_parameters(monkeypatch):
    """A second fit on the same rows reads the itemsets the first mined; other rows or another support mine again,
    and every answer equals a fresh mining."""
    from explainers.muse import _items
    from explainers.muse._items import Item, mine_itemsets
    from explainers.types import Predicate

    monkeypatch.setattr(_items, "_MINED", type(_items._MINED)())
    calls = []
    real = _items._mine
    monkeypatch.setattr(_items, "_mine", lambda *a: calls.append(a[2]) or real(*a))
    rng = np.random.default_rng(3)
    I = rng.random((120, 8)) < 0.5
    items = [Item(f"f{j}", (Predicate(f"f{j}", ">", 0.0),)) for j in range(8)]
    first = mine_itemsets(I, items, 0.1, 3)
    again = mine_itemsets(I.copy(), items, 0.1, 3)
    assert again == first and len(calls) == 1
    other = I.copy()
    other[0, 0] = not other[0, 0]
    assert mine_itemsets(other, items, 0.1, 3) == real(other, items, 0.1, 3, 64, 5000, 0, 1000)
    assert mine_itemsets(I, items, 0.2, 3) == real(I, items, 0.2, 3, 64, 5000, 0, 1000)
    assert len(calls) == 3
    again.append("changed")  # callers get their own list
    assert mine_itemsets(I, items, 0.1, 3) == first
