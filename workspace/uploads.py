"""Store uploaded files server-side, under one folder, behind an index of opaque ids, within a quota.

The browser sends a file once; it is written under ``CANDOR_UPLOAD_DIR`` (default
``instance/uploads``) as ``<32 random hex>-<sanitised name>`` and never sent back. That stored
name is the file's id: the browser keeps only it, and every later use looks the id up in the
folder's index (``index.json``, written under a lock), which gives the file, its kind and its
owner's display name. An id is never joined into a path: one that is not in the index (``../``,
an absolute path, another folder's file, an upload of another kind, a deleted one) is "no longer
on the server".

Limits (:mod:`workspace.limits`): one file at most ``CANDOR_MAX_UPLOAD_MB``; the folder at most
``CANDOR_UPLOAD_QUOTA_MB`` (oldest unused uploads are deleted first to make room, never one in
use); uploads not in use are deleted after ``CANDOR_UPLOAD_RETENTION_HOURS``. Only data suffixes
and ``.skops`` are accepted for the model page: uploads are never unpickled.
"""
from __future__ import annotations

import base64
import binascii
import contextlib
import errno
import fcntl
import json
import os
import re
import secrets
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable

from . import feature_names, limits
from .errors import CandorError
from .private_files import private_folder, private_opener
from .settings import current

ROOT = Path(__file__).resolve().parent.parent
MODEL_SUFFIXES = (".skops",)
DATA_SUFFIXES = (".csv", ".tsv", ".txt", ".parquet", ".pq")
FEATURES_SUFFIXES = feature_names.SUFFIXES


def max_upload_bytes() -> int:
    """The largest model or table file an upload may have, in bytes (``CANDOR_MAX_UPLOAD_MB``, read now).

    The upload page's dcc.Upload enforces the same limits in the browser (base64 through Dash's JSON); the
    server refuses larger request bodies before reading them (``MAX_CONTENT_LENGTH``, :func:`workspace.limits.max_request_bytes`).
    """
    return limits.mib("CANDOR_MAX_UPLOAD_MB")


GONE = "that upload is no longer on the server; upload the file again"
INDEX, LOCK = "index.json", ".index.lock"
_ID = re.compile(r"[0-9a-f]{32}-[\w.\-]{1,120}", re.ASCII)
in_use_hooks: list[Callable[[], Iterable[str]]] = []
"""Functions giving the paths of uploads in use (never deleted by the quota or the retention rule)."""


def upload_dir() -> Path:
    """The folder uploads go to (created on first use, mode 0700: :mod:`workspace.private_files`)."""
    return private_folder(Path(current().upload_dir).resolve())


def safe_name(filename: str) -> str:
    """The last path component of ``filename`` with only letters, digits, ``-``, ``_`` and ``.`` kept.

    Raises
    ------
    CandorError
        If nothing usable is left (e.g. ``".."``).
    """
    base = re.split(r"[\\/]", str(filename).replace("\x00", ""))[-1]
    base = re.sub(r"^[A-Za-z]:", "", base)
    base = re.sub(r"[^\w.\-]", "_", base, flags=re.ASCII).lstrip(".")
    if not base or set(base) <= {".", "_"}:
        raise CandorError(f"upload name {filename!r} has no usable file name")
    return base[:120]


def decode(content: bytes | str, name: str, limit: int, rule: str = "CANDOR_MAX_UPLOAD_MB") -> bytes:
    """Raw bytes of an upload (``dcc.Upload`` gives a ``data:...;base64,`` string), at most ``limit`` bytes.

    ``rule`` names where the limit comes from in the refusal (a setting, or what the file is: "a features file").

    Raises
    ------
    CandorError
        Not valid base64, or over the limit (checked on the base64 length before decoding).
    """
    def over(size: float) -> CandorError:
        unit, scale = ("KiB", 2**10) if limit < 2**20 else ("MiB", 2**20)
        return CandorError(f"{name}: {size / scale:,.1f} {unit} is over the {limit / scale:,.0f} {unit} limit ({rule})")

    if isinstance(content, str):
        encoded = content.split(",", 1)[-1]
        if len(encoded) * 3 // 4 > limit + 3:
            raise over(len(encoded) * 3 / 4)
        try:
            content = base64.b64decode(encoded, validate=True)
        except (binascii.Error, ValueError):
            raise CandorError(f"{name}: the upload is not valid base64") from None
    if len(content) > limit:
        raise over(len(content))
    return content


@dataclass(frozen=True)
class Record:
    """One stored upload: ``id`` (also its file name), ``path``, ``name`` as uploaded (sanitised), ``kind``, ``size`` in bytes."""

    id: str
    path: Path
    name: str
    kind: str
    size: int


@contextlib.contextmanager
def _locked(folder: Path):
    """The folder's index, read under an exclusive lock (all processes of the server); written back on exit."""
    with open(folder / LOCK, "a+", opener=private_opener) as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            try:
                index = json.loads((folder / INDEX).read_text())
                files = index["files"] if isinstance(index, dict) and isinstance(index.get("files"), dict) else {}
            except (OSError, ValueError):
                files = {}
            before = json.dumps(files, sort_keys=True)
            yield files
            if json.dumps(files, sort_keys=True) != before:
                tmp = folder / f".{INDEX}.{os.getpid()}.tmp"
                tmp.unlink(missing_ok=True)  # a leftover keeps its mode: written anew, 0600
                try:
                    with open(tmp, "x", opener=private_opener) as fh:
                        fh.write(json.dumps({"version": 1, "files": files}))
                    os.replace(tmp, folder / INDEX)
                except OSError as err:  # the old index stays; a file it does not list is swept
                    tmp.unlink(missing_ok=True)
                    raise write_refusal(err, "the upload index") from None
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _in_use(folder: Path) -> set[str]:
    names = set()
    for hook in in_use_hooks:
        try:
            names |= {Path(p).name for p in hook() if p and Path(p).resolve().parent == folder}
        except Exception:  # noqa: BLE001 - a broken hook must not let the quota delete anything: keep everything
            return {p.name for p in folder.iterdir()}
    return names


def _files(folder: Path) -> list[Path]:
    return [p for p in folder.iterdir() if p.is_file() and p.name not in (INDEX, LOCK) and not p.name.startswith(".")]


def _sweep(folder: Path, files: dict, incoming: int, kind: str | None) -> None:
    """Delete expired uploads, then the least recently used ones until ``incoming`` more bytes fit the quota."""
    now, keep = time.time(), _in_use(folder)
    retention = limits.setting("CANDOR_UPLOAD_RETENTION_HOURS") * 3600
    quota = limits.mib("CANDOR_UPLOAD_QUOTA_MB")
    on_disk = {p.name: p for p in _files(folder)}
    for part in folder.glob(f".*{PART}"):  # a write a killed process left behind (a live one takes seconds)
        with contextlib.suppress(OSError):
            if now - part.stat().st_mtime > STALE_PART_S:
                part.unlink()
    for name in list(files):
        if name not in on_disk:
            del files[name]
    stat = {name: p.stat() for name, p in on_disk.items()}
    used = {name: files.get(name, {}).get("used", stat[name].st_mtime) for name in on_disk}
    for name in sorted(on_disk, key=lambda n: used[n]):
        if name not in keep and now - used[name] > retention:
            on_disk.pop(name).unlink(missing_ok=True)
            files.pop(name, None)
    total = sum(stat[n].st_size for n in on_disk)
    unused = [n for n in sorted(on_disk, key=lambda n: used[n]) if n not in keep]
    if total - sum(stat[n].st_size for n in unused) + incoming > quota:  # refuse before deleting anything
        held = total - sum(stat[n].st_size for n in unused)
        raise CandorError(f"the upload folder is full: {held / 2**20:,.1f} MiB of its {quota / 2**20:,.1f} MiB quota "
                          f"(CANDOR_UPLOAD_QUOTA_MB) is held by uploads in use, and this {kind or 'file'} needs "
                          f"{incoming / 2**20:,.1f} MiB more; load smaller files or ask the operator to raise the "
                          "quota")
    for name in unused:
        if total + incoming <= quota:
            break
        total -= stat[name].st_size
        on_disk.pop(name).unlink(missing_ok=True)
        files.pop(name, None)


def save(filename: str, content: bytes | str, *, kind: str, suffixes: tuple[str, ...], limit: int | None = None,
         folder: Path | None = None, rule: str = "CANDOR_MAX_UPLOAD_MB") -> Record:
    """Write one uploaded file under a fresh random id, after making room for it within the quota.

    Parameters
    ----------
    filename : str
        As sent by the browser (untrusted); only a sanitised last component is kept.
    content : bytes or str
        Raw bytes, or a ``data:...;base64,`` string as ``dcc.Upload`` gives it.
    kind : str
        What the file is for (``"model"``, ``"data"``, ``"text-csv"``, ``"conllu"``); :func:`lookup` checks it.
    suffixes : tuple of str
        Accepted suffixes; empty: any (the kind, not the name, says what the file is).
    limit : int, optional
        Bytes; default ``CANDOR_MAX_UPLOAD_MB``.
    rule : str, default="CANDOR_MAX_UPLOAD_MB"
        Where ``limit`` comes from, as the refusal names it.
    folder : Path, optional
        Default :func:`upload_dir`.

    Raises
    ------
    CandorError
        Wrong suffix, too large, not decodable, the quota is full of uploads in use, or the disk refused the
        write (full, a file size limit): then nothing of the file is left, in the index or beside it.
    """
    name = safe_name(filename)
    suffix = Path(name).suffix.lower()
    if suffixes and suffix not in suffixes:
        extra = ("; PyTorch and pickle/joblib models load from the command line only (python -m app --model ...)"
                 if kind == "model" else "")
        raise CandorError(f"{name}: a {kind} upload must be one of {', '.join(suffixes)}{extra}")
    data = decode(content, name, limits.mib("CANDOR_MAX_UPLOAD_MB") if limit is None else limit, rule)
    folder = private_folder((folder or upload_dir()).resolve())
    upload_id = f"{secrets.token_hex(16)}-{name}"
    target = folder / upload_id
    try:
        with _locked(folder) as files:
            _sweep(folder, files, len(data), kind)
            _write_whole(target, data, name)
            now = time.time()
            files[upload_id] = {"name": name, "kind": kind, "size": len(data), "created": now, "used": now}
    except CandorError as err:
        if target.exists():  # written, but the index that would list it was not: no file outside the index
            target.unlink(missing_ok=True)
            raise CandorError(str(err).replace("the upload index", name, 1)) from None
        raise
    return Record(upload_id, target, name, kind, len(data))


PART = ".part"
"""Suffix of a file being written (``.<id>.part``): never in the index, never listed, renamed when complete."""
STALE_PART_S = 3600
"""Age (seconds) past which a ``.part`` file is a killed process's leftover, deleted by the next upload's sweep."""


def write_refusal(err: OSError, name: str) -> CandorError:
    """The one line for a write the disk refused: full (ENOSPC, EDQUOT), over a file-size limit (EFBIG), or else."""
    why = {errno.ENOSPC: "the server's disk is full", errno.EDQUOT: "the server's disk quota is used up",
           errno.EFBIG: "the server's file size limit was reached"}.get(err.errno)
    why = why or f"the server could not write it ({err.strerror or type(err).__name__})"
    return CandorError(f"{name} was not stored: {why}; nothing of it was kept (ask the operator to free space)")


def _write_whole(target: Path, data: bytes, name: str) -> None:
    """Write ``data`` to a temporary name beside ``target`` and rename it: ``target`` exists only complete.

    Raises
    ------
    CandorError
        The write failed (disk full, file size limit, ...): the temporary file is deleted.
    """
    part = target.with_name(f".{target.name}{PART}")
    try:
        with open(part, "xb", opener=private_opener) as fh:  # 0600, in a 0700 folder
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(part, target)
    except OSError as err:
        part.unlink(missing_ok=True)
        raise write_refusal(err, name) from None
    except BaseException:  # not bytes, interrupted: nothing half-written stays either
        part.unlink(missing_ok=True)
        raise


def store_upload(filename: str, content: bytes | str, *, kind: str, folder: Path | None = None) -> Path:
    """Store a Your-model-page upload (``kind`` "model": ``.skops``; "data": a table; "features": a features file,
    at most :data:`workspace.feature_names.MAX_BYTES`, the command line's bound) and return its path.

    Raises
    ------
    CandorError
        As :func:`save`; a features file over its bound is refused before it is decoded.
    """
    if kind == "features":
        return save(filename, content, kind=kind, suffixes=FEATURES_SUFFIXES, limit=feature_names.MAX_BYTES,
                    folder=folder, rule="a features file, as on the command line").path
    suffixes, limit = (MODEL_SUFFIXES if kind == "model" else DATA_SUFFIXES), max_upload_bytes()
    return save(filename, content, kind=kind, suffixes=suffixes, limit=limit, folder=folder).path


def lookup(upload_id, kinds: tuple[str, ...], folder: Path | None = None) -> Record:
    """The stored upload behind an id from the browser, through the index; marks it used (for the quota).

    Raises
    ------
    CandorError
        :data:`GONE` when the id is not a string of the id format, not in the index, of another kind, or
        its file is gone.
    """
    folder = (folder or upload_dir()).resolve()
    if not isinstance(upload_id, str) or not _ID.fullmatch(upload_id):
        raise CandorError(GONE)
    with _locked(folder) as files:
        rec = files.get(upload_id)
        path = folder / upload_id
        if not isinstance(rec, dict) or rec.get("kind") not in kinds or not path.is_file():
            raise CandorError(GONE)
        rec["used"] = time.time()
    return Record(upload_id, path, str(rec.get("name", upload_id)), rec["kind"], int(rec.get("size", 0)))


def remove(upload_id: str, folder: Path | None = None) -> None:
    """Delete one stored upload and its index entry (e.g. a file found unreadable when it arrived)."""
    folder = (folder or upload_dir()).resolve()
    with _locked(folder) as files:
        if files.pop(upload_id, None) is not None:
            (folder / upload_id).unlink(missing_ok=True)


def sweep(folder: Path | None = None) -> None:
    """Apply the retention rule and the quota now (also done before every upload)."""
    folder = (folder or upload_dir()).resolve()
    with _locked(folder) as files:
        with contextlib.suppress(CandorError):  # over the quota with uploads in use: nothing more to delete
            _sweep(folder, files, 0, None)
