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

from .schema import ID_RE, Study, load_study
from workspace.settings import current

if TYPE_CHECKING:  # SQLAlchemy and Alembic (0.4 s of CPU, 27 MB) are imported when the database is first opened:
    from sqlalchemy import Engine  # a server that never runs a study never imports them (issue 23)

__all__ = ["init", "engine", "study_dir", "study_path", "is_example", "get_study", "list_studies", "reset",
           "EXAMPLES"]

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
