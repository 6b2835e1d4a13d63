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


def test_a_numbers_only_table_is_encoded_once_for_every_tree(monkeypatch):
    """Issue 27: the features-of-interest tree (every feature, without features of interest) and each descriptor's
    inner trees re-encoded the table or its rows (a 10,000-column copy and encoding each). Without level columns the
    encoding of a descriptor's rows is those rows of the table's encoding, and the every-feature encoding is the
    table's: checked here on the encoder itself. FAILED before: up to 14 encoders made and used per fit."""
    rng = np.random.default_rng(1)
    X = pd.DataFrame(rng.normal(size=(120, 300)), columns=[f"f{j}" for j in range(300)])
    X["i"] = rng.integers(0, 5, 120)
    y = ((X["f0"] + X["f1"] > 0) & (X["i"] > 1)).to_numpy().astype(int)
    enc = _tree_candidates._Encoder(X, X.columns)
    Z = enc.encode(X)
    rows = rng.random(120) < 0.4
    np.testing.assert_array_equal(_tree_candidates._Encoder(X.loc[rows], X.columns).encode(X.loc[rows]), Z[rows])
    np.testing.assert_array_equal(_tree_candidates._Encoder(X, list(map(str, X.columns))).encode(X), Z)
    made, real = [], _tree_candidates._Encoder.encode
    monkeypatch.setattr(_tree_candidates._Encoder, "encode", lambda self, F: made.append(len(F)) or real(self, F))
    pairs, starts = _tree_candidates.tree_paths(X, y, interest=None, max_width=3)
    assert made == [120] and pairs and starts
