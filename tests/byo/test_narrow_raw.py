"""The raw table kept for display holds one-hot 0/1 columns in one byte a cell, and shows the values of the file.

Oracle: pandas' own reading of the CSV (int64 columns) and its values, row by row, against the data page.
"""
import numpy as np
import pandas as pd
from sklearn.linear_model import LogisticRegression

from app import services
from tests.byo.conftest import write_pair
from workspace.workspace import load_user_workspace


def test_one_hot_columns_are_kept_narrow_and_shown_as_written(tmp_path):
    rng = np.random.default_rng(0)
    n = 200
    frame = pd.DataFrame({"age": rng.integers(17, 90, n), "income_usd": rng.integers(0, 3_000_000, n),
                          "colour_red": rng.integers(0, 2, n), "colour_blue": rng.integers(0, 2, n),
                          "ratio": rng.random(n)})
    frame["target"] = (frame["colour_red"] + rng.random(n) > 1).astype(int)
    model = LogisticRegression(max_iter=500).fit(frame.drop(columns="target"), frame["target"])
    m, d = write_pair(tmp_path, model, frame)
    ws = load_user_workspace(m, d, "target")
    read = pd.read_csv(d).drop(columns="target")
    assert [str(t) for t in read.dtypes] == ["int64", "int64", "int64", "int64", "float64"]  # what pandas reads
    assert {c: str(t) for c, t in ws.raw.dtypes.items()} == {"age": "int8", "income_usd": "int32", "colour_red": "int8",
                                                             "colour_blue": "int8", "ratio": "float64"}
    assert ws.raw.memory_usage(index=False).sum() < read.memory_usage(index=False).sum() / 2
    np.testing.assert_array_equal(ws.raw.to_numpy(dtype=float), read.to_numpy(dtype=float))
    with services.overridden(services.ServiceState(ws)):
        records, _ = services.data_page(0, 12)
    for rec in records:
        assert [rec[f"c{j}"] for j in range(5)] == [round(float(v), 4) for v in read.iloc[rec["id"]]]
