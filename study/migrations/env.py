"""Alembic environment for study mode (run programmatically by study.db.migrate)."""

from __future__ import annotations

from alembic import context
from sqlalchemy import create_engine

from study.models import Base

config = context.config
target_metadata = Base.metadata


def _run(connection) -> None:
    context.configure(connection=connection, target_metadata=target_metadata,
                      version_table="alembic_version_study", render_as_batch=True)
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    """Use the connection handed over in ``config.attributes`` or the configured URL."""
    connection = config.attributes.get("connection")
    if connection is not None:
        _run(connection)
        return
    engine = create_engine(config.get_main_option("sqlalchemy.url"))
    with engine.connect() as conn:
        _run(conn)
    engine.dispose()


if context.is_offline_mode():  # pragma: no cover - offline SQL generation
    context.configure(url=config.get_main_option("sqlalchemy.url"), target_metadata=target_metadata,
                      version_table="alembic_version_study", literal_binds=True)
    with context.begin_transaction():
        context.run_migrations()
else:
    run_migrations_online()
