"""CSV and Parquet export of study data that round-trips the database exactly.

One file per table (``studies``, ``participants``, ``trial_log``,
``questionnaire_responses``), rows ordered by primary key, columns in table
order. :func:`read_csv` and :func:`read_parquet` return the same Python values
the database returns (test: ``tests/study/test_study_export.py``).

CSV cell encoding (documented so that other readers can undo it)
----------------------------------------------------------------
- SQL NULL is an empty cell.
- Text and JSON cells are protected against spreadsheet formula injection
  (OWASP "CSV injection"): a cell whose text starts with ``=``, ``+``, ``-``,
  ``@``, tab or carriage return gets a leading apostrophe ``'``. So that this is
  reversible, a text starting with ``'`` itself, and the empty string (to tell it
  from NULL), also get one. Reading removes exactly one leading ``'`` from every
  non-empty text cell that has one. Numeric, boolean and timestamp columns are
  typed and never prefixed (a negative number stays a number).
- Booleans are ``true``/``false``; floats use Python's shortest round-trip
  ``repr`` (``nan``, ``inf`` included); timestamps are ISO 8601 with
  microseconds, naive UTC; JSON columns hold compact JSON with sorted keys.

Parquet stores the same types natively (timestamps as ``timestamp[us]``, JSON
as its text), so no escaping is needed there.
"""

from __future__ import annotations

import csv
import json
from datetime import datetime
from pathlib import Path
from typing import Any, Iterable

import pyarrow as pa
import pyarrow.parquet as pq
from sqlalchemy import JSON, Boolean, DateTime, Engine, Float, Integer, Table, select

from .models import TABLES

__all__ = [
    "DANGEROUS_PREFIXES", "escape_text", "unescape_text", "table_rows", "export_csv", "export_parquet",
    "read_csv", "read_parquet", "import_rows",
]

DANGEROUS_PREFIXES = ("=", "+", "-", "@", "\t", "\r")


def escape_text(value: str) -> str:
    """Prefix ``'`` to a text that a spreadsheet could run as a formula (see module doc).

    Examples
    --------
    >>> escape_text("=SUM(A1)"), escape_text("'quoted"), escape_text(""), escape_text("ok")
    ("'=SUM(A1)", "''quoted", "'", 'ok')
    """
    if value == "" or value.startswith(DANGEROUS_PREFIXES + ("'",)):
        return "'" + value
    return value


def unescape_text(cell: str) -> str:
    """Undo :func:`escape_text` (remove one leading ``'``)."""
    return cell[1:] if cell.startswith("'") else cell


def _kind(column) -> str:
    t = column.type
    for cls, name in ((JSON, "json"), (Boolean, "bool"), (DateTime, "datetime"), (Float, "float"), (Integer, "int")):
        if isinstance(t, cls):
            return name
    return "text"


def _table(name_or_table) -> Table:
    if isinstance(name_or_table, Table):
        return name_or_table
    for t in TABLES:
        if t.name == name_or_table:
            return t
    raise ValueError(f"unknown table {name_or_table!r}; expected one of {[t.name for t in TABLES]}")


def table_rows(engine: Engine, table, study_id: str | None = None) -> list[dict[str, Any]]:
    """Rows of ``table`` as dicts, ordered by primary key, optionally for one study."""
    table = _table(table)
    stmt = select(table).order_by(*table.primary_key.columns)
    if study_id is not None:
        stmt = stmt.where((table.c.id if table.name == "studies" else table.c.study_id) == study_id)
    with engine.connect() as conn:
        return [dict(r._mapping) for r in conn.execute(stmt)]


def _to_cell(kind: str, v: Any) -> str:
    if v is None:
        return ""
    if kind == "text":
        return escape_text(str(v))
    if kind == "json":
        return escape_text(json.dumps(v, sort_keys=True, separators=(",", ":"), ensure_ascii=False))
    if kind == "bool":
        return "true" if v else "false"
    if kind == "float":
        return repr(float(v))
    if kind == "datetime":
        return v.isoformat(timespec="microseconds")
    return str(int(v))


def _from_cell(kind: str, cell: str) -> Any:
    if cell == "":
        return None
    if kind == "text":
        return unescape_text(cell)
    if kind == "json":
        return json.loads(unescape_text(cell))
    if kind == "bool":
        if cell not in ("true", "false"):
            raise ValueError(f"expected 'true' or 'false', got {cell!r}")
        return cell == "true"
    if kind == "float":
        return float(cell)
    if kind == "datetime":
        return datetime.fromisoformat(cell)
    return int(cell)


def _tables(tables: Iterable | None) -> list[Table]:
    return [_table(t) for t in (tables or TABLES)]


def export_csv(engine: Engine, out_dir: str | Path, *, study_id: str | None = None, tables=None) -> list[Path]:
    """Write ``<table>.csv`` for each table into ``out_dir``; return the paths."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for table in _tables(tables):
        kinds = [(c.name, _kind(c)) for c in table.columns]
        path = out / f"{table.name}.csv"
        with path.open("w", newline="", encoding="utf-8") as fh:
            w = csv.writer(fh, quoting=csv.QUOTE_MINIMAL, lineterminator="\r\n")
            w.writerow([n for n, _ in kinds])
            for row in table_rows(engine, table, study_id):
                w.writerow([_to_cell(k, row[n]) for n, k in kinds])
        paths.append(path)
    return paths


#: Largest cell :func:`read_csv` accepts (the csv module's default, 128 KiB, is smaller than texts a
#: study may hold: item wording, the study file itself).
FIELD_SIZE_LIMIT = 2**31 - 1


def read_csv(path: str | Path, table) -> list[dict[str, Any]]:
    """Read a CSV written by :func:`export_csv` back into database values.

    Any stored text reads back, including commas, quotes, newlines and cells of
    any length up to :data:`FIELD_SIZE_LIMIT` characters.
    """
    if csv.field_size_limit() < FIELD_SIZE_LIMIT:
        csv.field_size_limit(FIELD_SIZE_LIMIT)  # process-wide; only ever raised
    table = _table(table)
    kinds = {c.name: _kind(c) for c in table.columns}
    with Path(path).open(newline="", encoding="utf-8") as fh:
        r = csv.reader(fh)
        header = next(r)
        if header != list(kinds):
            raise ValueError(f"expected columns {list(kinds)}, got {header}")
        return [{n: _from_cell(kinds[n], cell) for n, cell in zip(header, rec)} for rec in r]


_ARROW = {"text": pa.string(), "json": pa.string(), "bool": pa.bool_(), "float": pa.float64(),
          "int": pa.int64(), "datetime": pa.timestamp("us")}


def export_parquet(engine: Engine, out_dir: str | Path, *, study_id: str | None = None, tables=None) -> list[Path]:
    """Write ``<table>.parquet`` for each table into ``out_dir``; return the paths."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for table in _tables(tables):
        kinds = [(c.name, _kind(c)) for c in table.columns]
        rows = table_rows(engine, table, study_id)
        arrays = {}
        for n, k in kinds:
            vals = [r[n] for r in rows]
            if k == "json":
                vals = [None if v is None else json.dumps(v, sort_keys=True, separators=(",", ":")) for v in vals]
            arrays[n] = pa.array(vals, type=_ARROW[k])
        meta = {b"candor.json_columns": ",".join(n for n, k in kinds if k == "json").encode()}
        schema = pa.schema([pa.field(n, _ARROW[k]) for n, k in kinds], metadata=meta)
        path = out / f"{table.name}.parquet"
        pq.write_table(pa.table(arrays, schema=schema), path)
        paths.append(path)
    return paths


def read_parquet(path: str | Path, table) -> list[dict[str, Any]]:
    """Read a Parquet file written by :func:`export_parquet` back into database values.

    Its pages and text cells are bounded before they unpack (``CANDOR_MAX_CELL_MB``, ``CANDOR_MAX_TABLE_MB``;
    :mod:`workspace.parquet_limits`), as for every Parquet file Candor reads.
    """
    from workspace import limits, parquet_limits

    table = _table(table)
    kinds = {c.name: _kind(c) for c in table.columns}
    where, cell, most = Path(path).name, limits.mib("CANDOR_MAX_CELL_MB"), limits.mib("CANDOR_MAX_TABLE_MB")
    parquet_limits.check_pages(path, where=where, max_cell_bytes=cell, max_file_bytes=most)
    parquet_limits.check_text(path, where=where, max_cell_bytes=cell, max_file_bytes=most)
    rows = pq.read_table(path).to_pylist()
    for row in rows:
        for n, k in kinds.items():
            if k == "json" and row[n] is not None:
                row[n] = json.loads(row[n])
    return rows


def import_rows(engine: Engine, table, rows: list[dict[str, Any]]) -> int:
    """Insert exported rows into an empty, migrated database (restore); return the count."""
    table = _table(table)
    if rows:
        with engine.begin() as conn:
            conn.execute(table.insert(), rows)
    return len(rows)
