"""MUSE's tree candidates encode a wide table's numeric columns as one block (issue 27): on the 10,000-column pair
their encoder (18 calls, a Series and ``to_numeric`` per column) was about 44 % of the default MUSE fit's 90 CPU s."""
from __future__ import annotations

import numpy as np
import pandas as pd

from explainers.muse import _tree_candidates


def test_numeric_columns_are_one_block_and_the_encoding_is_the_per_column_one(monkeypatch):
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(25, 1_000)), columns=[f"f{j}" for j in range(1_000)])
    X["i"], X["b"] = rng.integers(0, 5, 25), rng.random(25) > 0.5
    X["c"] = ["a", "b", None, "c", "a"] * 5
    X["n"] = pd.array([1.5, None] * 12 + [2.0], dtype="Float64")
    enc = _tree_candidates._Encoder(X, X.columns)
    calls = []
    real = pd.to_numeric
    monkeypatch.setattr(_tree_candidates.pd, "to_numeric", lambda *a, **k: calls.append(1) or real(*a, **k))
    got = enc.encode(X)
    assert len(calls) == 1  # the nullable Float64 column only; old: one per numeric column (1,003)
    want = []
    for f in X.columns:  # the per-column encoding
        if f in enc.levels:
            want += [(X[f].to_numpy() == lv).astype(np.float32) for lv in enc.levels[f]]
        else:
            want.append(real(X[f], errors="coerce").to_numpy(dtype=np.float32))
    assert set(enc.levels) == {"c", "b"} and got.dtype == np.float32
    np.testing.assert_array_equal(got, np.column_stack(want))
