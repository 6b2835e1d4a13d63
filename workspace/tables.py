"""Read the user's data file (CSV/TSV/TXT or Parquet) and say what was done to it.

Every normalisation is reported as a note (shown by ``python -m app check``
and on the Model & data page), never silent:

- the delimiter is sniffed among ``,`` ``;`` tab ``|``; after ``", "`` leading
  spaces are dropped (``skipinitialspace``), as in UCI Adult;
- when the file has unbalanced double quotes that make the parser swallow line
  breaks (UCI imdb sentences: 748 rows instead of 1,000), the file is read again
  with quotes taken literally (``csv.QUOTE_NONE``);
- duplicate header names are reported with the names pandas gave the copies
  (COMPAS: ``decile_score`` -> ``decile_score.1``);
- a header row that looks like data (mostly numbers) is an error: the file has
  no header and its first row would silently become column names.

Before a table is read, its size is checked cheaply (:func:`table_shape`: a CSV's header and its
line count, streamed; a Parquet file's metadata) against ``CANDOR_MAX_CELLS`` rows x columns and
``CANDOR_MAX_TABLE_MB`` of estimated memory (:mod:`workspace.limits`), so that an oversized file is
refused with its numbers instead of filling the server's memory.
"""
from __future__ import annotations

import csv
import io
import re
from collections import Counter
from pathlib import Path

import pandas as pd

from . import limits, parquet_limits
from .errors import CandorError, first_line

CSV_SUFFIXES = (".csv", ".tsv", ".txt", ".data", ".test")
PARQUET_SUFFIXES = (".parquet", ".pq")
SNIFF_BYTES = 1 << 16
SAMPLE_ROWS = 1000
SAMPLE_CELLS = 100_000
"""At most this many cells of a CSV are parsed for :func:`estimated_bytes` (fewer rows than :data:`SAMPLE_ROWS` past 100
columns: a 200-row, 10,000-column table was parsed whole twice, issue 27)."""
CHUNK = 1 << 20


def _numeric(text: str) -> bool:
    try:
        float(text)
        return True
    except ValueError:
        return False


def _sniff(head: str) -> tuple[str, bool]:
    lines = [ln for ln in head.split("\n")[:20] if ln.strip()]
    best, best_score = ",", -1
    for sep in (",", ";", "\t", "|"):
        counts = [ln.count(sep) for ln in lines]
        if counts and min(counts) > 0:
            score = min(counts) + (100 if len(set(counts)) == 1 else 0)
            if score > best_score:
                best, best_score = sep, score
    spaced = bool(lines) and all(f"{best} " in ln for ln in lines[:5] if best in ln)
    return best, spaced


def _csv_problem(exc: csv.Error) -> str:
    """What a ``csv.Error`` from reading a header line means, in the user's terms."""
    text = str(exc)
    if text.startswith("new-line character"):
        return ("its header line holds a bare carriage return (\\r) outside quotes; save the file with \\n or "
                "\\r\\n line ends")
    if text.startswith("field larger than field limit"):
        return f"a column name in its header line is longer than {csv.field_size_limit():,} characters"
    return f"header line: {first_line(exc)}"


def _header(line: str, sep: str, spaced: bool, name: str) -> list[str]:
    """The fields of a CSV's header ``line``.

    Parameters
    ----------
    line : str
        The file's first line, without its ``\\n``.
    sep : str
        The sniffed delimiter.
    spaced : bool
        Whether spaces after each delimiter are dropped.
    name : str
        The file's name, for the error.

    Returns
    -------
    list of str
        The header's fields (empty for an empty line).

    Raises
    ------
    CandorError
        ``"<name>: not a readable CSV (...)"`` naming what :mod:`csv` could not parse (a bare carriage
        return, a field over :func:`csv.field_size_limit`), instead of letting ``_csv.Error`` escape.
    """
    try:
        return next(csv.reader(io.StringIO(line), delimiter=sep, skipinitialspace=spaced), [])
    except csv.Error as exc:
        raise CandorError(f"{name}: not a readable CSV ({_csv_problem(exc)})") from None


def _read_csv(path: Path, notes: list[str]) -> pd.DataFrame:
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8")
        encoding = "utf-8"
    except UnicodeDecodeError:
        text, encoding = raw.decode("latin-1"), "latin-1"
        notes.append(f"{path.name}: not valid UTF-8; read as Latin-1")
    sep, spaced = _sniff(text[:SNIFF_BYTES])
    if sep != ",":
        notes.append(f"{path.name}: columns separated by {sep!r}")
    if spaced:
        notes.append(f"{path.name}: spaces after each {sep!r} dropped (skipinitialspace)")
    kwargs = dict(sep=sep, skipinitialspace=spaced, encoding=encoding)
    try:
        df = pd.read_csv(io.BytesIO(raw), **kwargs)  # the bytes: a StringIO of the text holds 4 bytes a character
        data_lines = sum(1 for _ in re.finditer(r"^[^\S\n]*\S", text, re.M)) - 1  # non-blank lines, no list
        if len(df) < data_lines and '"' in text:
            literal = pd.read_csv(io.BytesIO(raw), quoting=csv.QUOTE_NONE, **kwargs)
            if len(literal) == data_lines:
                notes.append(f"{path.name}: unbalanced double quotes merged lines ({len(df):,} rows instead of "
                             f"{data_lines:,}); read again with quotes taken literally")
                df = literal
    except (pd.errors.ParserError, UnicodeDecodeError, pd.errors.EmptyDataError, ValueError, csv.Error) as exc:
        raise CandorError(f"{path.name}: not a readable CSV ({first_line(exc)})") from None
    header = _header(text.split("\n", 1)[0], sep, spaced, path.name)
    if header and sum(_numeric(h) for h in header) >= max(2, len(header) // 3):
        raise CandorError(f"{path.name}: the first row looks like data ({', '.join(header[:3])}, ...), not column "
                          "names; add a header row with the column names")
    dupes = sorted(h for h, n in Counter(header).items() if n > 1)  # not header.count per name: 10,000² steps
    if dupes:
        renamed = ", ".join(f"{d!r} -> {d + '.1'!r}" for d in dupes)
        notes.append(f"{path.name}: duplicate column names; the later copies are renamed {renamed}")
    return df


def read_table(path: str | Path, notes: list[str] | None = None) -> pd.DataFrame:
    """Read a CSV-like or Parquet file; ``notes`` receives one line per normalisation.

    Parameters
    ----------
    path : str or Path
    notes : list of str, optional
        Appended to, in place.

    Returns
    -------
    DataFrame with at least one row; column labels as in the file.

    Raises
    ------
    CandorError
        Missing file, unknown suffix, unreadable content, no header, no rows, or over the size limits
        (:func:`check_size`).
    """
    path, notes = Path(path), notes if notes is not None else []
    if not path.is_file():
        raise CandorError(f"data file not found: {path}")
    suffix = path.suffix.lower()
    if suffix in PARQUET_SUFFIXES + CSV_SUFFIXES:
        check_size(path)
    if suffix in PARQUET_SUFFIXES:
        _check_flat(path)
        _check_dictionaries(path)
        try:
            df = pd.read_parquet(path)
        except Exception as exc:  # pyarrow raises its own error types
            raise CandorError(f"{path.name}: not a readable Parquet file ({first_line(exc)})") from None
        if not df.columns.is_unique:
            raise CandorError(f"{path.name}: duplicate column names {sorted(set(df.columns[df.columns.duplicated()]))}")
    elif suffix in CSV_SUFFIXES:
        df = _read_csv(path, notes)
    else:
        raise CandorError(f"{path.name}: unsupported data file type {path.suffix or '(none)'}; expected "
                          f"{', '.join(CSV_SUFFIXES + PARQUET_SUFFIXES)}")
    if df.empty:
        raise CandorError(f"{path.name}: the table has no rows")
    return df


def _head_text(path: Path) -> str:
    with open(path, "rb") as fh:
        head = fh.read(SNIFF_BYTES)
    try:
        return head.decode("utf-8")
    except UnicodeDecodeError as err:
        return head[:err.start].decode("utf-8") if err.start > len(head) - 4 else head.decode("latin-1")


def _csv_shape(path: Path) -> tuple[int, int, str]:
    head = _head_text(path)
    sep, spaced = _sniff(head)
    header = _header(head.split("\n", 1)[0], sep, spaced, path.name)
    lines, last = 0, b"\n"
    with open(path, "rb") as fh:
        while chunk := fh.read(CHUNK):
            lines, last = lines + chunk.count(b"\n"), chunk[-1:]
    lines += last != b"\n"
    return max(lines - 1, 0), len(header), sep


def _parquet_meta(path: Path):
    import pyarrow.parquet as pq

    try:
        return pq.ParquetFile(path).metadata
    except Exception as exc:  # pyarrow raises its own error types
        raise CandorError(f"{path.name}: not a readable Parquet file ({first_line(exc)})") from None


def _check_flat(path: Path) -> None:
    """Refuse columns of lists, structs or maps (a Parquet file may hold them; found by an attack, issue 27: they
    reached the explainers and failed as ``TypeError: unhashable type``), naming them."""
    import pyarrow as pa

    schema = _parquet_meta(path).schema.to_arrow_schema()
    nested = [f.name for f in schema if pa.types.is_nested(f.type)]
    if nested:
        shown = ", ".join(map(repr, nested[:5])) + (" ..." if len(nested) > 5 else "")
        raise CandorError(f"{path.name}: column{'s' if len(nested) > 1 else ''} {shown} "
                          f"{'hold' if len(nested) > 1 else 'holds'} lists, records or maps; "
                          "Candor explains columns of numbers, text, categories and dates")


def _check_dictionaries(path: Path) -> None:
    """Refuse dictionary-encoded text whose cells would decode past ``CANDOR_MAX_CELL_MB`` or the table limit
    (read as dictionary indices first, so nothing is decoded; :mod:`workspace.parquet_limits`)."""
    try:
        parquet_limits.check_text(path, where=path.name, max_cell_bytes=limits.mib("CANDOR_MAX_CELL_MB"),
                                  max_file_bytes=limits.mib("CANDOR_MAX_TABLE_MB"))
    except CandorError as err:
        raise CandorError(str(err) if str(err).startswith(path.name) else f"{path.name}: {err}") from None
    except Exception as exc:  # pyarrow raises its own error types
        raise CandorError(f"{path.name}: not a readable Parquet file ({first_line(exc)})") from None


def table_shape(path: str | Path) -> tuple[int, int]:
    """Rows and columns of a table file without loading it (a CSV's line count is an upper bound on its rows).

    Parameters
    ----------
    path : str or Path
        A CSV-like or Parquet file.

    Returns
    -------
    (int, int)
        Data rows (lines after the header) and columns (fields of the header, or the Parquet schema's).

    Raises
    ------
    CandorError
        Unreadable Parquet metadata, or an unsupported suffix.
    """
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix in PARQUET_SUFFIXES:
        meta = _parquet_meta(path)
        return meta.num_rows, meta.num_columns
    if suffix in CSV_SUFFIXES:
        rows, columns, _ = _csv_shape(path)
        return rows, columns
    raise CandorError(f"{path.name}: unsupported data file type {path.suffix or '(none)'}")


def estimated_bytes(path: str | Path) -> int:
    """Memory, in bytes, that reading the table is expected to take (an estimate, refused above the limit).

    A CSV: its first :data:`SAMPLE_ROWS` rows (fewer past 100 columns: :data:`SAMPLE_CELLS` cells) are parsed and
    their pandas memory (strings included)
    scaled to the line count, plus three times the file's size (the bytes, the decoded text and the
    parser's buffers are held while reading). A Parquet file: the larger of twice what its pages unpack
    to (from the page headers, not the footer; a page over ``CANDOR_MAX_CELL_MB`` or pages over
    ``CANDOR_MAX_TABLE_MB`` are refused here, :func:`workspace.parquet_limits.check_pages`) and 8 bytes per cell.
    """
    path = Path(path)
    if path.suffix.lower() in PARQUET_SUFFIXES:
        meta = _parquet_meta(path)
        raw = parquet_limits.check_pages(path, where=path.name, max_cell_bytes=limits.mib("CANDOR_MAX_CELL_MB"),
                                         max_file_bytes=limits.mib("CANDOR_MAX_TABLE_MB"))
        return max(2 * raw, 8 * meta.num_rows * meta.num_columns)
    rows, columns, sep = _csv_shape(path)
    size = path.stat().st_size
    try:
        sample = pd.read_csv(path, sep=sep, nrows=max(1, min(SAMPLE_ROWS, SAMPLE_CELLS // max(columns, 1))),
                             encoding_errors="replace", engine="c")
    except (pd.errors.ParserError, pd.errors.EmptyDataError, ValueError, UnicodeDecodeError, csv.Error):
        return 4 * size  # read_table names the problem
    per_row = sample.memory_usage(deep=True).sum() / max(len(sample), 1)
    return int(per_row * rows) + 3 * size


def check_size(path: str | Path) -> None:
    """Refuse a table over ``CANDOR_MAX_CELLS`` rows x columns or ``CANDOR_MAX_TABLE_MB`` of estimated memory.

    ``path`` must be a regular file: :func:`read_table` refuses anything else first (``Path.is_file`` is
    False for a device or a FIFO, which have no size to check and may never end).

    Raises
    ------
    CandorError
        Naming the file, its numbers, the limit and the variable that raises it.
    """
    path = Path(path)
    rows, columns = table_shape(path)
    limits.check_cells(rows, columns, path.name)
    need, limit = estimated_bytes(path), limits.mib("CANDOR_MAX_TABLE_MB")
    if need > limit:
        raise CandorError(f"{path.name}: {rows:,} rows x {columns:,} columns would take about {need / 2**20:,.0f} MiB "
                          f"of memory, over the limit of {limit / 2**20:,.0f} MiB (CANDOR_MAX_TABLE_MB; an operator "
                          "can raise it)")
