"""SHA-256 of files and tables: what a store is checked against before it is served."""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pandas as pd

CHUNK = 2**20
HASH_ROWS = 4096


def file_sha256(path: str | Path) -> str:
    """Hex SHA-256 of a file's bytes, read in 1 MiB chunks.

    Raises
    ------
    OSError
        If the file cannot be read.
    """
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(CHUNK), b""):
            h.update(block)
    return h.hexdigest()


def table_sha256(X: pd.DataFrame, y: np.ndarray) -> str:
    """Hex SHA-256 of a loaded table: its column names, its values as float64 and its target.

    For data without a file (the bundled sample, read from scikit-learn): the store records what the
    explainers saw.
    """
    h = hashlib.sha256(json.dumps(list(map(str, X.columns))).encode())
    values = X.to_numpy(dtype=float)  # a view of a float64 table, column-major: hashed a few rows at a time, in
    for lo in range(0, len(values), HASH_ROWS):  # row-major order, with no copy of the whole table (Adult: 56 MB)
        h.update(np.ascontiguousarray(values[lo:lo + HASH_ROWS]))
    h.update(np.ascontiguousarray(np.asarray(y, dtype=float)))
    return h.hexdigest()


def source_hashes(settings, ws) -> tuple[str, str]:
    """``(model SHA-256, data SHA-256)`` of what ``settings`` name: the files' bytes; for the bundled sample
    (no ``--model``) the sample's model file and :func:`table_sha256` of its table (``ws``).

    Raises
    ------
    OSError
        If a file cannot be read.
    """
    if settings.model:
        return file_sha256(settings.model), file_sha256(settings.data)
    from workspace.workspace import SAMPLE_MODEL

    return file_sha256(SAMPLE_MODEL), table_sha256(ws.X, ws.y)
