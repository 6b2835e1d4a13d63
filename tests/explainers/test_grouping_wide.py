"""Grouping correlated features on a wide table never forms the d x d matrix (issue 27).

FAILED before (the dense path on every table): at 3,000 columns ``correlated_groups`` allocated the 72 MB
Spearman matrix and more (10,000 columns: 800 MB, and its condensed distances 400 MB). The blockwise path must
find exactly the dense path's clusters (average linkage only joins clusters linked within the cut).
"""
from __future__ import annotations

import tracemalloc

import numpy as np
import pandas as pd
import pytest

from explainers.persuasive import _groups


def _wide(d: int, n: int = 200, sources: int = 30, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    base = rng.normal(size=(n, sources))
    X = rng.normal(size=(n, d))
    for j in range(0, 10 * sources):
        X[:, j * 7 % d] = base[:, j % sources] * (1 if j % 2 else -1) + 0.2 * rng.normal(size=n)
    X[:, 5] = 1.0  # a constant column links to nothing
    return pd.DataFrame(X, columns=[f"c{j}" for j in range(d)])


def test_wide_grouping_stays_under_a_fraction_of_the_dense_matrix():
    X = _wide(3_000)
    assert len(X.columns) > _groups.DENSE_COLUMNS
    tracemalloc.start()
    groups = _groups.correlated_groups(X)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < 8 * 3_000 ** 2 / 2, peak  # under half of one 3,000 x 3,000 float matrix (72 MB)
    assert len(groups) == 30 and all(len(m) == 10 for m in groups.values())


def test_blockwise_and_dense_paths_find_the_same_clusters(monkeypatch):
    X = _wide(700, seed=1)
    dense = _groups.correlated_groups(X)
    monkeypatch.setattr(_groups, "DENSE_COLUMNS", 50)
    monkeypatch.setattr(_groups, "BLOCK", 64)
    assert _groups.correlated_groups(X) == dense and len(dense) == 30


def test_too_many_linked_columns_is_one_line(monkeypatch):
    X = _wide(600, seed=2)
    monkeypatch.setattr(_groups, "DENSE_COLUMNS", 50)
    monkeypatch.setattr(_groups, "MAX_COMPONENT", 5)
    with pytest.raises(ValueError, match=r"^10 columns are correlated together at \|ρ\| >= 0.8; grouping clusters"):
        _groups.correlated_groups(X)
