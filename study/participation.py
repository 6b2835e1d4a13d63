"""The participant's use cases, one function each: enrol (consent), answer a step, finish.

Each owns its rules, checked once: :func:`submit` checks the browser's timing record and sends
a consent to :func:`enrol`, any other step to :func:`answer`; :func:`answer` locates the step
(:func:`study.flow.locate`: its range, its phase, the participant's progress), checks the answer
against it (:mod:`study.answers`), reads what the trial showed and records it
(:func:`study.flow.record`, one transaction); :func:`finish` gives the completion code and the
link back to the recruitment site. The web side (``app/callbacks/study.py``, ``app/views/study.py``)
turns their outcomes into screens and sentences.

What a trial shows comes from the explanations the analyst pages compute, which live above this
package: the caller passes them in as :class:`Stimuli` (``app/services/study_stimuli.py``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Protocol

from sqlalchemy import Engine

from . import answers as checks
from . import flow, idempotency, limits, store
from .models import Participant
from .recruitment import completion_link
from .recruitment import parse_params as recruitment_params
from .schema import Study
from .store import TrialContext

__all__ = ["Stimuli", "Refused", "submit", "enrol", "answer", "current", "Finished", "finish"]

NOT_CONSENTED = "Please tick the consent box to take part."
INVALID_LINK = "This link is not valid for this study."


class Refused(ValueError):
    """A submission refused with one sentence for the participant (nothing is stored)."""


class Stimuli(Protocol):
    """What the use cases need from the explanations' side (``app/services/study_stimuli.py``)."""

    def prepare(self, study: Study) -> Study:
        """Pin ``study`` if it is not pinned yet; return it with each stimulus's truth from the pin."""

    def context(self, study: Study, item_id: str, condition_id: str) -> TrialContext:
        """What the trial of ``item_id`` under ``condition_id`` showed (logged with its answer)."""


def submit(engine: Engine, study: Study, token: str | None, timing, answers, *, stimuli: Stimuli,
           client: str | None = None, recruitment=None,
           enrol_limits: Callable[[], limits.EnrolLimits] = limits.limits_from_env) -> str | None:
    """Check and record one submission from the browser; return the participant's (possibly new) token.

    Raises
    ------
    Refused, study.answers.AnswerError, study.limits.EnrolmentRefused
        With the sentence the participant reads (nothing is stored).
    study.flow.OffStep
        For a step or phase the participant is not on (a stale page); :class:`study.flow.NoSuchStep`
        for one their flow does not have.
    """
    t = checks.check_timing(timing)
    if t.step == "consent":
        return enrol(engine, study, token, answers, key=t.key, stimuli=stimuli, client=client,
                     recruitment=recruitment, enrol_limits=enrol_limits())
    answer(engine, study, token, t, answers, stimuli=stimuli)
    return token


def enrol(engine: Engine, study: Study, token: str | None, answers, *, key: str | None, stimuli: Stimuli,
          client: str | None = None, recruitment=None, enrol_limits: limits.EnrolLimits | None = None) -> str:
    """The consent: enrol a participant once, and give the browser its resume token.

    A consent carries an idempotency key made in the browser, like every answer: the resume token is
    derived from it (:func:`study.idempotency.consent_token`), so a consent re-sent after its reply
    was lost finds the participant it enrolled and returns the same token; nothing is stored twice.

    Parameters
    ----------
    token : str or None
        The browser's current token: a participant already enrolled with it is not enrolled again.
    answers : dict
        ``consent`` (ticked) and, in a stratified study, ``stratum`` (:func:`study.answers.check_consent`).
    key : str or None
        The consent's idempotency key (32 hexadecimal digits); None enrols with a random token.
    recruitment : dict or None
        The study link's query parameters (Prolific/MTurk ids), :func:`study.recruitment.parse_params`.

    Returns
    -------
    str
        The resume token.

    Raises
    ------
    Refused
        If the consent box is not ticked or an id of the link is malformed.
    study.limits.EnrolmentRefused
        When the study is full, an enrolment rate is exceeded or the platform id took part already.
    """
    if token and store.participant_by_token(engine, study.id, token) is not None:
        return token
    replay = idempotency.consent_token(study.id, key) if key else None
    if replay and store.participant_by_token(engine, study.id, replay) is not None:
        return replay  # this very consent enrolled already; its reply was lost
    consented, stratum = checks.check_consent(study, answers)
    if not consented:
        raise Refused(NOT_CONSENTED)
    try:
        ids_from_link = recruitment_params(recruitment if isinstance(recruitment, dict) else None)
    except ValueError as err:  # written for the participant: which id of the link is wrong
        raise Refused(str(err)) from err
    _participant, new_token = store.enrol(engine, stimuli.prepare(study), stratum=stratum, client=client,
                                          limits=enrol_limits, recruitment=ids_from_link, token=replay)
    return new_token


def answer(engine: Engine, study: Study, token: str | None, t: checks.Timing, answers, *,
           stimuli: Stimuli) -> flow.Submitted:
    """Answer one step: locate it once, check the answer against it, record it with what was shown.

    Raises
    ------
    Refused
        If ``token`` is no participant of ``study``.
    study.answers.AnswerError
        If the answer does not fit the step (what to fix).
    study.flow.OffStep
        For a step or phase the participant is not on.
    """
    p = store.participant_by_token(engine, study.id, token) if token else None
    if p is None:
        raise Refused(INVALID_LINK)
    at = flow.locate(study, p, t.step, t.phase)
    a = checks.check_answers(study, at.step, at.phase, answers)
    context = None
    if at.step.kind == "trial" and not at.done:
        item = store.trial_plan(p)[at.step.trial_index][2]
        context = stimuli.context(study, item, p.condition_order[at.step.block_index])
    return flow.record(engine, study, p, at, response=a.response, context=context, rt_ms=t.rt_ms,
                       confidence=a.confidence, client_timestamp=t.client_timestamp, key=t.key)


def current(engine: Engine, study: Study, token: str | None) -> tuple[Participant, int, flow.Step, str | None] | None:
    """The participant of ``token`` and the step (index, step, phase) to show them; None before consent."""
    p = store.participant_by_token(engine, study.id, token) if token else None
    if p is None:
        return None
    return (p, *flow.current(engine, study, p))


@dataclass(frozen=True)
class Finished:
    """The end of the flow: the completion code and, when the study names one, the link back."""

    code: str
    link: str | None
    redirect_seconds: float | None


def finish(engine: Engine, study: Study, participant: Participant) -> Finished:
    """Mark ``participant`` complete (once) and return their completion code and return link."""
    code = store.complete(engine, participant.id)
    link = completion_link(study.completion_url, code)
    return Finished(code, link, study.redirect_seconds if link else None)
