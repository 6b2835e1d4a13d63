"""How result types hold arrays: read-only float copies, a store's read-only memory maps kept uncopied, and
per-feature sums taken by blocks of rows (no temporary of a memory-mapped array's full size)."""
from __future__ import annotations

from typing import Any

import numpy as np

def _as_float_array(values: Any, name: str, ndim: int) -> np.ndarray:
    arr = np.asarray(values, dtype=float)
    if arr.ndim != ndim:
        raise ValueError(f"{name} must have {ndim} dimension(s), got shape {arr.shape}")
    if _read_only_map(arr):  # a store's array: shared by every process through the page cache, never copied
        return arr
    arr = arr.copy()
    arr.setflags(write=False)
    return arr


def _read_only_map(arr: np.ndarray) -> bool:
    """Whether ``arr`` is (a read-only view of) a ``numpy.memmap`` opened read-only (``mode="r"``): nothing in
    this process can write through it, so a result type may hold it without copying."""
    if arr.flags.writeable:
        return False
    a = arr
    while isinstance(a, np.ndarray):
        if isinstance(a, np.memmap):
            return a.mode == "r"
        a = a.base
    return False


CHUNK_ROWS = 65_536
"""Rows per block of the per-feature reductions of :class:`GlobalImportance` (a memory-mapped (n, d) array is
reduced block by block: no temporary of its full size)."""


def _column_sums(arr: np.ndarray, fn) -> np.ndarray:
    """``fn(arr).sum(axis=0)`` in blocks of :data:`CHUNK_ROWS` rows, float64, shape (n_columns,)."""
    out = np.zeros(arr.shape[1])
    for start in range(0, arr.shape[0], CHUNK_ROWS):
        out += fn(np.asarray(arr[start:start + CHUNK_ROWS], dtype=float)).sum(axis=0)
    return out
