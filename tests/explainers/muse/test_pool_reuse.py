"""Fits that read the kept base pool (and mined itemsets) give the rule sets of fits that build everything afresh."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from explainers.muse import FlatDecisionSet, TwoLevelDecisionSet, _items, _pool


def _table(seed=0, n=600):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({"age": rng.integers(18, 80, n), "hours": rng.normal(40, 10, n).round(1),
                      "job": rng.choice(["a", "b", "c", "d"], n), "city": rng.choice(["x", "y"], n)})
    y = np.where((X.age > 45) & (X.job != "a") | (X.hours > 55), ">50K", "<=50K")
    return X, y


@pytest.mark.parametrize("cls", [TwoLevelDecisionSet, FlatDecisionSet])
def test_reused_pools_give_the_same_rule_sets_as_fresh_ones(cls, monkeypatch):
    X, y = _table()
    monkeypatch.setattr(_pool, "_BASES", type(_pool._BASES)())
    monkeypatch.setattr(_items, "_MINED", type(_items._MINED)())
    built = []
    real = _pool._compute_base_pairs
    monkeypatch.setattr(_pool, "_compute_base_pairs", lambda *a: built.append(1) or real(*a))
    reused = [cls(max_rules=b, seed=0).fit(X, y).rule_set_.to_dict() for b in (2, 4, 8)]
    assert len(built) == 1  # one base pool for the three budgets
    for module, kept, cache in ((_pool, "BASES_KEPT", "_BASES"), (_items, "MINED_KEPT", "_MINED")):
        monkeypatch.setattr(module, kept, 0)  # nothing kept: every fit builds its own
        monkeypatch.setattr(module, cache, type(getattr(module, cache))())
    fresh = [cls(max_rules=b, seed=0).fit(X, y).rule_set_.to_dict() for b in (2, 4, 8)]
    assert len(built) == 4
    assert reused == fresh


def test_other_labels_build_another_pool(monkeypatch):
    X, y = _table()
    monkeypatch.setattr(_pool, "_BASES", type(_pool._BASES)())
    a = TwoLevelDecisionSet(max_rules=4, seed=0).fit(X, y).rule_set_
    flipped = np.where(X.city == "x", y, np.where(y == ">50K", "<=50K", ">50K"))
    b = TwoLevelDecisionSet(max_rules=4, seed=0).fit(X, flipped).rule_set_
    monkeypatch.setattr(_pool, "BASES_KEPT", 0)
    monkeypatch.setattr(_pool, "_BASES", type(_pool._BASES)())
    assert TwoLevelDecisionSet(max_rules=4, seed=0).fit(X, flipped).rule_set_.to_dict() == b.to_dict()
    assert len(_pool._BASES) == 0 and a.to_dict() != b.to_dict()
