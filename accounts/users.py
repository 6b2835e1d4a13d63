"""Who may log in: a users file (``CANDOR_USERS_FILE``), the researcher shorthand, a trusted proxy header.

A users file has one account per line, ``name:role:hash`` (``hash`` from
:func:`accounts.passwords.hash_password`, written by ``python -m app users add NAME --role ROLE``);
blank lines and lines starting with ``#`` are skipped. ``CANDOR_RESEARCHER_PASSWORD`` is a shorthand
for one more account, ``researcher``, with role ``researcher`` (unless the file names that account).
``CANDOR_AUTH_HEADER`` names a header a reverse proxy sets to the logged-in user's name; it is
honoured only when set, and the proxy must remove that header from what clients send. Its users get
their role from the users file, else from ``CANDOR_AUTH_ROLES`` (``alice=analyst,bob=researcher``),
else ``CANDOR_AUTH_DEFAULT_ROLE`` (default ``viewer``).
"""
from __future__ import annotations

import functools

import hmac
import os
import re
import threading
from dataclasses import dataclass
from pathlib import Path

from .passwords import hash_password, is_hash, verify_password
from .roles import ROLES
from workspace.errors import CandorError
from workspace.safe_files import read_bounded
from workspace.settings import current

MAX_USERS_FILE_BYTES = 4 * 2**20
"""Largest users file read (one line per login)."""

NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@-]{0,63}")
RESEARCHER_ACCOUNT = "researcher"


class AccountsError(ValueError):
    """A users file, user name, role or setting that is wrong, in one line that names it."""


@dataclass(frozen=True)
class User:
    """One account: ``name`` and ``role`` (one of :data:`accounts.roles.ROLES`)."""

    name: str
    role: str


MIN_PASSWORD_LENGTH = 10
"""Shortest password ``users add`` accepts (NIST SP 800-63B asks for at least 8)."""

def check_name(name: str) -> str:
    """``name`` if it is a valid user name (letters, digits, ``. _ @ -``; at most 64), else raise AccountsError."""
    if not isinstance(name, str) or not NAME.fullmatch(name):
        raise AccountsError(f"user name {name!r} is not allowed: use 1-64 letters, digits, '.', '_', '@' or '-'")
    return name


def check_role(role: str) -> str:
    """``role`` if it is one of :data:`ROLES`, else raise AccountsError."""
    if role not in ROLES:
        raise AccountsError(f"unknown role {role!r}; roles are {', '.join(ROLES)}")
    return role


def load_users(path: str | os.PathLike) -> dict[str, tuple[User, str]]:
    """Read a users file: ``{name: (User, hash)}``.

    Raises
    ------
    AccountsError
        If the file cannot be read, or a line is malformed (the message names the file and line).
    """
    try:
        text = read_bounded(path, MAX_USERS_FILE_BYTES, "users file").decode("utf-8")
    except CandorError as exc:
        raise AccountsError(f"cannot read users file {path}: {exc}") from None
    except UnicodeDecodeError as exc:
        raise AccountsError(f"cannot read users file {path}: not UTF-8 text (byte {exc.start})") from None
    users: dict[str, tuple[User, str]] = {}
    for number, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        parts = line.split(":")
        where = f"users file {path} line {number}"
        if len(parts) != 3:
            raise AccountsError(f"{where}: expected name:role:hash, got {len(parts)} field(s)")
        name, role, stored = parts
        try:
            check_name(name), check_role(role)
        except AccountsError as err:
            raise AccountsError(f"{where}: {err}") from None
        if not is_hash(stored):
            raise AccountsError(f"{where}: the hash is not one 'python -m app users add' writes")
        if name in users:
            raise AccountsError(f"{where}: user {name!r} is listed twice")
        users[name] = (User(name, role), stored)
    return users


def add_user(path: str | os.PathLike, name: str, role: str, password: str) -> bool:
    """Add ``name`` with ``role`` and a hash of ``password`` to the users file, or replace its line.

    The file is written atomically, readable by its owner only. Returns True if the user was new.

    Raises
    ------
    AccountsError
        Bad name, role or empty password, a name differing only in case from another user's (found by an attack,
        issue 27: the login limits count names in lower case, so locking 'ann' locked 'Ann'), or an existing
        file that is malformed.
    """
    check_name(name), check_role(role)
    if not password:
        raise AccountsError("the password is empty")
    if len(password) < MIN_PASSWORD_LENGTH:
        raise AccountsError(f"the password has {len(password)} characters; use at least {MIN_PASSWORD_LENGTH}")
    path = Path(path)
    lines = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
    if lines:
        load_users(path)  # refuse to extend a malformed file
    line = f"{name}:{role}:{hash_password(password)}"
    kept = [ln for ln in lines if ln.split(":", 1)[0].strip() != name]
    twin = next((n for n in (ln.split(":", 1)[0].strip() for ln in kept) if n.lower() == name.lower()), None)
    if twin is not None:  # login limits count a name in lower case: 'Ann' would share 'ann''s lockout
        raise AccountsError(f"the user {twin!r} exists; names that differ only in case are one name here")
    new = len(kept) == len(lines)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise AccountsError(f"cannot create the folder of {path}: {exc.strerror or exc}") from None
    tmp = path.with_name(path.name + f".{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write("\n".join(kept + [line]) + "\n")
    os.replace(tmp, path)
    return new


class Users:
    """The accounts configured by the environment, re-read when the users file changes."""

    def __init__(self):
        self._lock = threading.Lock()
        self._key: tuple | None = None
        self._users: dict[str, tuple[User, str]] = {}

    @staticmethod
    def users_file() -> str | None:
        return current().users_file

    @staticmethod
    def auth_header() -> str | None:
        """The trusted proxy header (``CANDOR_AUTH_HEADER``), or None when not configured."""
        return current().auth_header

    @classmethod
    def login_configured(cls) -> bool:
        """Whether any login is configured: a users file, a proxy header or the researcher password."""
        return bool(cls.users_file() or cls.auth_header() or current().researcher_password)

    @classmethod
    def full_login(cls) -> bool:
        """Whether every user must log in (a users file or a proxy header), so that no local user exists."""
        return bool(cls.users_file() or cls.auth_header())

    def _file_users(self) -> dict[str, tuple[User, str]]:
        path = self.users_file()
        if not path:
            return {}
        try:
            st = os.stat(path)
            key = (path, st.st_mtime_ns, st.st_size)
        except OSError as exc:
            raise AccountsError(f"cannot read users file {path}: {exc.strerror}") from None
        with self._lock:
            if key != self._key:
                self._users, self._key = load_users(path), key
            return self._users

    def validate(self) -> None:
        """Read every setting once, so that a bad one stops the server at start.

        Raises
        ------
        AccountsError
            A malformed users file, or a bad ``CANDOR_AUTH_ROLES`` / ``CANDOR_AUTH_DEFAULT_ROLE``.
        """
        self._file_users()
        self._header_roles()

    def get(self, name: str) -> User | None:
        """The account called ``name`` now (its current role), or None."""
        found = self._file_users().get(name)
        if found:
            return found[0]
        if name == RESEARCHER_ACCOUNT and current().researcher_password:
            return User(RESEARCHER_ACCOUNT, "researcher")
        return None

    def check(self, name: str, password: str | None) -> User | None:
        """The account if ``password`` is its password, else None (unknown names cost a hash too)."""
        found = self._file_users().get(name or "")
        if found:
            return found[0] if verify_password(password, found[1]) else None
        shorthand = current().researcher_password or ""
        if name == RESEARCHER_ACCOUNT and shorthand:
            return User(name, "researcher") if hmac.compare_digest((password or "").encode(),
                                                                  shorthand.encode()) else None
        verify_password(password or "x", _dummy_hash())  # same time as a known name: names are not revealed
        return None

    @staticmethod
    def _header_roles() -> tuple[dict[str, str], str]:
        roles: dict[str, str] = {}
        for item in filter(None, (s.strip() for s in (current().auth_roles or "").split(","))):
            name, sep, role = item.partition("=")
            if not sep:
                raise AccountsError(f"CANDOR_AUTH_ROLES: expected name=role, got {item!r}")
            try:
                roles[check_name(name.strip())] = check_role(role.strip())
            except AccountsError as err:
                raise AccountsError(f"CANDOR_AUTH_ROLES: {err}") from None
        default = current().auth_default_role or "viewer"
        try:
            check_role(default)
        except AccountsError as err:
            raise AccountsError(f"CANDOR_AUTH_DEFAULT_ROLE: {err}") from None
        return roles, default

    def from_header(self, value: str | None) -> User | None:
        """The user a trusted proxy named in ``CANDOR_AUTH_HEADER`` (None if absent or not a valid name)."""
        if not value or not NAME.fullmatch(value.strip()):
            return None
        name = value.strip()
        found = self._file_users().get(name)
        if found:
            return found[0]
        roles, default = self._header_roles()
        return User(name, roles.get(name, default))


@functools.cache
def _dummy_hash() -> str:
    """A hash of a random password, made at the first login attempt (an scrypt: 0.12 s of a server's start when it was
    made at import, issue 23), checked against for an unknown name."""
    return hash_password(os.urandom(8).hex())
