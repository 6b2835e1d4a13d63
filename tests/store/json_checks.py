"""Checks shared by the JSON-only cache tests: what a diskcache folder holds, and exact equality of results."""
from __future__ import annotations

import dataclasses
import math
import sqlite3
from pathlib import Path

import numpy as np

PICKLE_MODE = 4  # diskcache.core.MODE_PICKLE
PICKLE_HEADER = b"\x80"  # first byte of a pickle of protocol 2 or later


def cache_rows(folder: Path) -> list[tuple]:
    """Every row of the diskcache index in ``folder``: (raw, mode, filename, value)."""
    with sqlite3.connect(Path(folder) / "cache.db") as db:
        return db.execute("SELECT raw, mode, filename, value FROM Cache").fetchall()


def pickles_in(folder: Path) -> list[str]:
    """What in a diskcache folder is a pickle: rows in pickle mode, pickled keys (``raw`` 0), values and files
    that start with a pickle header. Empty for a JSON-only cache."""
    found = []
    for raw, mode, filename, value in cache_rows(folder):
        if mode == PICKLE_MODE:
            found.append(f"row {filename or value!r:.60} in pickle mode")
        if not raw:
            found.append("a pickled key")
        if isinstance(value, bytes) and value.startswith(PICKLE_HEADER):
            found.append(f"value {value[:20]!r} starts like a pickle")
    for path in Path(folder).rglob("*"):
        if path.is_file() and not path.name.startswith("cache.db") and path.read_bytes().startswith(PICKLE_HEADER):
            found.append(f"file {path.name} starts like a pickle")
    return found


def assert_same(a, b, where: str = "") -> None:
    """``a`` and ``b`` are the same result: same types (tuples stay tuples), arrays of the same dtype and shape
    equal element by element (NaN where NaN), floats equal exactly, dataclasses field by field."""
    assert type(a) is type(b) or {type(a), type(b)} <= {float, np.float64}, f"{where}: {type(a)} vs {type(b)}"
    if dataclasses.is_dataclass(a):
        for f in dataclasses.fields(a):
            assert_same(getattr(a, f.name), getattr(b, f.name), f"{where}.{f.name}")
    elif isinstance(a, np.ndarray):
        assert a.dtype == b.dtype and a.shape == b.shape, f"{where}: {a.dtype}{a.shape} vs {b.dtype}{b.shape}"
        assert np.array_equal(a, b, equal_nan=a.dtype.kind == "f"), where
    elif isinstance(a, dict):
        assert list(a) == list(b), f"{where}: keys {list(a)} vs {list(b)}"
        for k in a:
            assert_same(a[k], b[k], f"{where}[{k!r}]")
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), f"{where}: {len(a)} vs {len(b)} items"
        for i, (x, y) in enumerate(zip(a, b)):
            assert_same(x, y, f"{where}[{i}]")
    elif isinstance(a, float):
        assert (math.isnan(a) and math.isnan(b)) or a == b, f"{where}: {a!r} vs {b!r}"
    else:
        assert a == b, f"{where}: {a!r} vs {b!r}"
