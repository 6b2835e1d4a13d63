"""Surviving the database: idempotent submissions and telling an outage from a refusal.

Every answer carries an id made in the browser (the *idempotency key*, ``timing["key"]``, 32 hexadecimal digits checked by
:data:`study.answers.KEY_RE`). It is
stored in ``answer_keys`` (primary key: unique) in the same transaction as the answer and the step
counter (:func:`study.flow.submit`), so a submission the browser re-sends, because the reply was
lost or the database was unreachable, is stored once. :func:`unavailable` tells a database that
cannot be reached (server stopped, connection dropped, SQLite file locked past its busy timeout)
from every other error: the participant page then says the answer is being saved and re-sends it
until it is stored (``app/callbacks/study.py``); the engine's pool pre-ping (PostgreSQL) replaces
dead connections when the server is back (:func:`study.db.make_engine`).
"""

from __future__ import annotations

from sqlalchemy import Connection
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.exc import DBAPIError, DisconnectionError, InterfaceError, OperationalError, TimeoutError

from .models import AnswerKey

__all__ = ["claim_key", "unavailable"]


def claim_key(conn: Connection, key: str, participant_id: str, step: int) -> bool:
    """Store a submission's idempotency key in the caller's transaction.

    Returns
    -------
    bool
        True if the key is new (store the answer), False if it is stored already (a replay).
    """
    from .store import utcnow

    table = AnswerKey.__table__
    insert = postgresql.insert if conn.dialect.name == "postgresql" else sqlite.insert
    stmt = insert(table).on_conflict_do_nothing(index_elements=["key"]).returning(table.c.key)
    row = dict(key=key, participant_id=participant_id, step=step, created_at=utcnow())
    return len(conn.execute(stmt, row).all()) == 1


def unavailable(exc: BaseException) -> bool:
    """Whether ``exc`` means the study database cannot be reached now (try again later).

    True for SQLAlchemy's operational and interface errors (connection refused or dropped,
    server shutting down, SQLite ``database is locked``), a pool timeout, and any driver error
    that invalidated its connection; False for everything else (a constraint, a bad query).
    """
    while exc is not None:
        if isinstance(exc, (OperationalError, InterfaceError, DisconnectionError, TimeoutError)):
            return True
        if isinstance(exc, DBAPIError) and exc.connection_invalidated:
            return True
        exc = exc.__cause__
    return False
