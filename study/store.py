"""Study-mode operations on the database: register, enrol, resume, record.

Every write is idempotent: enrolment retries on a taken allocation slot,
responses use ``INSERT ... ON CONFLICT DO NOTHING`` on their natural key, and
progress only moves forward. Participants are found only by the hash of their
resume token, so one participant cannot reach another's data. The server, not
the browser, decides condition, item, block and correctness.

References
----------
.. [1] Yin, M., Wortman Vaughan, J., Wallach, H. (2019). CHI. doi 10.1145/3290605.3300509
   (initial answer, advice, final answer).
"""

from __future__ import annotations

import hashlib
import math
import secrets
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from sqlalchemy import Connection, Engine, func, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from . import limits as _limits
from .answers import MAX_TEXT
from .models import Participant, QuestionnaireResponse, StudyRow, TrialLog
from .randomisation import allocate, item_sets, stimulus_order, williams_design
from .recruitment import recruitment_id
from .schema import Study

__all__ = [
    "UI_VERSION", "TrialContext", "utcnow", "hash_token", "register_study", "enrol", "participant_by_token",
    "trial_plan", "record_trial", "record_questionnaire", "advance", "complete",
]

UI_VERSION = "candor-study-1"
PHASES = ("forward", "initial", "final", "attention")


def utcnow() -> datetime:
    """Naive UTC now, microsecond precision (the storage convention)."""
    return datetime.now(timezone.utc).replace(tzinfo=None)


def hash_token(token: str) -> str:
    """SHA-256 hex digest of a resume token (only the digest is stored)."""
    return hashlib.sha256(token.encode()).hexdigest()


@dataclass(frozen=True)
class TrialContext:
    """What the server showed on a trial (from the same service the analyst uses).

    Parameters
    ----------
    model_prediction : str or None
        The model's output label shown as advice.
    truth : str or None
        True label (hidden from the participant).
    explanation_id, explanation_parent_id : str or None
        The explanation shown and, for persuasive variants, its descriptive parent.
    operators : list of str or None
        Simplification operators applied (persuasive condition).
    fidelity_metric : str or None
        E.g. ``"r2"`` or ``"agreement"``.
    fidelity : float or None
        Fidelity of the explanation shown.
    complexity : dict or None
        Complexity vector of the explanation shown.
    fidelity_measures : dict or None
        Every fidelity figure of the explanation shown against its descriptive parent
        (``Simplification.fidelity_after``), so trust can be related to any of them.
    """

    model_prediction: str | None = None
    truth: str | None = None
    explanation_id: str | None = None
    explanation_parent_id: str | None = None
    operators: list | None = None
    fidelity_metric: str | None = None
    fidelity: float | None = None
    complexity: dict | None = None
    fidelity_measures: dict | None = None

    @property
    def model_correct(self) -> bool | None:
        """Whether the model's prediction equals the truth (None if unknown)."""
        if self.model_prediction is None or self.truth is None:
            return None
        return self.model_prediction == self.truth


def register_study(engine: Engine, study: Study) -> None:
    """Store ``study`` (idempotent); refuse a changed file under the same id."""
    digest = hashlib.sha256(study.source_text.encode()).hexdigest()
    try:
        with Session(engine) as s, s.begin():
            row = s.get(StudyRow, study.id)
            if row is None:
                s.add(StudyRow(id=study.id, title=study.title, spec_yaml=study.source_text,
                               spec_sha256=digest, created_at=utcnow()))
                return
            stored = row.spec_sha256
    except IntegrityError:
        # Another worker or thread registered it between our read and our insert (the first
        # requests of a freshly started server race here); compare with what it stored.
        with Session(engine) as s:
            stored = s.scalar(select(StudyRow.spec_sha256).where(StudyRow.id == study.id))
        if stored is None:
            raise
    if stored != digest:
        raise ValueError(f"study {study.id!r} is already registered with a different file "
                         f"(sha256 {stored[:12]} != {digest[:12]}); give the changed study a new id")


def _arms(study: Study) -> list:
    if study.design == "within":
        return list(range(len(williams_design(len(study.conditions)))))
    return list(study.condition_ids)


@contextmanager
def _begin(bind: Engine | Connection):
    """A transaction on ``bind``: a new one for an Engine, the caller's for a Connection."""
    if isinstance(bind, Connection):
        yield bind
    else:
        with bind.begin() as conn:
            yield conn


def enrol(engine: Engine, study: Study, *, stratum: str = "", attempts: int = 20, client: str | None = None,
          limits: _limits.EnrolLimits | None = None, recruitment: dict | None = None,
          token: str | None = None) -> tuple[Participant, str]:
    """Enrol a consenting participant: allocate, order stimuli, issue a resume token.

    Parameters
    ----------
    engine : Engine
        Database (migrated).
    study : Study
        A registered study.
    stratum : str, default=""
        The participant's stratum; one of ``study.randomisation.strata`` in a stratified study.
    attempts : int, default=20
        Retries when a concurrent enrolment took the same allocation slot.
    client : str or None, default=None
        The requester's address; with ``limits``, enrolments per minute from it are limited.
    limits : EnrolLimits or None, default=None
        Rates per client and per study (:mod:`study.limits`); ``max_participants`` applies always.
    recruitment : dict or None, default=None
        The platform's ids from the study link (:func:`study.recruitment.parse_params`), stored
        with the participant; its participant id may enrol once per study.
    token : str or None, default=None
        The token to issue (None: random); a participant enrolled with it is returned (a re-sent consent).

    Returns
    -------
    participant : Participant
        The stored row (detached).
    token : str
        The resume token for the browser (only its hash is stored).

    Raises
    ------
    ValueError
        On a stratum the study does not declare.
    study.limits.EnrolmentRefused
        When the study is full, an enrolment rate is exceeded, or the recruitment platform's
        participant id has already enrolled (nothing is stored).
    """
    r = study.randomisation
    if r.stratify_by and stratum not in r.strata:
        raise ValueError(f"stratum must be one of {list(r.strata)}, got {stratum!r}")
    if not r.stratify_by:
        stratum = ""
    wrong = {s.id for s in study.stimuli if s.model_correct is False}
    ids = [s.id for s in study.stimuli]
    key = _limits.client_key(study, client) if limits is not None else None
    rid = recruitment_id(recruitment or {})
    replay = select(Participant).where(Participant.resume_token_hash == hash_token(token)) if token else None
    for _ in range(attempts):
        tok = token or secrets.token_urlsafe(24)
        try:
            with Session(engine, expire_on_commit=False) as s, s.begin():
                now = utcnow()
                if replay is not None and (same := s.scalar(replay)) is not None:
                    return same, token  # a re-sent consent (a concurrent replay won the insert)
                if rid is not None and s.scalar(select(Participant.id).where(
                        Participant.study_id == study.id, Participant.recruitment_id == rid)) is not None:
                    raise _limits.EnrolmentRefused("You have already taken part in this study (your recruitment "
                                                   "id is registered); thank you.")
                _limits.check_and_log(s.connection(), study, now, key=key, limits=limits)
                pos = s.scalar(select(func.coalesce(func.max(Participant.alloc_position), -1) + 1)
                               .where(Participant.study_id == study.id, Participant.stratum == stratum))
                a = allocate(_arms(study), r.block_sizes, r.seed, stratum, pos)
                if study.design == "within":
                    order_ix = williams_design(len(study.conditions))[a.arm]
                    cond_order = [study.condition_ids[c] for c in order_ix]
                    sets = item_sets(ids, len(study.conditions))
                    blocks = [stimulus_order(sets[p], a.seed + p, wrong_ids=wrong,
                                             no_wrong_first=r.no_wrong_first if p == 0 else 0)
                              for p in range(len(sets))]
                else:
                    cond_order = [a.arm]
                    blocks = [stimulus_order(ids, a.seed, wrong_ids=wrong, no_wrong_first=r.no_wrong_first)]
                p = Participant(
                    id="p_" + secrets.token_hex(8), study_id=study.id, resume_token_hash=hash_token(tok),
                    session_id=secrets.token_hex(8), consent_version=study.consent_version, stratum=stratum,
                    condition=">".join(cond_order), condition_order=cond_order, assignment_seed=a.seed,
                    alloc_position=a.position, alloc_block_index=a.block_index, alloc_block_size=a.block_size,
                    stimulus_order=blocks, progress=0, status="active", created_at=now,
                    recruitment=dict(recruitment) if recruitment else None, recruitment_id=rid,
                )
                s.add(p)
            return p, tok
        except IntegrityError:
            continue
    raise RuntimeError(f"could not enrol after {attempts} attempts (allocation slot contention)")


def participant_by_token(engine: Engine, study_id: str, token: str) -> Participant | None:
    """Return the participant holding ``token`` in ``study_id``, or None."""
    if not token:
        return None
    with Session(engine, expire_on_commit=False) as s:
        return s.scalar(select(Participant).where(Participant.study_id == study_id,
                                                  Participant.resume_token_hash == hash_token(token)))


def trial_plan(participant: Participant) -> list[tuple[int, str, str]]:
    """``(block_index, condition, item_id)`` for each trial index, in order."""
    return [(b, participant.condition_order[b], item)
            for b, items in enumerate(participant.stimulus_order) for item in items]


def _insert_ignore(bind: Engine | Connection, table, rows: list[dict], keys: list[str]) -> int:
    dialect = bind.dialect.name
    if dialect == "postgresql":
        stmt = postgresql.insert(table).on_conflict_do_nothing(index_elements=keys)
    elif dialect == "sqlite":
        stmt = sqlite.insert(table).on_conflict_do_nothing(index_elements=keys)
    else:  # pragma: no cover - other back ends are not supported
        raise ValueError(f"study mode supports sqlite and postgresql, got {dialect!r}")
    stmt = stmt.returning(table.c.id)  # rowcount is unreliable for ON CONFLICT on some drivers
    with _begin(bind) as conn:
        return sum(len(conn.execute(stmt, row).all()) for row in rows)


def record_trial(engine: Engine | Connection, study: Study, participant: Participant, *, trial_index: int, phase: str,
                 response: str, context: TrialContext = TrialContext(), rt_ms: float | None = None,
                 confidence: float | None = None, client_timestamp: datetime | None = None) -> bool:
    """Append one trial phase to the log; a repeat of the same key is ignored.

    Parameters
    ----------
    engine : Engine or Connection
        With a Connection, the row is written in the caller's transaction.
    trial_index : int
        0-based index into :func:`trial_plan` (for ``attention``: the check's
        ``after_trial`` minus 1 is not needed; the check is located by position).
    phase : {"forward", "initial", "final", "attention"}
        ``forward``: predict the model's output; ``initial``/``final``: decision
        before and after the model's advice (Yin et al. 2019); ``attention``:
        the attention check shown after trial ``trial_index + 1``.
    response : str
        The participant's answer (a model output label, or a check option).
    context : TrialContext, default=TrialContext()
        What the server showed; ignored for ``attention``.

    Returns
    -------
    bool
        True if stored now, False if an identical key was already stored.

    Raises
    ------
    ValueError
        On an unknown phase or trial, a response that is not one of the offered
        options (model outputs, or the attention check's options), or a
        confidence that is not finite or outside ``study.confidence_scale``.
    """
    plan = trial_plan(participant)
    if phase not in PHASES:
        raise ValueError(f"phase must be one of {PHASES}, got {phase!r}")
    if not 0 <= trial_index < len(plan):
        raise ValueError(f"trial_index must be in 0..{len(plan) - 1}, got {trial_index}")
    block_index, condition, item_id = plan[trial_index]
    if confidence is not None:
        lo, hi = study.confidence_scale
        if isinstance(confidence, bool) or not isinstance(confidence, (int, float)) \
                or not math.isfinite(confidence) or not lo <= confidence <= hi:
            raise ValueError(f"confidence must be a finite number in {lo:g}..{hi:g}, got {str(confidence)[:40]!r}")
    if len(str(response)) > MAX_TEXT:
        raise ValueError(f"response is longer than {MAX_TEXT} characters")
    row: dict[str, Any] = dict(
        study_id=study.id, participant_id=participant.id, session_id=participant.session_id,
        consent_version=participant.consent_version, condition=condition,
        assignment_seed=participant.assignment_seed, block_index=block_index, trial_index=trial_index,
        phase=phase, item_order_position=trial_index, response=str(response), rt_ms=rt_ms,
        confidence=confidence, client_timestamp=client_timestamp, server_timestamp=utcnow(),
        ui_version=UI_VERSION, instrument_versions=study.instrument_versions,
    )
    if phase == "attention":
        check = next((a for a in study.attention_checks if a.after_trial == trial_index + 1), None)
        if check is None:
            raise ValueError(f"no attention check after trial {trial_index + 1}")
        if str(response) not in check.options:
            raise ValueError(f"response must be one of {list(check.options)}, got {str(response)[:80]!r}")
        row.update(item_id=check.id, attention_check_passed=str(response) == check.correct)
    else:
        if study.model.numeric:
            v = _finite(response)
            lo, hi = study.model.range
            if v is None or not lo <= v <= hi:
                raise ValueError(f"response must be a number in {lo:g}..{hi:g}, got {str(response)[:80]!r}")
            row["response"] = repr(v)
        elif str(response) not in study.model.outputs:
            raise ValueError(f"response must be one of {list(study.model.outputs)}, got {str(response)[:80]!r}")
        target = None if study.model.numeric else (context.model_prediction if phase == "forward" else context.truth)
        row.update(
            item_id=item_id, truth=context.truth, model_prediction=context.model_prediction,
            model_correct=None if study.model.numeric else context.model_correct, explanation_id=context.explanation_id,
            explanation_parent_id=context.explanation_parent_id, operators=context.operators,
            fidelity_metric=context.fidelity_metric, fidelity=context.fidelity, complexity=context.complexity,
            fidelity_measures=context.fidelity_measures,
            correct=None if target is None else str(response) == target,
        )
    return _insert_ignore(engine, TrialLog.__table__, [row], ["participant_id", "trial_index", "phase"]) == 1


def _finite(x) -> float | None:
    """``x`` (a number or its text) as a finite float, else None."""
    if isinstance(x, bool):
        return None
    try:
        v = float(x)
    except (TypeError, ValueError, OverflowError):
        return None
    return v if math.isfinite(v) else None


def record_questionnaire(engine: Engine | Connection, study: Study, participant: Participant, questionnaire_id: str,
                         answers: dict[str, int], *, block_index: int = 0,
                         client_timestamp: datetime | None = None) -> int:
    """Store the answers to one questionnaire; return how many rows were new.

    Raises
    ------
    ValueError
        On an unknown questionnaire or label, a missing item, or an answer
        outside ``1..scale_points``.
    """
    q = next((q for q in study.questionnaires if q.id == questionnaire_id), None)
    if q is None:
        raise ValueError(f"no questionnaire {questionnaire_id!r}; expected one of {[x.id for x in study.questionnaires]}")
    labels = [i.label for i in q.items]
    if sorted(answers) != sorted(labels):
        raise ValueError(f"expected answers for {labels}, got {sorted(answers)}")
    now = utcnow()
    rows = []
    for item in q.items:
        x = answers[item.label]
        if not isinstance(x, int) or isinstance(x, bool) or not 1 <= x <= q.scale_points:
            raise ValueError(f"answer to {item.label!r} must be an integer in 1..{q.scale_points}, got {x!r}")
        rows.append(dict(
            study_id=study.id, participant_id=participant.id, condition=participant.condition_order[block_index],
            block_index=block_index, questionnaire_id=q.id, instrument=q.instrument,
            instrument_version=q.instrument_version, item_label=item.label, item_text=item.text,
            reverse=item.reverse, scale_points=q.scale_points, response=x,
            client_timestamp=client_timestamp, server_timestamp=now,
        ))
    keys = ["participant_id", "block_index", "questionnaire_id", "item_label"]
    return _insert_ignore(engine, QuestionnaireResponse.__table__, rows, keys)


def advance(engine: Engine | Connection, participant_id: str, step: int) -> int:
    """Move a participant's progress forward to ``step`` (never back); return it.

    With a Connection, the update is part of the caller's transaction.
    """
    with _begin(engine) as conn:
        conn.execute(update(Participant).where(Participant.id == participant_id, Participant.progress < step)
                     .values(progress=step))
        return conn.scalar(select(Participant.progress).where(Participant.id == participant_id))


def complete(engine: Engine | Connection, participant_id: str) -> str:
    """Mark a participant complete (once) and return their completion code."""
    code = secrets.token_hex(5).upper()
    with _begin(engine) as conn:
        conn.execute(update(Participant).where(Participant.id == participant_id, Participant.completion_code.is_(None))
                     .values(completion_code=code, status="completed", completed_at=utcnow()))
        return conn.scalar(select(Participant.completion_code).where(Participant.id == participant_id))
