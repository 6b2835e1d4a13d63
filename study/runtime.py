"""Process-wide study-mode state: the database engine and the study files.

Study files live in ``CANDOR_STUDY_DIR`` (default ``studies/``) as
``<study_id>.yaml``. The bundled examples (``study/examples/``) are listed and served beside
them, read-only from the package (never copied); a file of the same id in the study folder
takes precedence, so a researcher edits a copy. The database is opened on first use: the first call of
:func:`engine` (from a study or researcher request, or :func:`get_study`) opens
``DATABASE_URL`` (or the default SQLite file) and applies the migrations once
per process, under a lock so that concurrent first requests migrate once; a
launch that never runs a study creates no database file, nor imports SQLAlchemy. :func:`init` opens it
eagerly (tests, benchmarks).
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING

from .locations import DEFAULT_SQLITE_PATH
from .schema import ID_RE, Study, load_study

from workspace.settings import current

if TYPE_CHECKING:  # SQLAlchemy and Alembic (0.4 s of CPU, 27 MB) are imported when the database is first opened:
    from sqlalchemy import Engine  # a server that never runs a study never imports them (issue 23)

__all__ = ["init", "engine", "study_dir", "study_path", "is_example", "get_study", "list_studies", "reset",
           "EXAMPLES", "changed_live_studies"]

#: The bundled example studies, listed read-only on every install.
EXAMPLES = Path(__file__).parent / "examples"

_lock = threading.Lock()
_engine: Engine | None = None
_studies: dict[str, tuple[float, Study]] = {}


def study_dir() -> Path:
    """Folder holding ``<study_id>.yaml`` files."""
    return Path(current().study_dir or "studies")


def engine() -> Engine:
    """The migrated engine, opened and migrated on the first call in this process.

    Threads that call it together wait on one lock; one of them migrates. Several processes
    (gunicorn workers) migrating one database at once are serialised by :func:`.db.migrate`
    (a PostgreSQL advisory lock; retries on a locked SQLite file).

    Raises
    ------
    sqlalchemy.exc.SQLAlchemyError
        If the database cannot be opened or migrated; the next call tries again.
    """
    global _engine
    if _engine is None:
        from .db import open_database

        with _lock:
            if _engine is None:
                _engine = open_database()
    return _engine


def init(url: str | None = None) -> Engine:
    """Open (and migrate) the database now; ``url`` overrides ``DATABASE_URL``."""
    global _engine
    from .db import open_database

    with _lock:
        if _engine is None or url is not None:
            _engine = open_database(url)
    return _engine


def reset() -> None:
    """Forget the engine and cached studies (tests)."""
    global _engine
    with _lock:
        if _engine is not None:
            _engine.dispose()
        _engine = None
        _studies.clear()


def get_study(study_id: str) -> Study | None:
    """The validated, registered study ``study_id``, or None if there is no such file.

    Raises
    ------
    study.schema.StudyError
        If the file exists but is invalid.
    """
    path = study_path(study_id)
    if path is None:
        return None
    mtime = path.stat().st_mtime
    cached = _studies.get(study_id)
    if cached and cached[0] == mtime:
        return cached[1]
    study = load_study(path)
    if study.id != study_id:
        return None
    from . import store

    store.register_study(engine(), study)
    _studies[study_id] = (mtime, study)
    return study


def study_path(study_id: str) -> Path | None:
    """The file of ``study_id``: in :func:`study_dir`, else a bundled example; None if neither exists."""
    if not isinstance(study_id, str) or not ID_RE.match(study_id):
        return None
    for folder in (study_dir(), EXAMPLES):
        path = folder / f"{study_id}.yaml"
        if path.is_file():
            return path
    return None


def is_example(study_id: str) -> bool:
    """Whether ``study_id`` is served from the bundled examples (no file of that id in the study folder)."""
    path = study_path(study_id)
    return path is not None and path.parent == EXAMPLES


def list_studies() -> list[str]:
    """Ids of the study files in :func:`study_dir` and of the bundled examples, sorted."""
    ids = set()
    for d in (study_dir(), EXAMPLES):
        if d.is_dir():
            ids |= {p.stem for p in d.glob("*.yaml") if ID_RE.match(p.stem)}
    return sorted(ids)


def _registered_hashes() -> dict[str, str]:
    """``{study id: SHA-256 it went live with}`` from a study database that exists already, else ``{}``.

    Opens nothing that is not there: a SQLite file is read only if it exists (read-only, with the standard
    library: a launch that never ran a study still imports no SQLAlchemy); a PostgreSQL database is asked
    once, and an unreachable one (or one without the table) gives ``{}``: the first request checks again
    (:func:`study.store.register_study`).
    """
    from urllib.parse import unquote

    url = current().database_url
    if not url or url.startswith("sqlite"):
        rest = url.split("///", 1)[1].split("?", 1)[0] if url and "///" in url else ""
        path = Path(unquote(rest)) if url else DEFAULT_SQLITE_PATH
        if not rest and url or not path.is_file():  # sqlite:// (in memory) or no file yet
            return {}
        import sqlite3

        try:
            with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as conn:
                return dict(conn.execute("SELECT id, spec_sha256 FROM studies").fetchall())
        except sqlite3.Error:
            return {}
    from sqlalchemy import text
    from sqlalchemy.exc import SQLAlchemyError

    from .db import make_engine

    eng = make_engine(url)
    try:
        with eng.connect() as conn:
            return dict(conn.execute(text("SELECT id, spec_sha256 FROM studies")).all())
    except SQLAlchemyError:
        return {}
    finally:
        eng.dispose()


def changed_live_studies() -> list[str]:
    """One line per live study (registered in the database) whose file now differs from the one it went live with.

    A study goes live when it is first served: its file's SHA-256 is stored (``studies.spec_sha256``). The
    server refuses to start while a live study's file differs (``app/serve/study_check.py``): the
    participants already enrolled answered the registered file, and a preregistration names that hash.
    """
    import hashlib

    live = _registered_hashes()
    out = []
    for sid in list_studies():
        if sid not in live:
            continue
        path = study_path(sid)
        try:
            now = hashlib.sha256(load_study(path).source_text.encode()).hexdigest()
        except Exception:  # an unreadable or invalid file: listed with its errors on the researcher page
            continue
        if now != live[sid]:
            out.append(f"study {sid!r} is live (it went live with file sha256 {live[sid][:12]}) but {path} now has "
                       f"sha256 {now[:12]}: restore the file it went live with, or give the changed study a new id")
    return out
