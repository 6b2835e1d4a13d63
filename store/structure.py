"""A store's structure checked at open, after its hashes: what the manifest's SHA-256 cannot promise.

A manifest is not signed: whoever can write the files can write matching hashes. So every part is
checked against the format (:mod:`store.format`) and the table the store is for before it is served:
the set of files, each array's exact dtype and shape, the stored rows (strictly increasing, in the
table), ``row_meta.parquet`` (:mod:`store.row_meta`: its metadata and page headers before any row is read, so a
decompression bomb is refused unread; each entry parsed and checked when its row is asked) and the JSON files (parsed
once, from the bytes that were hashed).
Each problem is one :class:`~workspace.errors.CandorError` line naming the store and the file.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from workspace.errors import CandorError
from .format import DOCUMENTS, METHODS
from .manifest import release_pages
from .provenance import REPRODUCE_FILES

FLOAT, INT = np.dtype("<f8"), np.dtype("<i8")
GLOBAL = ("global_values.npy", "global_feature_values.npy", "global_se.npy")
PER_ROW = ("values", "se", "base", "prediction", "feature_values")


def required(n_rows: int) -> set[str]:
    """The files every store with ``n_rows`` stored rows has (the JSON files may be skipped)."""
    names = {"rows.npy", "global_rows.npy", *GLOBAL}
    if n_rows:
        names |= {"prediction.npy", "row_meta.parquet", *(f"{m}_{p}.npy" for m in METHODS for p in PER_ROW)}
    return names


def _expected(name: str, n: int, g: int, d: int, length: int) -> tuple[np.dtype, tuple]:
    if name in REPRODUCE_FILES:  # any length, positions in the table (checked below)
        return INT, (length,)
    if name in ("rows.npy", "global_rows.npy"):
        return INT, ((n if name == "rows.npy" else g),)
    if name in GLOBAL:
        return FLOAT, (g, d)
    two_d = name.endswith(("_values.npy", "_se.npy"))
    return FLOAT, ((n, d) if two_d else (n,))


def check_arrays(folder: Path, manifest: dict, loaded: dict) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """``(rows, arrays by name without .npy)`` once every array has its exact dtype and shape.

    Every float array but the feature values holds finite numbers with finite row sums (1e308 twice would
    render an additivity gap of infinity).

    Raises
    ------
    CandorError
        A required file not listed, an array of another dtype or shape, a value not finite, rows not strictly increasing or
        outside the table, global rows repeated or outside it, global feature names other than the columns.
    """
    ws = manifest["workspace"]
    columns, n_table = ws["columns"], ws.get("n_rows")
    if type(n_table) is not int or n_table < 0:
        raise CandorError(f"store {folder}: the manifest does not say how many rows its table has")
    rows = loaded.get("rows.npy")
    n = len(rows) if isinstance(rows, np.ndarray) and rows.ndim == 1 else -1
    if (manifest.get("rows") or {}).get("stored") != n:
        raise CandorError(f"store {folder}: rows.npy holds {n} rows, the manifest says "
                          f"{(manifest.get('rows') or {}).get('stored')!r}")
    missing = sorted(required(n) - set(loaded))
    if missing:
        raise CandorError(f"store {folder}: {', '.join(missing)} not in the manifest; rebuild the store")
    grows = loaded["global_rows.npy"]
    g = len(grows) if grows.ndim == 1 else -1
    for name, arr in loaded.items():
        if name.endswith(".npy"):
            dtype, shape = _expected(name, n, g, len(columns), arr.shape[0] if arr.ndim == 1 else -1)
            if arr.dtype != dtype or arr.shape != shape:
                raise CandorError(f"store {folder}: {name} is {arr.dtype.str} {arr.shape}, expected {dtype.str} {shape} "
                                  f"({n} stored rows, {len(columns)} columns)")
    if n and (np.any(np.diff(rows) <= 0) or rows[0] < 0 or rows[-1] >= n_table):
        raise CandorError(f"store {folder}: rows.npy is not strictly increasing rows of the {n_table}-row table")
    if g and (len(np.unique(grows)) != g or grows.min() < 0 or grows.max() >= n_table):
        raise CandorError(f"store {folder}: global_rows.npy repeats rows or names rows outside the {n_table}-row table")
    for name in REPRODUCE_FILES:
        arr = loaded.get(name)
        if arr is not None and len(arr) and (arr.min() < 0 or arr.max() >= n_table):
            raise CandorError(f"store {folder}: {name} names rows outside the {n_table}-row table")
    for name, arr in loaded.items():  # feature values may be NaN (a missing value); everything else is a number
        if name.endswith(".npy") and arr.dtype == FLOAT and "feature_values" not in name:
            with np.errstate(over="ignore", invalid="ignore"):
                sums = arr.sum(axis=-1) if arr.ndim == 2 else arr
            if not np.all(np.isfinite(arr)) or not np.all(np.isfinite(sums)):
                raise CandorError(f"store {folder}: {name} holds values that are not finite numbers (or whose sum "
                                  "is not)")
        if name.endswith(".npy"):
            release_pages(arr)  # checked: its pages need not stay in this process's memory
    meta = manifest.get("global")
    if not isinstance(meta, dict) or meta.get("feature_names") != columns:
        raise CandorError(f"store {folder}: the manifest's global view names features other than the table's columns")
    return rows, {name[:-4]: arr for name, arr in loaded.items() if name.endswith(".npy") and name != "rows.npy"}


def check_documents(folder: Path, documents: dict, columns: list) -> dict:
    """Each stored method document (:data:`store.format.DOCUMENTS`) decoded, by method name.

    Raises
    ------
    CandorError
        If one is not its method's result of this table's columns (one line naming the file).
    """
    from . import codec

    out = {}
    for name, method in DOCUMENTS.items():
        if name not in documents:
            continue  # a store built before the method existed, or with it skipped: computed live
        try:
            result = codec.method_result_from_dict(method, documents[name])
            ok = list(result.feature_names) == list(columns)
        except Exception:  # noqa: BLE001  KeyError, TypeError, ValueError from a malformed document
            ok = False
        if not ok:
            raise CandorError(f"store {folder}: {name} is not a {method.replace('_', ' ')} of this table's columns")
        out[method] = result
    return out


def parse_json(folder: Path, name: str, data: bytearray) -> dict:
    """A stored JSON file's object, parsed from the bytes that were hashed.

    ``data`` is emptied once decoded (as ``json.loads`` decodes bytes: :func:`json.detect_encoding`), so the bytes,
    their text and the parsed object are never held at once: a store's ``persuasive_rows.json`` of 569 rows is
    21.7 MB, and holding all three at the server's start set its peak memory (issue 23).

    Raises
    ------
    CandorError
        If it is not a JSON object.
    """
    try:
        text = data.decode(json.detect_encoding(data), "surrogatepass")
    except UnicodeDecodeError:
        text = None
    if isinstance(data, bytearray):
        del data[:]
    try:
        value = None if text is None else json.loads(text)
    except Exception:  # noqa: BLE001  ValueError, RecursionError
        value = None
    if not isinstance(value, dict):
        raise CandorError(f"store {folder}: {name} is not a JSON object")
    return value
