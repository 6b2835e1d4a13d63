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


class _CountedList(list):
    """A list that counts the times it is walked."""

    walks = 0

    def __iter__(self):
        _CountedList.walks += 1
        return super().__iter__()


def test_a_wide_codec_fits_numpy_number_columns_by_dtype_and_decodes_without_walking_its_columns(monkeypatch):
    """Issue 27: on the 10,000-column pair the codec made a Series per column to fit it (8 profiled s of the load),
    and every model call walked the 10,000 columns' kinds and dtypes twice before decoding (15 profiled s over the
    188 calls of ``check``). FAILED before: 1,000 ``_fit_column`` calls, and a walk of the dtypes per decode."""
    rng = np.random.default_rng(3)
    frames = {"float": pd.DataFrame(rng.normal(size=(20, 1_000)), columns=[f"f{j}" for j in range(1_000)]),
              "int": pd.DataFrame(rng.integers(0, 5, size=(20, 1_000)), columns=[f"i{j}" for j in range(1_000)])}
    mixed = pd.DataFrame({"x": rng.normal(size=20), "u": rng.integers(0, 9, 20).astype(np.uint8),
                          "h": rng.normal(size=20).astype(np.float32), "b": rng.random(20) > 0.5,
                          "c": ["red", "blue"] * 10, "d": pd.date_range("2024-01-01", periods=20)})
    fitted = []
    real_fit = TabularCodec._fit_column
    monkeypatch.setattr(TabularCodec, "_fit_column", staticmethod(lambda name, s: fitted.append(name) or real_fit(name, s)))
    codecs = {k: TabularCodec(f) for k, f in frames.items()}
    assert fitted == []  # numpy numbers: numeric by their dtype
    m = TabularCodec(mixed)
    assert fitted == ["b", "c", "d"]
    for frame, codec in [*((frames[k], codecs[k]) for k in frames), (mixed, m)]:  # what fitting each column gives
        assert codec.columns == tuple(real_fit(str(c), frame[c]) for c in frame.columns)
    for key, codec in codecs.items():
        codec._dtypes = _CountedList(codec._dtypes)
        Z = codec.encode(frames[key]).to_numpy()
        before = _CountedList.walks
        got = codec.decode(Z)
        assert _CountedList.walks == before  # nothing walked per call
        pd.testing.assert_frame_equal(got, frames[key], check_exact=True)
    got = m.decode(m.encode(mixed).to_numpy())  # the column-by-column path, unchanged
    pd.testing.assert_frame_equal(got[["x", "u", "h", "b", "c"]], mixed[["x", "u", "h", "b", "c"]], check_exact=True,
                                  check_dtype=False)
