"""SQLAlchemy 2.x models of study mode (schema managed by Alembic migrations).

Tables: ``studies``, ``participants``, ``trial_log`` (append-only, one row per
trial phase, docs/methods.md, "Study mode") and ``questionnaire_responses``; ``study_pins`` and
``pinned_stimuli`` (the model fingerprint and the advice and explanation of every
stimulus, fixed when the study is first served) and ``enrolment_log`` (recent
enrolments per keyed client address, for the rate limit shared by all workers). Uniqueness
constraints make submissions idempotent: a response sent twice for the same
``(participant, trial_index, phase)`` or ``(participant, block_index,
questionnaire, item)`` is stored once. Timestamps are naive UTC datetimes.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import (JSON, BigInteger, Boolean, DateTime, Float, ForeignKey, Index, Integer, String, Text,
                        UniqueConstraint)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

__all__ = ["Base", "StudyRow", "Participant", "TrialLog", "QuestionnaireResponse", "StudyPin", "PinnedStimulus",
           "EnrolmentLog", "AnswerKey", "TABLES"]


class Base(DeclarativeBase):
    """Declarative base of study-mode tables."""


class StudyRow(Base):
    """A registered study: its id and the exact YAML it was run with."""

    __tablename__ = "studies"
    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    title: Mapped[str] = mapped_column(Text)
    spec_yaml: Mapped[str] = mapped_column(Text)
    spec_sha256: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(DateTime)


class Participant(Base):
    """A pseudonymous participant with a concealed, logged assignment.

    ``resume_token_hash`` is the SHA-256 of the resume token given to the
    browser; the token itself is never stored. ``(study_id, stratum,
    alloc_position)`` is unique, so concurrent enrolments cannot share a slot of
    the allocation list. ``recruitment`` holds the platform's ids from the study link
    (:mod:`study.recruitment`); ``recruitment_id`` (``prolific:<id>``, ``mturk:<id>``) is unique
    per study, so one platform account cannot enrol twice.
    """

    __tablename__ = "participants"
    __table_args__ = (UniqueConstraint("study_id", "stratum", "alloc_position", name="uq_participant_slot"),
                      Index("uq_participant_recruitment", "study_id", "recruitment_id", unique=True))
    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    study_id: Mapped[str] = mapped_column(ForeignKey("studies.id"), index=True)
    resume_token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    session_id: Mapped[str] = mapped_column(String(40))
    consent_version: Mapped[str] = mapped_column(String(64))
    stratum: Mapped[str] = mapped_column(String(64))
    condition: Mapped[str] = mapped_column(String(64))
    condition_order: Mapped[list] = mapped_column(JSON)
    assignment_seed: Mapped[int] = mapped_column(BigInteger)
    alloc_position: Mapped[int] = mapped_column(Integer)
    alloc_block_index: Mapped[int] = mapped_column(Integer)
    alloc_block_size: Mapped[int] = mapped_column(Integer)
    stimulus_order: Mapped[list] = mapped_column(JSON)
    progress: Mapped[int] = mapped_column(Integer, default=0)
    status: Mapped[str] = mapped_column(String(16), default="active")
    completion_code: Mapped[str | None] = mapped_column(String(32), nullable=True)
    exclusion_reason: Mapped[str | None] = mapped_column(String(64), nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime)
    completed_at: Mapped[datetime | None] = mapped_column(DateTime, nullable=True)
    recruitment: Mapped[dict | None] = mapped_column(JSON, nullable=True)
    recruitment_id: Mapped[str | None] = mapped_column(String(80), nullable=True)


class TrialLog(Base):
    """Append-only per-trial log (docs/methods.md, "Study mode"), one row per trial phase.

    ``phase`` is ``forward`` (forward prediction), ``initial``/``final`` (decision
    with advice, Yin et al. 2019) or ``attention``. ``correct`` is the response
    against the model output for ``forward`` and against ``truth`` otherwise.
    Derived ``agree``/``switched`` are computed by :mod:`study.analysis`.
    """

    __tablename__ = "trial_log"
    __table_args__ = (UniqueConstraint("participant_id", "trial_index", "phase", name="uq_trial_phase"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    study_id: Mapped[str] = mapped_column(ForeignKey("studies.id"), index=True)
    participant_id: Mapped[str] = mapped_column(ForeignKey("participants.id"), index=True)
    session_id: Mapped[str] = mapped_column(String(40))
    consent_version: Mapped[str] = mapped_column(String(64))
    condition: Mapped[str] = mapped_column(String(64))
    assignment_seed: Mapped[int] = mapped_column(BigInteger)
    block_index: Mapped[int] = mapped_column(Integer)
    trial_index: Mapped[int] = mapped_column(Integer)
    phase: Mapped[str] = mapped_column(String(16))
    item_id: Mapped[str] = mapped_column(String(64))
    item_order_position: Mapped[int] = mapped_column(Integer)
    truth: Mapped[str | None] = mapped_column(String(64), nullable=True)
    model_prediction: Mapped[str | None] = mapped_column(String(64), nullable=True)
    model_correct: Mapped[bool | None] = mapped_column(Boolean, nullable=True)
    explanation_id: Mapped[str | None] = mapped_column(String(128), nullable=True)
    explanation_parent_id: Mapped[str | None] = mapped_column(String(128), nullable=True)
    operators: Mapped[list | None] = mapped_column(JSON, nullable=True)
    fidelity_metric: Mapped[str | None] = mapped_column(String(32), nullable=True)
    fidelity: Mapped[float | None] = mapped_column(Float, nullable=True)
    complexity: Mapped[dict | None] = mapped_column(JSON, nullable=True)
    fidelity_measures: Mapped[dict | None] = mapped_column(JSON, nullable=True)
    response: Mapped[str] = mapped_column(Text)
    correct: Mapped[bool | None] = mapped_column(Boolean, nullable=True)
    rt_ms: Mapped[float | None] = mapped_column(Float, nullable=True)
    confidence: Mapped[float | None] = mapped_column(Float, nullable=True)
    attention_check_passed: Mapped[bool | None] = mapped_column(Boolean, nullable=True)
    client_timestamp: Mapped[datetime | None] = mapped_column(DateTime, nullable=True)
    server_timestamp: Mapped[datetime] = mapped_column(DateTime)
    ui_version: Mapped[str] = mapped_column(String(32))
    instrument_versions: Mapped[dict] = mapped_column(JSON)


class QuestionnaireResponse(Base):
    """One questionnaire item answer, with the exact text shown (docs/methods.md, "Study mode")."""

    __tablename__ = "questionnaire_responses"
    __table_args__ = (
        UniqueConstraint("participant_id", "block_index", "questionnaire_id", "item_label", name="uq_questionnaire_item"),
    )
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    study_id: Mapped[str] = mapped_column(ForeignKey("studies.id"), index=True)
    participant_id: Mapped[str] = mapped_column(ForeignKey("participants.id"), index=True)
    condition: Mapped[str] = mapped_column(String(64))
    block_index: Mapped[int] = mapped_column(Integer)
    questionnaire_id: Mapped[str] = mapped_column(String(64))
    instrument: Mapped[str] = mapped_column(String(64))
    instrument_version: Mapped[str] = mapped_column(Text)
    item_label: Mapped[str] = mapped_column(String(64))
    item_text: Mapped[str] = mapped_column(Text)
    reverse: Mapped[bool] = mapped_column(Boolean)
    scale_points: Mapped[int] = mapped_column(Integer)
    response: Mapped[int] = mapped_column(Integer)
    client_timestamp: Mapped[datetime | None] = mapped_column(DateTime, nullable=True)
    server_timestamp: Mapped[datetime] = mapped_column(DateTime)


class StudyPin(Base):
    """The workspace a study was pinned to when first served (one row per study).

    ``fingerprint`` is the SHA-256 of the model's classes, the stimulus rows and
    the model's output on them (:func:`app.services.study_stimuli.workspace_fingerprint`).
    """

    __tablename__ = "study_pins"
    study_id: Mapped[str] = mapped_column(ForeignKey("studies.id"), primary_key=True)
    fingerprint: Mapped[str] = mapped_column(String(64))
    model_name: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(DateTime)


class PinnedStimulus(Base):
    """What one stimulus shows under one condition, computed once when the study was pinned.

    ``view`` is JSON: the feature table, the advice and logged context
    (:class:`study.store.TrialContext` fields), the explanation kind, the
    statement and the figure (Plotly JSON).
    """

    __tablename__ = "pinned_stimuli"
    study_id: Mapped[str] = mapped_column(ForeignKey("studies.id"), primary_key=True)
    item_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    condition_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    view: Mapped[dict] = mapped_column(JSON)


class EnrolmentLog(Base):
    """One recent enrolment: study, keyed hash of the client address, time (rate limit)."""

    __tablename__ = "enrolment_log"
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    study_id: Mapped[str] = mapped_column(String(64), index=True)
    client_key: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(DateTime, index=True)


class AnswerKey(Base):
    """One stored submission's idempotency key, made in the browser: a replay of the key is stored once."""

    __tablename__ = "answer_keys"
    key: Mapped[str] = mapped_column(String(64), primary_key=True)
    participant_id: Mapped[str] = mapped_column(String(40), ForeignKey("participants.id"), index=True)
    step: Mapped[int] = mapped_column(Integer)
    created_at: Mapped[datetime] = mapped_column(DateTime)


#: Export order: parents first.
TABLES = (StudyRow.__table__, Participant.__table__, TrialLog.__table__, QuestionnaireResponse.__table__)
