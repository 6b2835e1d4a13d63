"""The memory estimate that guards reading a CSV parses a bounded number of cells (issue 27: the 200-row, 10,000-column
table was parsed whole twice, once for the estimate). The oracle is the estimate's definition on the whole table."""
from __future__ import annotations

import numpy as np
import pandas as pd

from workspace import tables


def test_a_wide_csv_is_estimated_from_a_bounded_sample_with_the_same_per_row_memory(tmp_path, monkeypatch):
    rng = np.random.default_rng(0)
    frames = {"wide": pd.DataFrame(rng.normal(size=(300, 2_000))).add_prefix("f"),
              "narrow": pd.DataFrame(rng.normal(size=(1_500, 40))).add_prefix("f").assign(s=["ab", "cde", "f"] * 500)}
    asked = []
    real = pd.read_csv
    monkeypatch.setattr(tables.pd, "read_csv", lambda *a, **k: asked.append(k.get("nrows")) or real(*a, **k))
    for key, df in frames.items():
        path = tmp_path / f"{key}.csv"
        df.to_csv(path, index=False)
        got = tables.estimated_bytes(path)
        whole = real(path)  # the definition: pandas memory of the parsed rows per row, times the rows, + 3 x the file
        per_row = whole.memory_usage(deep=True).sum() / len(whole)
        want = per_row * len(df) + 3 * path.stat().st_size
        assert abs(got - want) <= 0.001 * want, (key, got, want)
    assert asked == [50, 1_000]  # FAILED before: 1,000 rows of 2,000 columns, the whole wide table
