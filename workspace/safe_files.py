"""Reading small files that arrive from users: regular files only, never more than a limit, plain YAML.

One home for a kind of flaw an attack found twice (issue 14/15 attack, F4 and F8): a size checked with
``stat`` and then an unbounded read (a symlink to ``/dev/zero`` or ``/proc/self/pagemap`` has size 0, so
it passed every check and was read until memory ran out), and YAML anchors and aliases, which let a
431-byte file expand to gigabytes once built or printed ("billion laughs").

:func:`read_bounded` opens the path, checks on the *opened* file that it is a regular file, and reads at
most ``limit + 1`` bytes, so neither a device, a FIFO nor a file that grows after the check can make it
read more. :func:`plain_yaml` refuses anchors, aliases and tags before anything is built.
"""
from __future__ import annotations

import os
import stat
from pathlib import Path

from .errors import CandorError

__all__ = ["open_regular", "read_bounded", "plain_yaml", "check_plain_yaml", "non_plain_yaml"]


def _label(path: Path, what: str) -> str:
    return f"{what} {path.name}" if what else path.name


def open_regular(path: str | os.PathLike, what: str = "", *, within: str | os.PathLike | None = None):
    """``path`` opened for binary reading, checked on the *opened* descriptor to be a regular file.

    Parameters
    ----------
    path : str or path-like
        The file.
    what : str
        What the file is, for messages.
    within : path, optional
        A folder the file must be inside: then a symbolic link is refused (``O_NOFOLLOW`` on the file,
        and the resolved path must be inside ``within`` resolved, so no linked parent leads out either).

    Returns
    -------
    io.BufferedReader
        Open at offset 0; the caller closes it.

    Raises
    ------
    CandorError
        If the file cannot be opened, is a symbolic link or outside ``within``, or is not a regular file.
    """
    path = Path(path)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)  # a FIFO must not block the open
    if within is not None:
        flags |= getattr(os, "O_NOFOLLOW", 0)
        if path.is_symlink() or not path.resolve().is_relative_to(Path(within).resolve()):
            raise CandorError(f"{_label(path, what)}: a symbolic link or outside {within}; files are read only from "
                              "inside it")
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        raise CandorError(f"{_label(path, what)}: cannot read it ({exc.strerror or exc})") from None
    fh = os.fdopen(fd, "rb")
    if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
        fh.close()
        raise CandorError(f"{_label(path, what)}: not a regular file (a device, pipe or folder cannot be read as one)")
    return fh


def read_bounded(path: str | os.PathLike, limit: int, what: str = "", *,
                 within: str | os.PathLike | None = None) -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes.

    The file is opened first and checked with ``fstat`` on the open descriptor (:func:`open_regular`, so a
    link swapped after a check cannot point the read elsewhere), and at most ``limit + 1`` bytes are read
    whatever the file claims.

    Parameters
    ----------
    path : str or path-like
        The file.
    limit : int
        Largest size accepted, in bytes.
    what : str
        What the file is, for messages.
    within : path, optional
        As :func:`open_regular`: no symbolic link, inside this folder.

    Returns
    -------
    bytes
        The whole file (``len <= limit``).

    Raises
    ------
    CandorError
        If the file cannot be opened, is not a regular file, or holds more than ``limit`` bytes.
    """
    path = Path(path)
    with open_regular(path, what, within=within) as fh:
        size = os.fstat(fh.fileno()).st_size
        if size > limit:
            raise CandorError(f"{_label(path, what)}: {size:,} bytes; at most {limit:,} are read")
        data = fh.read(limit + 1)
    if len(data) > limit:
        raise CandorError(f"{_label(path, what)}: more than {limit:,} bytes; at most {limit:,} are read")
    return data


def non_plain_yaml(text: str) -> tuple[int, str] | None:
    """The first anchor, alias or explicit tag in YAML ``text`` as ``(line, problem)``, or None.

    Anchors and aliases make a tiny file expand without bound when it is built or printed ("billion
    laughs"); explicit tags (``!!python/object``) ask for objects. Only parser events are read, nothing is
    built. Syntax errors give None: the caller's parser reports them with their line.
    """
    import yaml

    try:
        for event in yaml.parse(text, Loader=yaml.SafeLoader):
            line = event.start_mark.line + 1 if event.start_mark is not None else 1
            if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None) is not None:
                return line, "anchors and aliases (&name, *name) are not accepted; write the value out"
            tag, implicit = getattr(event, "tag", None), getattr(event, "implicit", True)
            if isinstance(implicit, tuple):
                implicit = any(implicit)
            if tag is not None and not implicit:
                return line, f"tags like {tag[:80]} are not accepted (plain data only)"
    except yaml.YAMLError:
        return None
    return None


def check_plain_yaml(text: str, name: str = "") -> None:
    """Raise if YAML ``text`` uses an anchor, an alias or an explicit tag (see :func:`non_plain_yaml`).

    Raises
    ------
    CandorError
        Naming the line of the first anchor, alias or tag.
    """
    found = non_plain_yaml(text)
    if found is not None:
        raise CandorError(f"{name or 'YAML'}: line {found[0]}: {found[1]}")


def plain_yaml(text: str, name: str = ""):
    """Parse YAML ``text`` as plain data (dicts, lists, scalars) after :func:`check_plain_yaml`.

    Raises
    ------
    CandorError
        For an anchor, alias or tag, or a syntax error (naming its line).
    """
    import yaml

    check_plain_yaml(text, name)
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        raise CandorError(f"{name or 'YAML'}: not valid YAML{where} ({getattr(exc, 'problem', None) or 'syntax'})") \
            from None
