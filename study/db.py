"""Database engine and migrations for study mode.

A SQLite file by default (``instance/candor-study.sqlite3``, WAL mode, busy
timeout 10 s, foreign keys on); PostgreSQL when ``DATABASE_URL`` says so
(``postgres://``/``postgresql://`` URLs are routed to the psycopg 3 driver).
:func:`migrate` applies the Alembic migrations in ``study/migrations`` to
head when study mode first uses the database (:func:`study.runtime.engine`);
on PostgreSQL it holds an advisory lock so that several gunicorn workers
opening it together migrate once.
"""

from __future__ import annotations

import os
import time
import weakref
from pathlib import Path

from alembic import command
from alembic.config import Config
from sqlalchemy import Engine, create_engine, event, text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import OperationalError
from workspace.private_files import private_file
from workspace.settings import current

from .locations import DEFAULT_SQLITE_PATH

__all__ = ["DEFAULT_SQLITE_PATH", "resolve_url", "make_engine", "migrate", "open_database"]

MIGRATIONS = Path(__file__).resolve().parent / "migrations"
_PG_LOCK_KEY = 0x43414E44  # "CAND"


def resolve_url(url: str | None = None) -> str:
    """Return the SQLAlchemy URL to use.

    Parameters
    ----------
    url : str or None, default=None
        Explicit URL; when None, ``DATABASE_URL`` from the environment, else a
        SQLite file at :data:`DEFAULT_SQLITE_PATH`.

    Returns
    -------
    str
        A URL whose PostgreSQL driver is ``psycopg`` (version 3).
    """
    url = url or current().database_url or f"sqlite:///{DEFAULT_SQLITE_PATH}"
    for prefix in ("postgres://", "postgresql://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url[len(prefix):]
    return url


def make_engine(url: str | None = None) -> Engine:
    """Create an engine for ``url`` (see :func:`resolve_url`) without migrating."""
    url = resolve_url(url)
    if url.startswith("sqlite"):
        path = make_url(url).database  # percent-decoded, as SQLAlchemy will open it
        if path and path != ":memory:" and not path.startswith("file:"):
            private_file(path)  # 0600 (SQLite gives -wal/-shm its mode), its folder 0700 if created
        engine = create_engine(url, connect_args={"timeout": 10})
        event.listen(engine, "connect", _sqlite_pragmas)
    else:
        engine = create_engine(url, pool_pre_ping=True)
    _forget_pool_after_fork(engine)
    return engine


def _forget_pool_after_fork(engine: Engine) -> None:
    """Give a forked child (a gunicorn ``--preload`` worker) its own connections.

    A pooled connection inherited across ``fork`` shares its socket or SQLite file handle
    with the parent and the sibling workers; used from several processes it mixes their
    protocol streams. The child drops the inherited pool without closing it (closing would
    end the parent's session), as SQLAlchemy's pooling docs advise.
    """
    ref = weakref.ref(engine)

    def after_in_child() -> None:
        eng = ref()
        if eng is not None:
            eng.dispose(close=False)

    os.register_at_fork(after_in_child=after_in_child)


def _sqlite_pragmas(dbapi_connection, _record) -> None:
    cur = dbapi_connection.cursor()
    cur.execute("PRAGMA journal_mode=WAL")
    cur.execute("PRAGMA busy_timeout=10000")
    cur.execute("PRAGMA foreign_keys=ON")
    cur.execute("PRAGMA synchronous=FULL")
    cur.close()


def migrate(engine: Engine, revision: str = "head", *, attempts: int = 5) -> None:
    """Apply the study-mode Alembic migrations up to ``revision``.

    Parameters
    ----------
    engine : Engine
        Target database.
    revision : str, default="head"
        Alembic revision.
    attempts : int, default=5
        Retries on a locked SQLite file (concurrent start-up).
    """
    cfg = Config()
    # Alembic's Config is a ConfigParser: a '%' in a value starts an interpolation, so a URL-encoded
    # password or path would crash here. The migration runs on the connection handed over in
    # ``attributes`` (env.py), so the URL is not given to the ConfigParser at all.
    cfg.set_main_option("script_location", str(MIGRATIONS).replace("%", "%%"))
    for attempt in range(attempts):
        try:
            with engine.begin() as conn:
                if engine.dialect.name == "postgresql":
                    conn.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": _PG_LOCK_KEY})
                cfg.attributes["connection"] = conn
                command.upgrade(cfg, revision)
            return
        except OperationalError:
            if attempt == attempts - 1 or engine.dialect.name != "sqlite":
                raise
            time.sleep(0.2 * (attempt + 1))


def open_database(url: str | None = None) -> Engine:
    """Create the engine for ``url``/``DATABASE_URL`` and migrate it to head."""
    engine = make_engine(url)
    migrate(engine)
    engine.dispose()  # hold no connection: gunicorn --preload forks workers after this
    return engine
