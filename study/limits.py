"""Enrolment limits shared by every server process: a rate per client address, a rate per
study, and the study's ``max_participants`` cap.

Recent enrolments are counted in the database (``enrolment_log``), which all gunicorn
workers share, inside the enrolment's own transaction. The transaction first takes the
write lock (SQLite: its first statement is a write; PostgreSQL: an advisory lock per
study), so two workers cannot both see "one slot left" and both take it. The client
address is stored only as a keyed hash (HMAC-SHA-256 with ``CANDOR_SECRET_KEY``, or with
the study file's SHA-256 when no key is set), and rows older than an hour are deleted.
"""

from __future__ import annotations

import hashlib
import hmac
import zlib
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import Connection, delete, func, insert, select, text

from .models import EnrolmentLog, Participant
from .schema import Study
from workspace.settings import current

__all__ = ["ENV_PER_CLIENT", "ENV_PER_STUDY", "EnrolLimits", "EnrolmentRefused", "limits_from_env",
           "client_key", "check_and_log"]

ENV_PER_CLIENT = "CANDOR_ENROL_PER_MINUTE"
ENV_PER_STUDY = "CANDOR_ENROL_STUDY_PER_MINUTE"
_FIELDS = {ENV_PER_CLIENT: "enrol_per_minute", ENV_PER_STUDY: "enrol_study_per_minute"}
DEFAULT_PER_CLIENT = 20
DEFAULT_PER_STUDY = 120
WINDOW = timedelta(minutes=1)
KEEP = timedelta(hours=1)
_PG_LOCK_CLASS = 0x454E524C  # "ENRL"


class EnrolmentRefused(ValueError):
    """An enrolment over a limit; the message is shown to the participant."""


@dataclass(frozen=True)
class EnrolLimits:
    """Enrolments allowed per minute: ``per_client`` (one client address, one study) and ``per_study``."""

    per_client: int = DEFAULT_PER_CLIENT
    per_study: int = DEFAULT_PER_STUDY


def _env_int(name: str, default: int) -> int:
    raw = getattr(current(), _FIELDS[name])
    if raw is None or raw.strip() == "":
        return default
    if not raw.strip().isdigit() or not 1 <= int(raw) <= 10**6:
        raise ValueError(f"{name} must be a whole number of enrolments per minute in 1..1000000, got {raw!r}")
    return int(raw)


def limits_from_env() -> EnrolLimits:
    """Read ``CANDOR_ENROL_PER_MINUTE`` (default 20) and ``CANDOR_ENROL_STUDY_PER_MINUTE`` (default 120).

    Raises
    ------
    ValueError
        If a variable is set to anything but an integer in 1..1000000.
    """
    return EnrolLimits(_env_int(ENV_PER_CLIENT, DEFAULT_PER_CLIENT), _env_int(ENV_PER_STUDY, DEFAULT_PER_STUDY))


def client_key(study: Study, address: str | None) -> str:
    """Keyed SHA-256 (hex) of the client address, so the raw address is never stored."""
    secret = current().secret_key or hashlib.sha256(study.source_text.encode()).hexdigest()
    return hmac.new(secret.encode(), (address or "unknown").encode(), hashlib.sha256).hexdigest()


def check_and_log(conn: Connection, study: Study, now: datetime, *, key: str | None,
                  limits: EnrolLimits | None) -> None:
    """Refuse an enrolment over the cap or a rate limit; otherwise log it. Call first in the transaction.

    Parameters
    ----------
    conn : Connection
        The enrolment's transaction (committed or rolled back with the participant row).
    study : Study
    now : datetime
        Naive UTC time of the enrolment.
    key : str or None
        :func:`client_key` of the requester; with ``limits`` None, no rate is checked.
    limits : EnrolLimits or None

    Raises
    ------
    EnrolmentRefused
        With a message for the participant.
    """
    # Take the write lock before counting: SQLite serialises writers from the first write on.
    conn.execute(delete(EnrolmentLog).where(EnrolmentLog.created_at < now - KEEP))
    if conn.dialect.name == "postgresql":
        conn.execute(text("SELECT pg_advisory_xact_lock(:a, :b)"),
                     {"a": _PG_LOCK_CLASS, "b": zlib.crc32(study.id.encode()) - 2**31})
    if study.max_participants is not None:
        n = conn.scalar(select(func.count()).select_from(Participant).where(Participant.study_id == study.id))
        if n >= study.max_participants:
            raise EnrolmentRefused("This study is full: it has all the participants it needs. Thank you for "
                                   "your interest.")
    if limits is None or key is None:
        return
    recent = select(func.count()).select_from(EnrolmentLog).where(
        EnrolmentLog.study_id == study.id, EnrolmentLog.created_at > now - WINDOW)
    if conn.scalar(recent) >= limits.per_study:
        raise EnrolmentRefused("Many people are joining this study right now; please try again in a minute.")
    if conn.scalar(recent.where(EnrolmentLog.client_key == key)) >= limits.per_client:
        raise EnrolmentRefused("Too many enrolments from your network in the last minute; please try again "
                               "in a minute.")
    conn.execute(insert(EnrolmentLog).values(study_id=study.id, client_key=key, created_at=now))
