"""Process-wide study-mode state: the database engine and the study files.

Study files live in ``CANDOR_STUDY_DIR`` (default ``studies/``) as
``<study_id>.yaml``. :func:`engine` opens ``DATABASE_URL`` (or the default
SQLite file) and applies the migrations once per process; call :func:`init` at
start-up to do it eagerly (e.g. from ``create_app``).
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

from sqlalchemy import Engine

from . import store
from .db import open_database
from .schema import ID_RE, Study, load_study

__all__ = ["init", "engine", "study_dir", "get_study", "list_studies", "reset"]

_lock = threading.Lock()
_engine: Engine | None = None
_studies: dict[str, tuple[float, Study]] = {}


def study_dir() -> Path:
    """Folder holding ``<study_id>.yaml`` files."""
    return Path(os.environ.get("CANDOR_STUDY_DIR", "studies"))


def engine() -> Engine:
    """The migrated engine (created on first use)."""
    global _engine
    if _engine is None:
        with _lock:
            if _engine is None:
                _engine = open_database()
    return _engine


def init(url: str | None = None) -> Engine:
    """Open (and migrate) the database now; ``url`` overrides ``DATABASE_URL``."""
    global _engine
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
    app.study.schema.StudyError
        If the file exists but is invalid.
    """
    if not isinstance(study_id, str) or not ID_RE.match(study_id):
        return None
    path = study_dir() / f"{study_id}.yaml"
    if not path.is_file():
        return None
    mtime = path.stat().st_mtime
    cached = _studies.get(study_id)
    if cached and cached[0] == mtime:
        return cached[1]
    study = load_study(path)
    if study.id != study_id:
        return None
    store.register_study(engine(), study)
    _studies[study_id] = (mtime, study)
    return study


def list_studies() -> list[str]:
    """Ids of the study files in :func:`study_dir`."""
    d = study_dir()
    return sorted(p.stem for p in d.glob("*.yaml") if ID_RE.match(p.stem)) if d.is_dir() else []
