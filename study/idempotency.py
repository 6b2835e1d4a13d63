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

A consent carries such a key too. Before a consent there is no participant to store it with, so
the resume token is derived from it instead (:func:`consent_token`): a consent re-sent after
its reply was lost finds the participant it enrolled (``participants.resume_token_hash`` is
unique) and is answered with the same token, so it enrols once (:func:`study.participation.enrol`).
"""

from __future__ import annotations

import base64
import hashlib

from sqlalchemy import Connection
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.exc import DBAPIError, DisconnectionError, InterfaceError, OperationalError, TimeoutError

from .models import AnswerKey

__all__ = ["claim_key", "consent_token", "unavailable"]


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


def consent_token(study_id: str, key: str) -> str:
    """The resume token of the consent whose idempotency key is ``key`` (the same for a replay).

    32 URL-safe characters: the SHA-256 of a tag, the study id and the key. The key's 128 random
    bits (``crypto.getRandomValues``) are the token's; the key travels only with the consent, over
    the connection the token is returned on, and is stored nowhere (only the token's hash is).

    Examples
    --------
    >>> consent_token("s1", "0" * 32) == consent_token("s1", "0" * 32) != consent_token("s2", "0" * 32)
    True
    """
    digest = hashlib.sha256(f"candor-study-consent\0{study_id}\0{key}".encode()).digest()
    return base64.urlsafe_b64encode(digest[:24]).decode()


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
