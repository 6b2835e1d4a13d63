"""``row_meta.parquet``: each stored row's explanation beyond its arrays (source, params), read when a row is asked.

At open (:func:`check_row_meta`) the file is judged without turning one entry into Python: its Parquet metadata
(exactly :data:`META_COLUMNS`, as many rows as the store), every page header before anything is decompressed, the
``row`` column equal to the stored rows, and every text's decoded length, per entry and in sum
(:mod:`workspace.parquet_limits`). An entry is parsed and checked when its row is asked (:meth:`RowMeta.entry`), from
the same bytes that were hashed, as a row added live is checked each time it is read.

Parsed at open, the full Adult store's 16,282 entries (8,141 rows, SHAP and LIME) held 57 MB of Python objects even
with what rows repeat shared, and took 1.9 of the 2.0 s of opening it (issue 23): the server's peak memory stayed
1.14x the peer's and its landing 0.27-0.32x. Read when asked, the file's own bytes (13.5 MB, compressed) are what is
held; an entry costs the decompression of its row group (:data:`store.write.ROW_GROUP` rows) and one ``json.loads``.
"""
from __future__ import annotations

import json
import threading

import numpy as np

from workspace.errors import CandorError
from .format import MAX_ADDED_ROW_BYTES, METHODS

META_COLUMNS = ("row", *METHODS)
META_KEYS = ("method", "feature_names", "output_space", "target", "source")

ENTRY_BYTES = MAX_ADDED_ROW_BYTES
"""The most one ``row_meta.parquet`` entry may take: 4 MiB, as a row added live (``added/<method>/<row>.json``)."""


def meta_bytes(n_rows: int, max_bytes: int) -> int:
    """What ``row_meta.parquet`` of ``n_rows`` rows may unpack to: ``ENTRY_BYTES`` per entry and 1 MiB, within
    ``max_bytes`` (the store's limit)."""
    return min(max_bytes, 2**20 + n_rows * len(METHODS) * ENTRY_BYTES)


class RowMeta:
    """The checked ``row_meta.parquet`` of a store: an entry parsed and checked when asked (:func:`check_row_meta`).

    Parameters
    ----------
    where : str
        How errors name the file (``store <folder>: row_meta.parquet``).
    parquet : pyarrow.parquet.ParquetFile
        Over the bytes hashed at open, its text columns read as dictionary indices.
    rows : ndarray
        (N,) int64, the stored rows (errors name a row by it).
    columns : list of str
        The table's columns: every entry's ``feature_names``.
    """

    def __init__(self, where: str, parquet, rows: np.ndarray, columns: list) -> None:
        self.where, self._pf, self._rows = where, parquet, rows
        sizes = [parquet.metadata.row_group(g).num_rows for g in range(parquet.metadata.num_row_groups)]
        self._starts = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        self._shared = _Shared(columns)
        self._last: dict[str, tuple[int, object]] = {}  # method -> (group, its text column): rows read in order
        self._lock = threading.Lock()  # one reader of the ParquetFile and of the shared texts at a time

    def __contains__(self, method: str) -> bool:
        return method in METHODS

    def __len__(self) -> int:
        return len(self._rows)

    def entry(self, method: str, i: int) -> dict:
        """The parsed entry of the ``i``-th stored row (position in ``rows``) by ``method``.

        Its keys, params' keys, short texts and the texts of its params' lists are shared with the entries read before
        (:class:`_Shared`); ``feature_names`` is the table's own list.

        Raises
        ------
        CandorError
            If the entry is not a JSON object of an explanation of this table's columns (one line naming the row), or
            the file cannot be read.
        """
        d = self._checked(method, i)
        with self._lock:
            return self._shared.entry(d)

    def _checked(self, method: str, i: int) -> dict:
        g = int(np.searchsorted(self._starts, i, side="right")) - 1
        with self._lock:
            last = self._last.get(method)
            if last is None or last[0] != g:
                last = self._last[method] = (g, _read(self._pf, self.where, method, g).column(method))
                _release()  # the group read before, and the pages decompressed for this one: mimalloc keeps them
            try:
                text = last[1][i - int(self._starts[g])].as_py()
            except Exception as exc:  # noqa: BLE001
                raise CandorError(f"{self.where} cannot be read ({type(exc).__name__})") from None
        try:
            d = json.loads(text)
        except Exception:  # noqa: BLE001  ValueError, TypeError (None), RecursionError (deep nesting)
            d = None
        if not isinstance(d, dict) or any(k not in d for k in META_KEYS) or d["feature_names"] != self._shared.columns:
            raise CandorError(f"{self.where}: the {method} entry of row {int(self._rows[i])} is not an explanation of "
                              "this table's columns")
        return d

    def check_all(self) -> None:
        """Parse and check every entry (:meth:`entry`), as the CLI commands that load a ``--store`` do
        (:func:`app.cli.model_flags.load_workspace`: ``python -m app study validate`` and others).

        Raises
        ------
        CandorError
            The first entry that is not an explanation of this table's columns.
        """
        for method in METHODS:
            for i in range(len(self._rows)):
                self._checked(method, i)  # not kept, nor its texts shared
        with self._lock:
            self._last.clear()


def _release() -> None:
    """Give back what pyarrow's allocator (mimalloc) holds freed: 14 MB after 20 rows read from the full Adult store."""
    import pyarrow as pa

    pa.default_memory_pool().release_unused()


def _read(pf, where: str, name: str, group: int | None = None):
    """A column of ``pf``, or of one of its row groups (a store built before row groups has one)."""
    try:
        return pf.read(columns=[name]) if group is None else pf.read_row_group(group, columns=[name])
    except Exception as exc:  # noqa: BLE001  pyarrow raises several kinds for a malformed file
        raise CandorError(f"{where} cannot be read ({type(exc).__name__})") from None


def check_row_meta(folder, data: bytes | bytearray, rows: np.ndarray, columns: list, max_bytes: int) -> RowMeta:
    """``row_meta.parquet``'s bytes judged without building an entry, then served a row at a time (:class:`RowMeta`).

    The Parquet metadata is read first: exactly :data:`META_COLUMNS`, as many rows as ``rows``; then every
    page header, each page at most ``CANDOR_MAX_CELL_MB`` (default 16 MiB) once unpacked and all of them at
    most :func:`meta_bytes` (``ENTRY_BYTES`` per entry, within ``max_bytes``), before anything is
    decompressed; the ``row`` column must equal ``rows``; the JSON columns are read a row group at a time as
    dictionary indices and each entry's decoded length checked against ``ENTRY_BYTES``, their sum against
    :func:`meta_bytes` (:mod:`workspace.parquet_limits`). ``data`` must not change afterwards: entries are read from it.

    Raises
    ------
    CandorError
        Malformed Parquet, other columns or row count, a page, an entry or the whole over its bound, a
        ``row`` column other than ``rows``.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    from workspace import limits, parquet_limits

    where = f"store {folder}: row_meta.parquet"
    try:
        pf = pq.ParquetFile(pa.py_buffer(data), read_dictionary=list(METHODS))  # the texts as dictionary indices
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
    try:
        row = np.asarray(_read(pf, where, "row").column("row").to_numpy(), dtype=np.int64)
    except CandorError:
        raise
    except Exception as exc:  # noqa: BLE001
        raise CandorError(f"{where} cannot be read ({type(exc).__name__})") from None
    if not np.array_equal(row, rows):
        raise CandorError(f"{where}: its row column is not rows.npy")
    decoded = 0
    for m in METHODS:
        for group in range(md.num_row_groups):  # one column of one group in memory at a time
            decoded = parquet_limits.check_decoded(_read(pf, where, m, group), [m], where=where,
                                                   max_cell_bytes=ENTRY_BYTES, max_file_bytes=bound, already=decoded)
    _release()  # the decompressed texts
    return RowMeta(where, pf, rows, columns)


class _Shared:
    """One object for each text that equals texts of other entries (:meth:`RowMeta.entry`).

    Every row's entry repeats the table's column names (``feature_names``), its keys and, in its params, names and
    LIME's conditions drawn from a few hundred (``"37 < age <= 48"``): parsed one entry at a time each was a new
    object, and the full Adult store's 8,141 rows x 2 methods held 780 MB of them when all were parsed at open. Here
    ``feature_names`` becomes the table's own list (the caller checked them equal), and the keys of an entry, of its
    params and of their dicts, the short texts among their values and the texts in its params' lists are shared.
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
