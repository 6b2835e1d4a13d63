"""The participant flow as a server-side state machine (no dash).

After consent (which enrols, :func:`study.store.enrol`), a participant walks
a fixed list of steps: instructions, one step per trial (attention checks after
the trials the study names), the questionnaires (once, or after every block in a
within-subject study) and the completion code. ``participants.progress`` counts
completed steps, so a reload renders ``steps[progress]`` again. Within a trial,
the phases already in the trial log are not asked again: forward prediction,
then the initial answer, then the model's advice and the final answer
(Yin et al. 2019).

A submission names the step it answers; :func:`locate` checks it once. A step already
completed is acknowledged and ignored (a double click or a resent request); a step ahead of
the participant, or a phase that is not the step's, is refused (:class:`OffStep`). The
participant's use cases that call it are :mod:`study.participation`.
"""

from __future__ import annotations

import math
from contextlib import nullcontext
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import Connection, Engine, select

from . import idempotency, store
from .answers import MAX_RT_MS
from .models import Participant, TrialLog
from .schema import Study

__all__ = ["Step", "steps", "trial_phases", "step_phases", "logged_phases", "current", "locate", "Located", "record",
           "submit", "Submitted", "OffStep", "NoSuchStep"]


@dataclass(frozen=True)
class Step:
    """One screen of the flow.

    ``kind`` is ``instructions``, ``trial``, ``attention``, ``questionnaire`` or
    ``done``; ``trial_index`` is the 0-based trial (for ``attention``: the trial
    it follows); ``block_index`` the block; ``questionnaire_id`` names the form.
    """

    kind: str
    trial_index: int | None = None
    block_index: int = 0
    questionnaire_id: str | None = None


def trial_phases(study: Study, condition: str | None = None) -> list[str]:
    """Phases of one trial in order: ``forward``, then ``initial`` and ``final``.

    In a no-advice arm (``condition`` whose explanation is ``none``) the participant makes one
    decision without the model, logged as ``final`` (there is no advice to predict or to revise towards).
    """
    if condition is not None and not study.advised(condition):
        return ["final"] if "decision_with_advice" in study.tasks else []
    out = ["forward"] if "forward_prediction" in study.tasks else []
    return out + (["initial", "final"] if "decision_with_advice" in study.tasks else [])


def step_phases(study: Study, participant: Participant, step: Step) -> list[str]:
    """:func:`trial_phases` for the arm ``participant`` is in at trial step ``step``."""
    return trial_phases(study, participant.condition_order[step.block_index])


def steps(study: Study, participant: Participant) -> list[Step]:
    """The participant's full step list (fixed at enrolment by their stimulus order)."""
    out = [Step("instructions")]
    t = 0
    checks = {a.after_trial: a for a in study.attention_checks}
    for b, items in enumerate(participant.stimulus_order):
        for _ in items:
            out.append(Step("trial", t, b))
            if t + 1 in checks:
                out.append(Step("attention", t, b))
            t += 1
        if study.design == "within":
            out += [Step("questionnaire", None, b, q.id) for q in study.questionnaires]
    if study.design != "within":
        out += [Step("questionnaire", None, 0, q.id) for q in study.questionnaires]
    return out + [Step("done")]


def _reading(bind: Engine | Connection):
    return nullcontext(bind) if isinstance(bind, Connection) else bind.connect()


def logged_phases(engine: Engine | Connection, participant_id: str, trial_index: int) -> set[str]:
    """Phases of ``trial_index`` already in the trial log (read in the caller's transaction if given one)."""
    with _reading(engine) as conn:
        return set(conn.scalars(select(TrialLog.phase).where(TrialLog.participant_id == participant_id,
                                                             TrialLog.trial_index == trial_index)))


def current(engine: Engine, study: Study, participant: Participant) -> tuple[int, Step, str | None]:
    """``(step_index, step, phase)`` to show now; ``phase`` is None except for trials.

    A trial whose phases are all logged but whose step was not counted (a server
    stopped between the two writes of an older version) is counted now, so the
    participant is never left on a step with nothing to answer.
    """
    all_steps = steps(study, participant)
    progress = participant.progress
    while True:
        i = min(progress, len(all_steps) - 1)
        step = all_steps[i]
        phase = None
        if step.kind == "trial":
            done = logged_phases(engine, participant.id, step.trial_index)
            phase = next((p for p in step_phases(study, participant, step) if p not in done), None)
            if phase is None:
                progress = store.advance(engine, participant.id, i + 1)
                participant.progress = progress
                continue
        return i, step, phase


@dataclass(frozen=True)
class Submitted:
    """Outcome of :func:`submit`: ``stored`` (new row or rows), ``ignored`` (repeat)."""

    stored: bool
    ignored: bool
    progress: int


class OffStep(ValueError):
    """A submission for a step or phase the participant is not on (a stale page): nothing is stored."""


class NoSuchStep(OffStep):
    """A submission naming a step or phase the participant's flow does not have (not a stale page)."""


@dataclass(frozen=True)
class Located:
    """A submission's step, checked once against the participant (:func:`locate`).

    ``done`` is True for a step the participant completed already (acknowledged, nothing stored).
    """

    steps: tuple[Step, ...]
    index: int
    step: Step
    phase: str | None
    done: bool


def locate(study: Study, participant: Participant, step_index: int, phase: str | None = None) -> Located:
    """The one check of a submission's step and phase against the participant's progress.

    Raises
    ------
    NoSuchStep
        If ``step_index`` is past the step list, or ``phase`` is not one of the trial step's phases
        (for other steps ``phase`` is ignored).
    OffStep
        If ``step_index`` is ahead of the participant.
    """
    all_steps = tuple(steps(study, participant))
    if not 0 <= step_index < len(all_steps):
        raise NoSuchStep(f"step {step_index} is outside the participant's {len(all_steps)} steps")
    step = all_steps[step_index]
    if step.kind == "trial":
        phases = step_phases(study, participant, step)
        if phase not in phases:
            raise NoSuchStep(f"phase must be one of {phases}, got {phase!r}")
    else:
        phase = None
    if step_index > participant.progress:
        raise OffStep(f"step {step_index} is not the participant's current step ({participant.progress})")
    return Located(all_steps, step_index, step, phase, step_index < participant.progress or step.kind == "done")


def submit(engine: Engine, study: Study, participant: Participant, step_index: int, *, phase: str | None = None,
           response=None, context: store.TrialContext | None = None, rt_ms: float | None = None,
           confidence: float | None = None, client_timestamp: datetime | None = None,
           key: str | None = None) -> Submitted:
    """Check the step (:func:`locate`) and record the answer (:func:`record`).

    Parameters
    ----------
    step_index : int
        The step the browser was showing.
    phase : str or None
        For trial steps, the phase answered.
    response, context, rt_ms, confidence, client_timestamp, key
        As :func:`record`.

    Raises
    ------
    OffStep
        If ``step_index`` is ahead of the participant or ``phase`` is not the step's.
    ValueError
        If the answer is invalid (nothing is stored then).
    """
    at = locate(study, participant, step_index, phase)
    return record(engine, study, participant, at, response=response, context=context, rt_ms=rt_ms,
                  confidence=confidence, client_timestamp=client_timestamp, key=key)


def record(engine: Engine, study: Study, participant: Participant, at: Located, *, response=None,
           context: store.TrialContext | None = None, rt_ms: float | None = None, confidence: float | None = None,
           client_timestamp: datetime | None = None, key: str | None = None) -> Submitted:
    """Record the answer to the located step ``at`` and advance when the step is complete.

    Parameters
    ----------
    at : Located
        The step, checked by :func:`locate` (not checked again here).
    response : str, or dict of str to int for questionnaires
        The answer.
    context : TrialContext or None
        What the server showed (trial steps).
    key : str or None
        The submission's idempotency key, made in the browser. It is stored with the
        answer, in the same transaction; a submission whose key is stored already (a
        resend after a lost reply or a database outage) is acknowledged and ignored.

    Raises
    ------
    OffStep
        If another trial phase must be answered first.
    ValueError
        If the answer is invalid (nothing is stored then).

    Notes
    -----
    The answer and the progress update are one database transaction, so a crash
    between them leaves neither. The progress is read again inside it: another tab or a
    resent request may have completed the step meanwhile (acknowledged, nothing stored). A
    repeat of a logged phase is ignored; if it finds every phase of the trial logged but the
    step not counted, it counts it.
    """
    if rt_ms is not None and not (isinstance(rt_ms, (int, float)) and math.isfinite(rt_ms)
                                  and 0 <= rt_ms <= MAX_RT_MS):
        raise ValueError(f"rt_ms must be a finite number of milliseconds in 0..{MAX_RT_MS:g}, got {rt_ms!r}")
    if at.done:
        return Submitted(False, True, participant.progress)
    step_index, step, phase, all_steps = at.index, at.step, at.phase, at.steps
    # The answer and the step counter are written in ONE transaction: a crash between them
    # stores neither, and the participant answers the step again.
    with engine.begin() as conn:
        progress = conn.scalar(select(Participant.progress).where(Participant.id == participant.id))
        if step_index < progress:  # another tab or a resent request completed it meanwhile
            return Submitted(False, True, progress)
        if key is not None and not idempotency.claim_key(conn, key, participant.id, step_index):
            return Submitted(False, True, progress)  # this very submission is stored already
        stored, ignored, complete = False, False, True
        if step.kind == "trial":
            phases = step_phases(study, participant, step)
            done = logged_phases(conn, participant.id, step.trial_index)
            missing = [p for p in phases if p not in done]
            if phase in done:
                ignored = True  # a repeat; if every phase is logged, count the step (an interrupted submit)
                complete = not missing
            elif phase != missing[0]:
                raise OffStep(f"phase {missing[0]!r} comes before {phase!r}")
            else:
                stored = store.record_trial(conn, study, participant, trial_index=step.trial_index, phase=phase,
                                            response=response, context=context or store.TrialContext(),
                                            rt_ms=rt_ms, confidence=confidence, client_timestamp=client_timestamp)
                complete = phase == phases[-1]
        elif step.kind == "attention":
            stored = store.record_trial(conn, study, participant, trial_index=step.trial_index, phase="attention",
                                        response=response, rt_ms=rt_ms, client_timestamp=client_timestamp)
        elif step.kind == "questionnaire":
            stored = store.record_questionnaire(conn, study, participant, step.questionnaire_id,
                                                dict(response or {}), block_index=step.block_index,
                                                client_timestamp=client_timestamp) > 0
        if complete:
            progress = store.advance(conn, participant.id, step_index + 1)
            if progress >= len(all_steps) or all_steps[progress].kind == "done":
                store.complete(conn, participant.id)
    participant.progress = progress
    return Submitted(stored, ignored, progress)
