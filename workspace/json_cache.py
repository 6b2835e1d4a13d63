"""On-disk caches that hold JSON only: a writable cache folder must never become code execution (issue 14).

diskcache pickles by default, and even its ``JSONDisk`` unpickles a row whose ``mode`` column says
"pickle" (``diskcache.core.Disk.fetch``), so anyone able to write the cache's SQLite file could run
code in the server. :class:`JSONOnlyDisk` writes keys and values as zlib-compressed JSON (as
``JSONDisk``) and reads nothing else: a pickled row or key is logged and treated as a miss (it is
recomputed and overwritten), never unpickled; a value JSON cannot encode is refused when stored.
Every cache of Candor is opened by :func:`json_cache` or with a subclass of :class:`JSONOnlyDisk`
(``tests/store/test_json_only_caches.py`` scans the source for any other ``diskcache.Cache(``).
"""
from __future__ import annotations

import contextlib
import json
import logging
import os
import zlib
from pathlib import Path

import diskcache
from diskcache.core import MODE_BINARY, MODE_RAW, UNKNOWN

from .private_files import private_folder, private_opener

log = logging.getLogger(__name__)


class RefusedEntry(OSError):
    """A cache row that is not JSON (e.g. pickled). diskcache treats an ``OSError`` from a read as a miss."""


class JSONOnlyDisk(diskcache.JSONDisk):
    """diskcache's ``JSONDisk`` that refuses, instead of unpickling, anything but its own JSON rows.

    Keys and values are ``json.dumps(..., cls=encoder)`` compressed with zlib and stored as bytes
    (diskcache modes raw or binary, never mode 4, pickle). Subclasses set ``encoder`` (a
    ``json.JSONEncoder``) for values plain JSON cannot hold, e.g. Dash components
    (``app/serve/server.py``). Reading back gives JSON types: lists for tuples and arrays, string dict keys.

    Raises
    ------
    TypeError
        On storing a value or key the encoder cannot write (never a silent pickle), or a file
        (``Cache.set(..., read=True)``).
    RefusedEntry
        On reading a row stored in another mode; ``Cache.get`` and friends take it as a miss.
    """

    encoder: type[json.JSONEncoder] | None = None

    def _dumps(self, value) -> bytes:
        return zlib.compress(json.dumps(value, cls=self.encoder).encode("utf-8"), self.compress_level)

    def put(self, key):
        return diskcache.Disk.put(self, self._dumps(key))

    def get(self, key, raw):
        if not raw:  # a pickled key
            raise self._refuse("a key", "pickle")
        return super().get(key, raw)

    def store(self, value, read, key=UNKNOWN):
        if read:
            raise TypeError("this cache holds JSON values only, not files")
        return diskcache.Disk.store(self, self._dumps(value), False, key=key)

    def fetch(self, mode, filename, value, read):
        if mode not in (MODE_RAW, MODE_BINARY):
            raise self._refuse("a value", {0: "none", 3: "text", 4: "pickle"}.get(mode, str(mode)))
        return super().fetch(mode, filename, value, read)

    def _write(self, full_path, iterator, mode, encoding=None):
        """diskcache's ``Disk._write`` (5.6: large values go to files), each file 0600 in 0700 folders."""
        for attempt in range(10):
            leaf = os.path.dirname(full_path)
            for folder in (os.path.dirname(leaf), leaf):  # both levels 0700 (makedirs: the leaf only)
                with contextlib.suppress(OSError):
                    os.mkdir(folder, 0o700)
            try:  # another cache may have deleted the folder before the file could be opened
                writer = open(full_path, mode, encoding=encoding, opener=private_opener)
            except OSError:
                if attempt == 9:
                    raise
                continue
            with writer:
                size = 0
                for chunk in iterator:
                    size += len(chunk)
                    writer.write(chunk)
                return size

    def _refuse(self, what: str, mode: str) -> RefusedEntry:
        log.warning("candor: cache %s: %s stored as %s was ignored (JSON only; never unpickled)",
                    self._directory, what, mode)
        return RefusedEntry(f"{what} stored as {mode} in {self._directory} (JSON only)")


def json_cache(folder: Path | str, disk: type[JSONOnlyDisk] = JSONOnlyDisk, **settings) -> diskcache.Cache:
    """A ``diskcache.Cache`` in ``folder`` (created if missing) that holds JSON only (:class:`JSONOnlyDisk`).

    The folder is mode 0700 and its files 0600 (:mod:`workspace.private_files`): whoever can write a cache can
    change what the pages show.

    Parameters
    ----------
    folder : path
    disk : subclass of JSONOnlyDisk, default JSONOnlyDisk
    **settings
        diskcache settings, e.g. ``size_limit`` in bytes.

    Returns
    -------
    diskcache.Cache
    """
    if not (isinstance(disk, type) and issubclass(disk, JSONOnlyDisk)):
        raise TypeError(f"disk must be a JSONOnlyDisk, got {disk!r}")
    folder = private_folder(folder)  # 0700: what is inside is out of other accounts' reach
    cache = diskcache.Cache(str(folder), disk=disk, **settings)
    # the database 0600 once SQLite has made it: creating the file first (empty, beside a -wal or -shm left by a
    # cache deleted while open) gave SQLite "disk I/O error" on the next open in a full test run
    for name in (diskcache.core.DBNAME, diskcache.core.DBNAME + "-wal", diskcache.core.DBNAME + "-shm"):
        with contextlib.suppress(OSError):
            if (folder / name).stat().st_uid == os.getuid():
                (folder / name).chmod(0o600)
    return cache
