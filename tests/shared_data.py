"""Where the real public test data lives (``shared/data``: COMPAS, Adult, UCI sentences, UD EWT).

Tests and benchmarks may read it; the app never needs it. Looked up in order:
``CANDOR_SHARED_DATA``, ``../shared/data`` beside the checkout, ``/work/shared/data``.
"""
from __future__ import annotations

import os
from pathlib import Path

_ROOT = Path(__file__).resolve().parent.parent


def shared_data_dir() -> Path | None:
    """The first existing candidate folder, or ``None``."""
    candidates = [os.environ.get("CANDOR_SHARED_DATA"), _ROOT.parent / "shared" / "data", "/work/shared/data"]
    for c in candidates:
        if c and Path(c).is_dir():
            return Path(c)
    return None


ADULT_COLUMNS = ["age", "workclass", "fnlwgt", "education", "education-num", "marital-status", "occupation",
                 "relationship", "race", "sex", "capital-gain", "capital-loss", "hours-per-week", "native-country",
                 "income"]
"""``adult.data``'s columns (the file has no header; UCI's ``adult.names``)."""


def adult_data():
    """UCI Adult's ``adult.data`` as a DataFrame (32,561 x 15, "?" read as missing); skips the test without it."""
    import pandas as pd
    import pytest

    folder = shared_data_dir()
    if folder is None or not (folder / "adult" / "adult.data").exists():
        pytest.skip("needs shared/data/adult/adult.data")
    return pd.read_csv(folder / "adult" / "adult.data", header=None, names=ADULT_COLUMNS, skipinitialspace=True,
                       na_values="?").dropna(how="all")


def compas_csv() -> Path:
    """ProPublica's ``compas-scores-two-years.csv`` (``shared/data/compas``); skips the test without it."""
    import pytest

    folder = shared_data_dir()
    path = folder / "compas" / "compas-scores-two-years.csv" if folder else None
    if path is None or not path.exists():
        pytest.skip("shared/data/compas is absent")
    return path
