"""Reading and checking a store's manifest and files before anything in them is used.

Every check fails with one line (:class:`~workspace.errors.CandorError`) that names the store and
what is wrong: too large, not a Candor store, another format version, a file missing, of another size
or another SHA-256 than the manifest says (tampered or half-copied), a file name outside the store or
of a kind that could run code, or a model or data other than the ones it was built for.
"""
from __future__ import annotations

import hashlib
import json
import mmap
import os
from pathlib import Path

import numpy as np

from workspace.errors import CandorError
from workspace.safe_files import open_regular, read_bounded
from .format import ALLOWED_SUFFIXES, FORMAT_VERSION, HOLDS, MANIFEST, MAX_MANIFEST_BYTES
from .hashes import CHUNK


def read_manifest(folder: Path) -> dict:
    """The manifest of the store in ``folder``, its size checked before it is read.

    Raises
    ------
    CandorError
        If it is missing, larger than :data:`~store.format.MAX_MANIFEST_BYTES`, not JSON, not a
        Candor store, or of another format version.
    """
    path = Path(folder) / MANIFEST
    if not os.path.lexists(path):
        raise CandorError(f"store {folder}: no {MANIFEST} there; build one with: python -m app build ... --out {folder}")
    raw = read_bounded(path, MAX_MANIFEST_BYTES, f"store {folder}:", within=folder)
    try:
        manifest = json.loads(raw)
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        raise CandorError(f"store {folder}: {MANIFEST} is not JSON ({exc})") from None
    if not isinstance(manifest, dict) or manifest.get("format") != "candor-store":
        raise CandorError(f"store {folder}: {MANIFEST} is not a Candor store's manifest")
    if manifest.get("format_version") != FORMAT_VERSION:
        raise CandorError(f"store {folder}: format version {manifest.get('format_version')!r}, this Candor reads "
                          f"version {FORMAT_VERSION}; rebuild it with python -m app build")
    if not isinstance(manifest.get("files"), dict):
        raise CandorError(f"store {folder}: {MANIFEST} lists no files")
    return manifest


def check_files(folder: Path, manifest: dict, max_bytes: int) -> dict[str, bytearray | np.ndarray]:
    """Check every file the manifest names and return what was checked: nothing is read again later.

    Each name must be a file of this format (:data:`~store.format.HOLDS`); the declared sizes are summed
    against ``max_bytes`` before anything is read. Each file is then opened once (a regular file inside
    the store, no symbolic link: :func:`workspace.safe_files.open_regular`), its size taken from the
    open descriptor, at most that size + 1 bytes hashed, and what is returned comes from that same
    descriptor: the bytes of a JSON or Parquet file (parsed from exactly the bytes hashed), a read-only
    memory map of an ``.npy`` file's array (the header parsed here: a plain, C-ordered, non-object array
    whose data fills the rest of the file).

    Returns
    -------
    dict
        File name to its bytes (``bytearray``: ``.json``, ``.parquet``) or ``numpy.memmap`` (``.npy``).

    Raises
    ------
    CandorError
        Naming the first file that is missing, misnamed, not a regular file inside the store, resized or
        altered, or a malformed ``.npy`` header, or the total over the limit.
    """
    folder = Path(folder)
    total = 0
    for name, entry in manifest["files"].items():
        if (not isinstance(name, str) or Path(name).name != name or name.startswith(".")
                or not name.endswith(ALLOWED_SUFFIXES) or name not in HOLDS):
            raise CandorError(f"store {folder}: the manifest names {name!r}, not a file this store format has")
        if not isinstance(entry, dict) or type(entry.get("bytes")) is not int or entry["bytes"] < 0:
            raise CandorError(f"store {folder}: the manifest gives no size for {name}")
        total += entry["bytes"]
    if total > max_bytes:
        raise CandorError(f"store {folder}: {total / 2**20:,.1f} MiB of files, over the {max_bytes / 2**20:,.0f} MiB "
                          "limit (CANDOR_MAX_STORE_MB)")
    return {name: _checked_file(folder, name, entry) for name, entry in manifest["files"].items()}


def _checked_file(folder: Path, name: str, entry: dict) -> bytearray | np.ndarray:
    path = folder / name
    if not os.path.lexists(path):
        raise CandorError(f"store {folder}: {name} is missing")
    declared = entry["bytes"]
    with open_regular(path, f"store {folder}:", within=folder) as fh:
        size = os.fstat(fh.fileno()).st_size
        if size != declared:
            raise CandorError(f"store {folder}: {name} is {size:,} bytes, the manifest says {declared!r} "
                              "(tampered with or half-copied); rebuild the store")
        keep = not name.endswith(".npy")  # kept: read into one buffer, never a list of blocks and a copy of them
        h, read = hashlib.sha256(), 0
        buf = bytearray(declared if keep else min(CHUNK, declared))
        view = memoryview(buf)
        while read < declared:
            part = view[read:read + min(CHUNK, declared - read)] if keep else view[:min(CHUNK, declared - read)]
            got = fh.readinto(part)
            if not got:
                break
            h.update(part[:got])
            read += got
        if read != declared or fh.read(1) or h.hexdigest() != entry.get("sha256"):  # fh.read(1): grown since
            raise CandorError(f"store {folder}: {name} does not match the SHA-256 in its manifest (tampered with "
                              "or corrupted); rebuild the store")
        return buf if keep else _npy_map(fh, folder, name, declared)


def _npy_map(fh, folder: Path, name: str, size: int) -> np.ndarray:
    """The array of the ``.npy`` file open as ``fh`` (``size`` bytes), memory-mapped read-only."""
    fmt = np.lib.format
    try:
        fh.seek(0)
        version = fmt.read_magic(fh)
        read_header = fmt.read_array_header_1_0 if version == (1, 0) else fmt.read_array_header_2_0
        shape, fortran, dtype = read_header(fh)
        offset = fh.tell()
    except (ValueError, OSError, SyntaxError) as exc:
        raise CandorError(f"store {folder}: {name} is not a plain .npy array ({exc})") from None
    if dtype.hasobject or fortran:
        raise CandorError(f"store {folder}: {name} holds {'objects' if dtype.hasobject else 'a Fortran-ordered array'}"
                          ", not a plain array")
    nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    if offset + nbytes != size:
        raise CandorError(f"store {folder}: {name} has {size - offset:,} bytes of data, its header {shape} {dtype} "
                          f"needs {nbytes:,}")
    if nbytes == 0:
        return np.zeros(shape, dtype=dtype)
    return np.memmap(fh, dtype=dtype, mode="r", shape=shape, offset=offset)


def release_pages(arr: np.ndarray) -> None:
    """Let this process's memory drop the pages of ``arr``, an array :func:`check_files` memory-mapped, once checked.

    The map is read-only and the file unchanged, so a page touched again is read back from the page cache, shared with
    every process that opens the store (a minor fault, no disk read). The checks of :func:`store.structure.check_arrays`
    touch every value; kept resident, the full Adult store's per-row arrays were 46 MB of the server's peak memory
    though a click reads one row of each (issue 23). Anything else (an array made in memory): nothing done.
    """
    mapped = getattr(arr, "_mmap", None)
    if isinstance(mapped, mmap.mmap):
        try:
            mapped.madvise(mmap.MADV_DONTNEED)
        except (OSError, ValueError):  # not supported here: the pages stay, as before
            pass


def check_hashes(folder: Path, manifest: dict, model_sha256: str, data_sha256: str) -> None:
    """Refuse a store built for another model or data.

    Raises
    ------
    CandorError
        Naming which of the two differs, with both hashes' first 12 digits.
    """
    for what, given in (("model", model_sha256), ("data", data_sha256)):
        built = (manifest.get(what) or {}).get("sha256")
        if built != given:
            raise CandorError(f"store {folder} was built for another {what} (SHA-256 {str(built)[:12]}…, this "
                              f"{what} is {given[:12]}…); rebuild it with python -m app build")
