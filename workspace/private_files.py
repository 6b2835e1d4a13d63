"""Files and folders only the server's own user can read: uploads, study data, caches (issue 27).

Uploaded models and tables, the study database and the on-disk caches hold other people's data and
results the pages trust, so they are written mode 0600 in folders of mode 0700, whatever the process's
umask (a file inside a 0700 folder is out of other accounts' reach even if its own mode is wider).
"""
from __future__ import annotations

import contextlib
import os
from pathlib import Path


def private_folder(path: Path | str, *, tighten: bool = True) -> Path:
    """Create ``path`` and its missing parents readable by this user only (mode 0700).

    Parameters
    ----------
    path : Path or str
    tighten : bool, default=True
        Also set an existing ``path`` (Candor's own folder) to 0700 when this user owns it; False for a
        folder that may be the operator's (the parent of a database file).

    Returns
    -------
    Path
    """
    path = Path(path)
    for folder in [*reversed(path.parents), path]:
        if not folder.exists():
            with contextlib.suppress(FileExistsError):  # another worker made it first
                folder.mkdir(mode=0o700)
    if tighten and path.stat().st_uid == os.getuid() and path.stat().st_mode & 0o077:
        path.chmod(0o700)
    return path


def private_opener(path, flags: int) -> int:
    """An ``open(..., opener=)`` that creates files readable and writable by this user only (mode 0600).

    Parameters
    ----------
    path : path-like
    flags : int
        As :func:`os.open` takes them.

    Returns
    -------
    int
        The file descriptor.
    """
    return os.open(path, flags, 0o600)


def private_file(path: Path | str) -> Path:
    """``path``, created empty if missing, set to mode 0600 (its folder created 0700 if missing).

    For files other programs create by name, e.g. a SQLite database, whose ``-wal`` and ``-shm`` files
    SQLite then creates with the same mode.

    Parameters
    ----------
    path : Path or str

    Returns
    -------
    Path
    """
    path = Path(path)
    private_folder(path.parent, tighten=False)
    os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o600))
    if path.stat().st_uid == os.getuid():
        path.chmod(0o600)
    return path
