"""Server-side login sessions, in one SQLite file every worker shares (with the failed-login counts and locks of
``accounts/login_limits.py``).

Why a SQLite file and not the study database: sessions must work whether or not study mode is
used, every gunicorn worker of one machine opens the same file (WAL mode, short transactions), and
revoking is one ``DELETE``. The file is ``CANDOR_SESSION_DB`` (default ``instance/sessions.sqlite3``);
several machines behind one load balancer need a shared path or one machine per deployment. The old
``login_failures`` table (one count per address and per name) is dropped when a file is first opened.

The cookie carries a random session id (256 bits); the file keeps only its SHA-256, so a copy of the
file cannot be replayed as cookies. A session ends when it expires (``CANDOR_SESSION_HOURS``,
default 8), on logout, or when ``python -m app users revoke NAME`` removes all of a user's sessions.
"""
from __future__ import annotations

import contextlib
import hashlib
import os
import secrets
import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from workspace.settings import current

_SCHEMA = """
CREATE TABLE IF NOT EXISTS sessions (
    sid_hash TEXT PRIMARY KEY, user_name TEXT NOT NULL, created REAL NOT NULL, expires REAL NOT NULL);
CREATE INDEX IF NOT EXISTS sessions_user ON sessions (user_name);
DROP TABLE IF EXISTS login_failures;
CREATE TABLE IF NOT EXISTS login_failed (
    id INTEGER PRIMARY KEY, account TEXT NOT NULL, address TEXT NOT NULL, at REAL NOT NULL);
CREATE INDEX IF NOT EXISTS login_failed_pair ON login_failed (account, address);
CREATE INDEX IF NOT EXISTS login_failed_address ON login_failed (address, at);
CREATE INDEX IF NOT EXISTS login_failed_at ON login_failed (at);
CREATE TABLE IF NOT EXISTS login_lockouts (account TEXT PRIMARY KEY, until REAL NOT NULL);
"""


@dataclass(frozen=True)
class Session:
    """A live session: whose it is and when it ends (Unix seconds)."""

    user_name: str
    expires: float


def db_path() -> Path:
    """The session file (``CANDOR_SESSION_DB``, default ``instance/sessions.sqlite3``)."""
    return Path(current().session_db or Path("instance") / "sessions.sqlite3")


def session_seconds() -> float:
    """How long a session lives, in seconds (``CANDOR_SESSION_HOURS``, default 8).

    Raises
    ------
    ValueError
        If ``CANDOR_SESSION_HOURS`` is not a positive number.
    """
    text = current().session_hours or "8"
    try:
        hours = float(text)
    except ValueError:
        hours = -1
    if not 0 < hours <= 24 * 90:
        raise ValueError(f"CANDOR_SESSION_HOURS must be a number of hours from 0 to 2160, got {text!r}")
    return hours * 3600


_ready: set[str] = set()


_init_lock = threading.Lock()


def _initialise(path: Path) -> None:
    """Create the file, switch it to WAL and create the tables, once per process and file.

    Several request threads (and gunicorn workers) may open a fresh file at once; switching the
    journal mode needs the whole file, so a thread that finds it locked waits and tries again
    (20 concurrent first logins answered HTTP 500 "database is locked" without this).
    """
    with _init_lock:
        if str(path) in _ready:
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        deadline = time.monotonic() + 15
        while True:
            conn = sqlite3.connect(path, timeout=15, isolation_level=None)
            try:
                os.chmod(path, 0o600)
                conn.execute("PRAGMA journal_mode=WAL")
                conn.executescript(_SCHEMA)
                break
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or time.monotonic() > deadline:
                    raise
                time.sleep(0.05)
            finally:
                conn.close()
        _ready.add(str(path))


@contextlib.contextmanager
def connect():
    """An autocommit connection to the session file (created on first use); the login limits share it."""
    path = db_path()
    if str(path) not in _ready:
        _initialise(path)
    conn = sqlite3.connect(path, timeout=15, isolation_level=None)
    try:
        yield conn
    finally:
        conn.close()


def _digest(sid: str) -> str:
    return hashlib.sha256(sid.encode()).hexdigest()


def create(user_name: str, *, seconds: float | None = None) -> str:
    """Start a session for ``user_name``; returns the id to put in the cookie (43 URL-safe characters)."""
    sid = secrets.token_urlsafe(32)
    now = time.time()
    with connect() as conn:
        conn.execute("INSERT INTO sessions VALUES (?, ?, ?, ?)",
                     (_digest(sid), user_name, now, now + (seconds or session_seconds())))
    return sid


def lookup(sid: str | None) -> Session | None:
    """The live session with id ``sid``, or None (unknown, expired, revoked or malformed)."""
    if not sid or len(sid) > 128:
        return None
    with connect() as conn:
        row = conn.execute("SELECT user_name, expires FROM sessions WHERE sid_hash = ?", (_digest(sid),)).fetchone()
    if row is None or row[1] <= time.time():
        return None
    return Session(row[0], row[1])


def delete(sid: str | None) -> None:
    """End one session (logout); unknown ids are ignored."""
    if sid and len(sid) <= 128:
        with connect() as conn:
            conn.execute("DELETE FROM sessions WHERE sid_hash = ?", (_digest(sid),))


def revoke_user(user_name: str) -> int:
    """End every session of ``user_name`` (and drop expired ones of anybody); returns how many of theirs ended."""
    with connect() as conn:
        n = conn.execute("DELETE FROM sessions WHERE user_name = ?", (user_name,)).rowcount
        conn.execute("DELETE FROM sessions WHERE expires <= ?", (time.time(),))
    return n
