"""The codec encodes a wide table's numeric columns as one block (issue 27): loading the 10,000-column pair spent
most of its 40 CPU s in ``TabularCodec.encode``, a Series, ``to_numeric`` and ``astype`` per column, four times."""
from __future__ import annotations

import numpy as np
import pandas as pd

from explainers import _codec
from explainers._codec import TabularCodec


def test_numpy_number_columns_are_encoded_without_a_call_per_column_and_equal_the_per_column_encoding(monkeypatch):
    rng = np.random.default_rng(0)
    wide = pd.DataFrame(rng.normal(size=(30, 1_000)), columns=[f"f{j}" for j in range(1_000)])
    mixed = pd.DataFrame({"i": rng.integers(0, 9, 30), "b": rng.random(30) > 0.5, "x": rng.normal(size=30),
                          "n": pd.array([1, None] * 15, dtype="Int64"), "c": ["red", "blue", None] * 10,
                          "u": rng.integers(0, 9, 30).astype(np.uint8), "h": rng.normal(size=30).astype(np.float32)})
    mixed.loc[3, "x"] = np.nan
    codecs = {id(f): TabularCodec(f) for f in (wide, mixed)}
    calls = []
    real = pd.to_numeric
    monkeypatch.setattr(_codec.pd, "to_numeric", lambda *a, **k: calls.append(1) or real(*a, **k))
    got = codecs[id(wide)].encode(wide)
    assert calls == []  # old: 1,000 calls
    np.testing.assert_array_equal(got.to_numpy(), wide.to_numpy())
    enc = codecs[id(mixed)].encode(mixed)
    assert len(calls) == 1  # only the nullable Int64 column goes through pandas
    for j, c in enumerate(mixed.columns):  # each column as the per-column path encodes it
        if c == "c":
            continue
        want = pd.to_numeric(mixed[c], errors="coerce").astype("float64").to_numpy(dtype=float, na_value=np.nan)
        np.testing.assert_array_equal(enc.iloc[:, j].to_numpy(), want)
    levels = codecs[id(mixed)].columns[4].levels
    assert [levels[int(v)] if v == v else None for v in enc["c"]] == ["red", "blue", "(missing)"] * 10
