"""A study's pinned stimuli: what every (stimulus, condition) shows, fixed when first served.

The advice, the logged explanation context and the figure of each stimulus are
computed once from the workspace (by :mod:`app.services.study_stimuli`) and
stored with the workspace's fingerprint. Participants are then served from the
database, so a later upload, model or class switch cannot change the advice
shown to (and logged for) the rest of the study. The first writer wins: workers
that pin concurrently insert with ``ON CONFLICT DO NOTHING`` and all serve the
stored rows.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import Engine, select
from sqlalchemy.dialects import postgresql, sqlite

from .models import PinnedStimulus, StudyPin
from .store import utcnow

__all__ = ["Pin", "get_pin", "store_pin", "pinned_view"]


@dataclass(frozen=True)
class Pin:
    """The workspace a study is pinned to: SHA-256 ``fingerprint``, model name, time (naive UTC)."""

    fingerprint: str
    model_name: str
    created_at: datetime


def get_pin(engine: Engine, study_id: str) -> Pin | None:
    """The pin of ``study_id``, or None if the study was never served."""
    with engine.connect() as conn:
        row = conn.execute(select(StudyPin.fingerprint, StudyPin.model_name, StudyPin.created_at)
                           .where(StudyPin.study_id == study_id)).first()
    return None if row is None else Pin(*row)


def _insert_ignore(dialect: str, table):
    mod = postgresql if dialect == "postgresql" else sqlite
    return mod.insert(table).on_conflict_do_nothing()


def store_pin(engine: Engine, study_id: str, fingerprint: str, model_name: str,
              views: dict[tuple[str, str], dict]) -> Pin:
    """Store the pin and every view in one transaction, unless the study is already pinned.

    Parameters
    ----------
    views : dict of (item_id, condition_id) to dict
        JSON-serialisable view of each stimulus under each condition.

    Returns
    -------
    Pin
        The stored pin (another worker's, if it pinned first).
    """
    dialect = engine.dialect.name
    with engine.begin() as conn:
        new = conn.execute(_insert_ignore(dialect, StudyPin.__table__).returning(StudyPin.__table__.c.study_id),
                           dict(study_id=study_id, fingerprint=fingerprint, model_name=model_name[:2000],
                                created_at=utcnow())).all()
        if new:
            conn.execute(_insert_ignore(dialect, PinnedStimulus.__table__),
                         [dict(study_id=study_id, item_id=item, condition_id=cond, view=view)
                          for (item, cond), view in views.items()])
    pin = get_pin(engine, study_id)
    assert pin is not None  # just stored, by us or by a concurrent worker
    return pin


def pinned_view(engine: Engine, study_id: str, item_id: str, condition_id: str) -> dict | None:
    """The stored view of ``item_id`` under ``condition_id``, or None."""
    with engine.connect() as conn:
        return conn.scalar(select(PinnedStimulus.view).where(
            PinnedStimulus.study_id == study_id, PinnedStimulus.item_id == item_id,
            PinnedStimulus.condition_id == condition_id))
