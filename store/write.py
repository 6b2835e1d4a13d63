"""Writing a store's files atomically: a temporary file in the same folder, then ``os.replace``.

A reader (another gunicorn worker) sees the old file or the new one, never half of one. Only
``.npy`` (no object arrays), Parquet and JSON are written: nothing that runs code when read.
"""
from __future__ import annotations

import io
import json
import os
import shutil
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

from workspace.errors import CandorError
from .format import HOLDS, MANIFEST
from .hashes import file_sha256


def atomic_write(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file in the same folder and ``os.replace``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.chmod(tmp, 0o644)  # readable by every server worker, as a plain file would be
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def npy_bytes(array: np.ndarray) -> bytes:
    """``array`` as ``.npy`` bytes; object arrays are refused (they would need pickle).

    Raises
    ------
    ValueError
        If ``array`` has an object dtype.
    """
    array = np.asarray(array)
    if array.dtype.hasobject:
        raise ValueError("object arrays are not stored (they need pickle)")
    buf = io.BytesIO()
    np.save(buf, np.ascontiguousarray(array), allow_pickle=False)
    return buf.getvalue()


def json_bytes(value) -> bytes:
    """``value`` as UTF-8 JSON (NaN written as ``NaN``, read back by Python's json)."""
    return json.dumps(value, sort_keys=True).encode()


ROW_GROUP = 128
"""Rows of a table a Parquet row group holds (:meth:`StoreWriter.table`): a stored row's entry is read by decompressing
its group (:class:`store.row_meta.RowMeta`), about 2 ms for SHAP's and LIME's on Adult's 108 columns at 128 rows
(6 ms at 512)."""


class StoreWriter:
    """Writes one store's files and, last, its manifest listing each with size and SHA-256.

    Parameters
    ----------
    folder : path
        Created if missing; an old manifest there is removed first, so a build that fails midway
        leaves a folder that no server opens.
    """

    def __init__(self, folder: str | Path) -> None:
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        (self.folder / MANIFEST).unlink(missing_ok=True)
        self.files: dict[str, dict] = {}

    def _put(self, name: str, data: bytes) -> None:
        atomic_write(self.folder / name, data)
        self.files[name] = {"bytes": len(data), "sha256": file_sha256(self.folder / name),
                            "holds": HOLDS.get(name, "")}

    def array(self, name: str, array: np.ndarray) -> None:
        """Write ``<name>`` (ending ``.npy``)."""
        self._put(name, npy_bytes(array))

    def json(self, name: str, value) -> None:
        """Write ``<name>`` (ending ``.json``)."""
        self._put(name, json_bytes(value))

    def table(self, name: str, frame: pd.DataFrame) -> None:
        """Write ``<name>`` (ending ``.parquet``), a page per 64 rows once past 1 MiB (pyarrow's default, 1,024 rows,
        made pages of 25 MB of 25 KB entries, over the 16 MiB a reader accepts by default, ``CANDOR_MAX_CELL_MB``),
        a row group per :data:`ROW_GROUP` rows (a reader decodes a group at a time: the full Adult store's one group
        of 8,141 rows took 145 MB of pyarrow's memory to read, :mod:`store.row_meta`)."""
        buf = io.BytesIO()
        frame.to_parquet(buf, index=False, write_batch_size=64, row_group_size=ROW_GROUP)
        self._put(name, buf.getvalue())

    def finish(self, manifest: dict) -> Path:
        """Write ``manifest.json`` (``manifest`` plus the files written); returns its path."""
        path = self.folder / MANIFEST
        atomic_write(path, json.dumps({**manifest, "files": self.files}, sort_keys=True, indent=1).encode())
        return path


def partial_folder(out: Path) -> Path:
    """Where a build into ``out`` writes (``.<name>.partial`` beside it), renamed over ``out`` when complete.

    A server running from ``out`` memory-maps its arrays: they are never rewritten in place.
    """
    out = Path(out)
    return out.parent / f".{out.name}.partial"


def remove_path(path: Path) -> None:
    """Remove ``path``: a link or file is unlinked (never followed), a folder removed with its contents."""
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.exists():
        shutil.rmtree(path)


def check_out_folder(out: Path) -> None:
    """Refuse an ``--out`` that a build would replace but that is not a store (never delete a user's folder)."""
    if out.is_symlink() or (out.exists() and not out.is_dir()):
        raise CandorError(f"--out {out}: a symbolic link or a file, not a store's folder")
    if out.is_dir() and any(out.iterdir()) and not (out / "manifest.json").is_file():
        raise CandorError(f"--out {out}: a folder that is not a Candor store (no manifest.json); a build replaces "
                          "its --out whole, so choose a new or empty folder")
    partial = partial_folder(out)
    if partial.is_symlink() or (partial.exists() and not partial.is_dir()):
        raise CandorError(f"{partial}: a symbolic link or a file, not a partial build's folder; remove it")


def swap_in(partial: Path, out: Path) -> None:
    """Rename the finished ``partial`` over ``out``: a server already serving ``out`` keeps the old files."""
    old = out.parent / f".{out.name}.old-{os.getpid()}"
    if os.path.lexists(out):
        os.replace(out, old)
    os.replace(partial, out)
    if os.path.lexists(old):
        shutil.rmtree(old, ignore_errors=True)
