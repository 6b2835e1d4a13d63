"""Parquet read within stated bounds: every page before it is inflated, every cell before it is built.

Why: a Parquet file says in its footer how big it is, and pyarrow believes the page headers, so a small
file may unpack to anything. A store's ``row_meta.parquet`` with one 64 MiB cell (zstd: a few KiB) cost
440 MiB of memory before it was refused (the only bound was the store's 8 GiB); a table whose text column
is dictionary-encoded may repeat one 1 MiB entry on every row, a million times that once decoded, from a
file of a few KiB. This module is the one reader of untrusted Parquet (uploads, data files, stores):

- **pages**: each column chunk's page headers (Thrift, read here without pyarrow) give the size each page
  inflates to; a page over ``max_cell_bytes`` or a file whose pages sum over ``max_file_bytes`` is refused
  before anything is decompressed. A page holds whole values, so this bounds each plain cell too;
- **dictionaries**: a dictionary-encoded text column is read as indices into its dictionary, and each
  cell's length is summed from them; a cell over ``max_cell_bytes`` or a decoded total over
  ``max_file_bytes`` is refused before a cell is built;
- **DELTA_BYTE_ARRAY** (each value a prefix of the last plus a suffix: unbounded once decoded) is refused;
  pyarrow, pandas and Spark write it only when asked.
"""
from __future__ import annotations

import mmap
import os
from pathlib import Path

from workspace.errors import CandorError

PAGE_HEADER_MAX = 16 * 2**20
"""The most bytes one page header may take (its statistics included)."""
_DICTIONARY = {"PLAIN_DICTIONARY", "RLE_DICTIONARY"}


def _varint(buf, pos: int) -> tuple[int, int]:
    shift = value = 0
    while True:
        byte = buf[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, pos
        shift += 7
        if shift > 63:
            raise ValueError("varint too long")


def _zigzag(n: int) -> int:
    return (n >> 1) ^ -(n & 1)


def _skip(buf, pos: int, kind: int, depth: int) -> int:
    """Skip one Thrift compact value of ``kind``; returns the position after it."""
    if depth > 16:
        raise ValueError("nested too deep")
    if kind in (1, 2):  # booleans in a struct: the type is the value
        return pos
    if kind == 3:
        return pos + 1
    if kind in (4, 5, 6):
        return _varint(buf, pos)[1]
    if kind == 7:
        return pos + 8
    if kind == 8:
        size, pos = _varint(buf, pos)
        return pos + size
    if kind in (9, 10):
        head = buf[pos]
        pos += 1
        size, elem = head >> 4, head & 0x0F
        if size == 15:
            size, pos = _varint(buf, pos)
        if size > len(buf) - pos:  # each element takes a byte at least: a larger count is a lie (and a long loop)
            raise ValueError("list longer than the file")
        for _ in range(size):
            pos = pos + 1 if elem in (1, 2) else _skip(buf, pos, elem, depth + 1)
        return pos
    if kind == 11:
        size, pos = _varint(buf, pos)
        if size > len(buf) - pos:
            raise ValueError("map longer than the file")
        if size:
            types = buf[pos]
            pos += 1
            for _ in range(size):
                pos = _skip(buf, _skip(buf, pos, types >> 4, depth + 1), types & 0x0F, depth + 1)
        return pos
    if kind == 12:
        return _struct(buf, pos, depth + 1)[1]
    raise ValueError(f"unknown Thrift type {kind}")


def _struct(buf, pos: int, depth: int = 0) -> tuple[dict[int, int], int]:
    """A Thrift compact struct's integer fields (others skipped); returns them and the position after it."""
    fields, last = {}, 0
    while True:
        head = buf[pos]
        pos += 1
        if head == 0:
            return fields, pos
        kind, delta = head & 0x0F, head >> 4
        if delta:
            field = last + delta
        else:
            raw, pos = _varint(buf, pos)
            field = _zigzag(raw)
        last = field
        if kind in (4, 5, 6):
            raw, pos = _varint(buf, pos)
            fields[field] = _zigzag(raw)
        else:
            pos = _skip(buf, pos, kind, depth)


def page_sizes(buf, start: int, length: int) -> list[tuple[int, int]]:
    """``(uncompressed, compressed)`` bytes of each page of one column chunk, from its page headers.

    Parameters
    ----------
    buf : bytes, memoryview or mmap
        The whole file.
    start, length : int
        The chunk's first page (its dictionary page if any) and its compressed length, from the footer.

    Raises
    ------
    ValueError
        A header that is malformed, runs past the chunk, or states a negative size.
    """
    pos, end, pages = start, start + length, []
    if length == 0:  # an empty table's chunks (no rows: no pages)
        return pages
    if start < 4 or end > len(buf) - 8 or length < 0:
        raise ValueError("a column chunk lies outside the file")
    while pos < end:
        header, after = _struct(buf, pos)
        uncompressed, compressed = header.get(2, -1), header.get(3, -1)
        if uncompressed < 0 or compressed < 0 or after - pos > PAGE_HEADER_MAX or after + compressed > end:
            raise ValueError("a page header is malformed")
        pages.append((uncompressed, compressed))
        pos = after + compressed
    return pages


def _where_and_buffer(source):
    if isinstance(source, (bytes, bytearray, memoryview)):
        return memoryview(source), None
    fd = os.open(source, os.O_RDONLY)
    try:
        size = os.fstat(fd).st_size
        return (mmap.mmap(fd, 0, access=mmap.ACCESS_READ) if size else memoryview(b"")), fd
    except BaseException:
        os.close(fd)
        raise


def check_pages(source, *, where: str, max_cell_bytes: int, max_file_bytes: int) -> int:
    """Refuse a Parquet file one of whose pages, or all of them, would inflate past the bounds.

    Parameters
    ----------
    source : path or bytes
        The file.
    where : str
        How refusals name it.
    max_cell_bytes, max_file_bytes : int
        The most one page (so any plain cell in it) and all pages may inflate to.

    Returns
    -------
    int
        The bytes all pages inflate to.

    Raises
    ------
    CandorError
        Not readable Parquet, a malformed page header, a DELTA_BYTE_ARRAY column, a page over
        ``max_cell_bytes`` or pages summing over ``max_file_bytes``; one line with the numbers.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    buf, fd = _where_and_buffer(source)
    try:
        try:
            reader = pa.BufferReader(source if isinstance(source, bytes) else bytes(source)) if fd is None else Path(source)
            meta = pq.ParquetFile(reader).metadata
        except Exception as exc:  # noqa: BLE001  pyarrow raises several kinds for a malformed file
            raise CandorError(f"{where}: not a readable Parquet file ({type(exc).__name__})") from None
        total = 0
        for g in range(meta.num_row_groups):
            group = meta.row_group(g)
            for c in range(group.num_columns):
                chunk = group.column(c)
                if "DELTA_BYTE_ARRAY" in chunk.encodings:
                    raise CandorError(f"{where}: column {chunk.path_in_schema!r} uses DELTA_BYTE_ARRAY, whose values "
                                      "may unpack to any size; write the file with pyarrow's or pandas' defaults")
                first = chunk.dictionary_page_offset if chunk.has_dictionary_page else chunk.data_page_offset
                try:
                    pages = page_sizes(buf, first, chunk.total_compressed_size)
                except (ValueError, IndexError):
                    raise CandorError(f"{where}: column {chunk.path_in_schema!r} has malformed page headers") from None
                for uncompressed, _ in pages:
                    if uncompressed > max_cell_bytes:
                        raise CandorError(f"{where}: a page of column {chunk.path_in_schema!r} unpacks to "
                                          f"{uncompressed:,} bytes, over the {max_cell_bytes:,}-byte limit of one "
                                          "page or cell (CANDOR_MAX_CELL_MB; an operator can raise it)")
                    total += uncompressed
                if total > max_file_bytes:
                    raise CandorError(f"{where}: its pages unpack to over {max_file_bytes:,} bytes (at least "
                                      f"{total:,})")
        return total
    finally:
        if fd is not None:
            if isinstance(buf, mmap.mmap):
                buf.close()
            os.close(fd)


def dictionary_text_columns(parquet_file) -> list[str]:
    """Top-level text or binary columns with a dictionary-encoded chunk (whose cells decode to any size)."""
    flat = set(parquet_file.schema_arrow.names)
    meta, out = parquet_file.metadata, []
    for c in range(meta.num_columns):
        col = parquet_file.schema.column(c)
        if col.physical_type not in ("BYTE_ARRAY", "FIXED_LEN_BYTE_ARRAY"):
            continue
        if any(_DICTIONARY & set(meta.row_group(g).column(c).encodings) for g in range(meta.num_row_groups)):
            if col.path not in flat:
                raise CandorError(f"column {col.path!r}: nested dictionary-encoded text is not read")
            out.append(col.path)
    return out


def check_text(source, *, where: str, max_cell_bytes: int, max_file_bytes: int) -> int:
    """:func:`check_decoded` of every dictionary-encoded text column of the Parquet file ``source`` (a path).

    Raises
    ------
    CandorError
        As :func:`check_decoded`, or nested dictionary-encoded text.
    """
    import pyarrow.parquet as pq

    text = dictionary_text_columns(pq.ParquetFile(source))
    if not text:
        return 0
    table = pq.ParquetFile(source, read_dictionary=text).read(columns=text)
    return check_decoded(table, text, where=where, max_cell_bytes=max_cell_bytes, max_file_bytes=max_file_bytes)


def check_decoded(table, columns: list[str], *, where: str, max_cell_bytes: int, max_file_bytes: int,
                  already: int = 0) -> int:
    """Refuse dictionary-encoded ``columns`` of ``table`` whose cells would decode past the bounds.

    ``table`` holds them as read by ``pyarrow.parquet.ParquetFile(..., read_dictionary=columns)``: indices
    into a dictionary, so nothing is decoded yet; each cell's length is taken from its dictionary entry.
    ``already``: bytes the file's other columns, read and checked before, decode to (a file read a column at a
    time: the bound is on the whole file).

    Returns
    -------
    int
        The bytes those columns' cells decode to, with ``already``.

    Raises
    ------
    CandorError
        A cell over ``max_cell_bytes`` or cells summing over ``max_file_bytes``.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    total = already
    for name in columns:
        for chunk in table.column(name).chunks:
            if not pa.types.is_dictionary(chunk.type) or len(chunk) == 0:
                continue
            lengths = pc.take(pc.binary_length(chunk.dictionary), chunk.indices)
            largest = pc.max(lengths).as_py() or 0
            if largest > max_cell_bytes:
                raise CandorError(f"{where}: a cell of column {name!r} decodes to {largest:,} bytes, over the "
                                  f"{max_cell_bytes:,}-byte limit of one cell (CANDOR_MAX_CELL_MB; an operator can raise it)")
            total += pc.sum(lengths).as_py() or 0
            if total > max_file_bytes:
                raise CandorError(f"{where}: its text columns decode to over {max_file_bytes:,} bytes (at least "
                                  f"{total:,}; a dictionary entry repeated on many rows)")
    return total
