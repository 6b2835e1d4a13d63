"""A store's structure checked at open, after its hashes: what the manifest's SHA-256 cannot promise.

A manifest is not signed: whoever can write the files can write matching hashes. So every part is
checked against the format (:mod:`store.format`) and the table the store is for before it is served:
the set of files, each array's exact dtype and shape, the stored rows (strictly increasing, in the
table), ``row_meta.parquet`` (its metadata before any row is read, so a decompression bomb is refused
unread; then every entry parsed) and the JSON files (parsed once, from the bytes that were hashed).
Each problem is one :class:`~workspace.errors.CandorError` line naming the store and the file.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from workspace.errors import CandorError
from .format import DOCUMENTS, MAX_ADDED_ROW_BYTES, METHODS
from .provenance import REPRODUCE_FILES

FLOAT, INT = np.dtype("<f8"), np.dtype("<i8")
GLOBAL = ("global_values.npy", "global_feature_values.npy", "global_se.npy")
PER_ROW = ("values", "se", "base", "prediction", "feature_values")
META_COLUMNS = ("row", *METHODS)
META_KEYS = ("method", "feature_names", "output_space", "target", "source")


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
    meta = manifest.get("global")
    if not isinstance(meta, dict) or meta.get("feature_names") != columns:
        raise CandorError(f"store {folder}: the manifest's global view names features other than the table's columns")
    return rows, {name[:-4]: arr for name, arr in loaded.items() if name.endswith(".npy") and name != "rows.npy"}


def check_row_meta(folder: Path, data: bytes | bytearray, rows: np.ndarray, columns: list,
                   max_bytes: int) -> dict[str, list]:
    """Each method's per-row JSON from ``row_meta.parquet``'s bytes, every entry parsed and checked.

    The Parquet metadata is read first: exactly :data:`META_COLUMNS`, as many rows as ``rows``; then every
    page header, each page at most ``CANDOR_MAX_CELL_MB`` (default 16 MiB) once unpacked and all of them at
    most :func:`meta_bytes` (``ENTRY_BYTES`` per entry, within ``max_bytes``), before anything is
    decompressed; the JSON columns are read as dictionary indices and each entry's length checked against
    ``ENTRY_BYTES`` before any entry is built (:mod:`workspace.parquet_limits`).

    Raises
    ------
    CandorError
        Malformed Parquet, other columns or row count, a page, an entry or the whole over its bound, a
        ``row`` column other than ``rows``, or an entry that is not a JSON object of an explanation of these
        columns.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    from workspace import limits, parquet_limits

    where = f"store {folder}: row_meta.parquet"
    try:
        pf = pq.ParquetFile(pa.BufferReader(data), read_dictionary=list(METHODS))  # the texts as dictionary indices
        md = pf.metadata
        names = list(pf.schema_arrow.names)
    except Exception as exc:  # noqa: BLE001  pyarrow raises several kinds for a malformed file
        raise CandorError(f"{where} is not a readable Parquet file ({type(exc).__name__})") from None
    if sorted(names) != sorted(META_COLUMNS) or md.num_rows != len(rows):
        raise CandorError(f"{where} has {md.num_rows} rows and columns {names[:5]}, expected {len(rows)} rows and "
                          f"columns {list(META_COLUMNS)}")
    bound = meta_bytes(len(rows), max_bytes)
    cell = min(limits.mib("CANDOR_MAX_CELL_MB"), bound)
    parquet_limits.check_pages(data, where=where, max_cell_bytes=cell, max_file_bytes=bound)

    def read(name: str, group: int | None = None):  # a column, or a column of a row group, at a time: the
        try:                                          # texts are most of the file and decompressed in Arrow's memory
            return pf.read(columns=[name]) if group is None else pf.read_row_group(group, columns=[name])
        except Exception as exc:  # noqa: BLE001
            raise CandorError(f"{where} cannot be read ({type(exc).__name__})") from None

    column = read("row").column("row")
    try:
        row = np.asarray(column.to_numpy(), dtype=np.int64)
    except Exception as exc:  # noqa: BLE001
        raise CandorError(f"{where} cannot be read ({type(exc).__name__})") from None
    if not np.array_equal(row, rows):
        raise CandorError(f"{where}: its row column is not rows.npy")
    shared, decoded, out = _Shared(columns), 0, {}
    for m in METHODS:
        out[m], i = [], 0
        for group in range(md.num_row_groups):  # stores built before ROW_GROUP: one group, read whole
            table = read(m, group)
            decoded = parquet_limits.check_decoded(table, [m], where=where, max_cell_bytes=ENTRY_BYTES,
                                                   max_file_bytes=bound, already=decoded)
            for start in range(0, len(table), META_BATCH):  # a batch of texts at a time, never all of them at once
                try:
                    texts = table.column(m).slice(start, META_BATCH).to_pylist()
                except Exception as exc:  # noqa: BLE001
                    raise CandorError(f"{where} cannot be read ({type(exc).__name__})") from None
                for t in texts:
                    try:
                        d = json.loads(t)
                    except Exception:  # noqa: BLE001  ValueError, TypeError (None), RecursionError (deep nesting)
                        d = None
                    if not isinstance(d, dict) or any(k not in d for k in META_KEYS) or d["feature_names"] != columns:
                        raise CandorError(f"{where}: the {m} entry of row {int(rows[i])} is not an explanation of "
                                          "this table's columns")
                    out[m].append(shared.entry(d))
                    i += 1
            del table
            pa.default_memory_pool().release_unused()  # pyarrow's allocator keeps what it freed (the texts)
    return out


META_BATCH = 1024
"""``row_meta.parquet`` entries turned into Python text a batch at a time (:func:`check_row_meta`)."""


class _Shared:
    """One object for each text that equals texts of other entries (:func:`check_row_meta`).

    Every row's entry repeats the table's column names (``feature_names``), its keys and, in its params, names and
    LIME's conditions drawn from a few hundred (``"37 < age <= 48"``): parsed one entry at a time each was a new
    object, and the full Adult store's 8,141 rows x 2 methods held 780 MB of them. Here ``feature_names`` becomes the
    table's own list (the caller checked them equal), and the keys of an entry, of its params and of their dicts,
    the short texts among their values and the texts in its params' lists are shared. A walk of every value took 6
    of 8 profiled seconds to open that store; these few places, most of the memory, a fraction of it.
    """

    def __init__(self, columns: list) -> None:
        self.columns = columns
        self.texts: dict[str, str] = {c: c for c in columns if isinstance(c, str)}

    def entry(self, d: dict) -> dict:
        d = self._keys(d)
        d["feature_names"] = self.columns
        params = d.get("params")
        if isinstance(params, dict):
            params = d["params"] = self._keys(params)
            for k, v in params.items():
                if isinstance(v, dict):
                    params[k] = self._keys(v)
                elif isinstance(v, list):
                    params[k] = self._texts(v)
        return d

    def _keys(self, d: dict) -> dict:
        texts = self.texts
        return {texts.setdefault(k, k): (texts.setdefault(v, v) if type(v) is str and len(v) < 64 else v)
                for k, v in d.items()}

    def _texts(self, v: list) -> list:
        texts = self.texts
        return [texts.setdefault(x, x) if type(x) is str else x for x in v]


ENTRY_BYTES = MAX_ADDED_ROW_BYTES
"""The most one ``row_meta.parquet`` entry may take: 4 MiB, as a row added live (``added/<method>/<row>.json``)."""


def meta_bytes(n_rows: int, max_bytes: int) -> int:
    """What ``row_meta.parquet`` of ``n_rows`` rows may unpack to: ``ENTRY_BYTES`` per entry and 1 MiB, within
    ``max_bytes`` (the store's limit)."""
    return min(max_bytes, 2**20 + n_rows * len(METHODS) * ENTRY_BYTES)


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
