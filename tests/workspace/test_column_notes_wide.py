"""Loading names each empty or constant feature column without a Series, ``isna`` and ``nunique`` per column (issue 27:
10 of the 10,000-column pair's 33 profiled load seconds). The oracle is the former column-by-column test."""
from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.linear_model import LogisticRegression

from tests.byo.conftest import write_pair
from workspace.columns import column_notes
from workspace.workspace import load_user_workspace


def _one_by_one(raw: pd.DataFrame, name: str) -> list[str]:
    notes = []
    for col in raw.columns:
        s = raw[col]
        if s.isna().all():
            notes.append(f"{name}: column {str(col)!r} is empty in every row")
        elif s.nunique(dropna=False) == 1:
            notes.append(f"{name}: column {str(col)!r} is constant ({s.iloc[0]!r})")
    return notes


def _frame(rng, n=40, d=300) -> pd.DataFrame:
    df = pd.DataFrame(rng.normal(size=(n, d)), columns=[f"f{j}" for j in range(d)])
    df["f3"] = np.nan  # empty
    df["f5"] = 2.5  # constant
    df.loc[0, "f7"], df.loc[1:, "f7"] = np.nan, 1.0  # one value and NaN: two values
    df["f9"] = np.where(np.arange(n) % 2, 0.0, -0.0)  # one value (-0.0 == 0.0)
    df["i"] = np.full(n, 7, dtype=np.int64)
    df["u"] = rng.integers(0, 3, n).astype(np.uint8)
    df["h"] = np.full(n, 1.5, dtype=np.float32)
    return df


def test_column_notes_equal_the_column_by_column_notes(rng):
    df = _frame(rng).assign(s=["a"] * 40, b=[True] * 40, t=["x", "y"] * 20)
    want = _one_by_one(df, "d.csv")
    assert len(want) == 7 and column_notes(df, "d.csv") == want
    assert column_notes(df.iloc[:0], "d.csv") == _one_by_one(df.iloc[:0], "d.csv")


def test_loading_a_wide_table_tests_only_the_suspect_columns_one_by_one(tmp_path, rng, monkeypatch):
    """FAILED before: ``nunique`` was called on each of the 303 columns."""
    df = _frame(rng).drop(columns=["f3", "f7"])  # the model takes no NaN
    y = np.where(df["f0"] > 0, "yes", "no")
    model = LogisticRegression().fit(df, y)
    m, d = write_pair(tmp_path, model, df.assign(label=y), fmt="parquet")
    calls = []
    real = pd.Series.nunique
    monkeypatch.setattr(pd.Series, "nunique", lambda self, *a, **k: calls.append(self.name) or real(self, *a, **k))
    ws = load_user_workspace(str(m), str(d), "label")
    assert [c for c in calls if str(c).startswith(("f", "i", "u", "h"))] == ["f5", "f9", "i", "h"]
    for line in _one_by_one(df, d.name):
        assert line in ws.notes
