"""Helpers for the bring-your-own-model tests: write a fitted model (skops) and a table, load them back."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import skops.io as sio



def write_pair(folder: Path, model, frame: pd.DataFrame, fmt: str = "csv", name: str = "data") -> tuple[Path, Path]:
    """Dump ``model`` with skops and ``frame`` as CSV or Parquet; returns (model_path, data_path)."""
    m = folder / f"{name}.skops"
    sio.dump(model, m)
    d = folder / f"{name}.{fmt}"
    frame.to_parquet(d) if fmt == "parquet" else frame.to_csv(d, index=False)
    return m, d


@pytest.fixture
def rng():
    """A fresh seeded generator per test (the session-wide one would make data depend on test order)."""
    return np.random.default_rng(0)


def adapter_for(model, frame: pd.DataFrame, target: str = "target"):
    """A ModelAdapter over the raw features ``frame`` and its encoded rows (for estimators skops will not load)."""
    from explainers._codec import TabularCodec
    from explainers.model_adapter import ModelAdapter

    codec = TabularCodec(frame)
    return ModelAdapter(model, codec, target=target), codec.encode(frame)


