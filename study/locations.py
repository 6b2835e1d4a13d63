"""Where study mode keeps its database when ``DATABASE_URL`` is unset, readable without importing SQLAlchemy
(:func:`study.db.resolve_url` opens it; :func:`study.runtime.changed_live_studies` looks for it at start)."""

from pathlib import Path

__all__ = ["DEFAULT_SQLITE_PATH"]

#: The default study database, relative to the server's working folder.
DEFAULT_SQLITE_PATH = Path("instance") / "candor-study.sqlite3"
