"""Validation of what a participant's browser sends, before anything is stored.

Every submission is checked against the step the server is showing and the
instrument the study declares: a choice must be one of the offered options, a
Likert answer an integer on its scale, the confidence a finite number within
the study's ``confidence_scale``, every text at most :data:`MAX_TEXT`
characters, timings finite and within :data:`MAX_RT_MS` / the
:data:`CLIENT_TS_RANGE`, and no field the step did not ask for. A refused
submission raises :class:`AnswerError`, whose message tells the participant
what to fix; nothing is stored.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from .schema import Study

__all__ = [
    "MAX_TEXT", "MAX_RT_MS", "CLIENT_TS_RANGE", "AnswerError", "Timing", "Answer",
    "check_text", "check_confidence", "check_timing", "check_consent", "check_answers", "check_number",
]

#: Longest text accepted in any field (characters).
MAX_TEXT = 2000
#: Longest response time accepted (ms): one day.
MAX_RT_MS = 24 * 3600 * 1000.0
#: Client timestamps accepted (ms since the epoch): 2000-01-01 to 2100-01-01 UTC.
CLIENT_TS_RANGE = (946_684_800_000.0, 4_102_444_800_000.0)
TIMING_KEYS = frozenset({"step", "phase", "rt_ms", "client_ts", "nonce", "key"})
#: A submission's idempotency key as the page makes it (:mod:`study.idempotency`): 32 hexadecimal digits.
KEY_RE = re.compile(r"^[0-9a-f]{32}$")
#: Shown while the database cannot be reached: the page re-sends the same answer until it is stored.
SAVING = "Saving your answer: the study's server is busy for a moment, and this page keeps trying by itself."
#: Shown when a submission answers a step or phase the participant is not on (a stale page): it is re-rendered.
STALE = "This page was out of date; it now shows the question to answer."
#: Shown for any other failure on the server's side (logged there with its traceback).
FAILED = "Something went wrong on our side; please try again in a moment."
RELOAD = "This page sent something unexpected; please reload the page."


class AnswerError(ValueError):
    """A submission that is refused; the message is shown to the participant."""


@dataclass(frozen=True)
class Timing:
    """A checked timing record: ``step`` (index, or ``"consent"``), ``phase``, ``rt_ms``, client time, and the
    submission's idempotency ``key`` (:mod:`study.idempotency`; None from an older page)."""

    step: int | str
    phase: str | None
    rt_ms: float | None
    client_timestamp: datetime | None
    key: str | None = None


@dataclass(frozen=True)
class Answer:
    """A checked answer: ``response`` (str, or label -> int for questionnaires) and ``confidence``."""

    response: Any = None
    confidence: float | None = None


def _number(x) -> float | None:
    """``x`` as a finite float, or None when it is not a finite real number (bool is not a number)."""
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return None
    try:
        v = float(x)
    except OverflowError:  # an int beyond float range
        return None
    return v if math.isfinite(v) else None


def check_text(value, what: str = "answer") -> str:
    """Return ``value`` if it is a storable text of at most :data:`MAX_TEXT` characters.

    Raises
    ------
    AnswerError
        If it is not a string, is too long, or holds a NUL or an unpaired surrogate
        (neither can be stored in PostgreSQL nor written as UTF-8).
    """
    if not isinstance(value, str):
        raise AnswerError(f"The {what} must be text; please choose again.")
    if len(value) > MAX_TEXT:
        raise AnswerError(f"The {what} is too long ({len(value)} characters; at most {MAX_TEXT}).")
    if "\x00" in value or any("\ud800" <= ch <= "\udfff" for ch in value):
        raise AnswerError(f"The {what} contains characters that cannot be stored.")
    return value


def check_confidence(study: Study, value) -> float:
    """Return ``value`` as a float if it is finite and within the study's ``confidence_scale``.

    Raises
    ------
    AnswerError
        Otherwise (NaN, infinities, strings and booleans included).
    """
    lo, hi = study.confidence_scale
    v = _number(value)
    if v is None or not lo <= v <= hi:
        raise AnswerError(f"Confidence must be a number from {lo:g} to {hi:g}; got {str(value)[:40]!r}.")
    return v


def check_timing(timing) -> Timing:
    """Check the browser's timing record (see :mod:`app.callbacks.study`).

    Raises
    ------
    AnswerError
        On an unknown key, a step that is neither ``"consent"`` nor a non-negative
        integer, a non-finite or out-of-range ``rt_ms`` (0..:data:`MAX_RT_MS`) or
        ``client_ts`` (:data:`CLIENT_TS_RANGE`).
    """
    if not isinstance(timing, dict) or set(timing) - TIMING_KEYS:
        raise AnswerError(RELOAD)
    step = timing.get("step")
    if step != "consent":
        if isinstance(step, str) and step.isdigit() and len(step) < 7:
            step = int(step)
        if isinstance(step, bool) or not isinstance(step, int) or not 0 <= step < 10**6:
            raise AnswerError(RELOAD)
    phase = timing.get("phase")
    if phase is not None and (not isinstance(phase, str) or len(phase) > 32):
        raise AnswerError(RELOAD)
    rt = timing.get("rt_ms")
    if rt is not None:
        rt = _number(rt)
        if rt is None or not 0 <= rt <= MAX_RT_MS:
            raise AnswerError(RELOAD)
    ts = timing.get("client_ts")
    when = None
    if ts is not None:
        ms = _number(ts)
        if ms is None or not CLIENT_TS_RANGE[0] <= ms <= CLIENT_TS_RANGE[1]:
            raise AnswerError(RELOAD)
        when = datetime.fromtimestamp(ms / 1000, tz=timezone.utc).replace(tzinfo=None)
    nonce = timing.get("nonce")
    if nonce is not None and _number(nonce) is None:
        raise AnswerError(RELOAD)
    key = timing.get("key")
    if key is not None and not (isinstance(key, str) and KEY_RE.match(key)):
        raise AnswerError(RELOAD)
    return Timing(step, phase, rt, when, key)


def _only(answers, allowed: set[str]) -> dict:
    if not isinstance(answers, dict) or any(not isinstance(k, str) for k in answers) or set(answers) - allowed:
        raise AnswerError(RELOAD)
    return answers


def check_consent(study: Study, answers) -> tuple[bool, str]:
    """Return ``(consented, stratum)`` from the consent form.

    Raises
    ------
    AnswerError
        On an unknown field, a box value other than ``["yes"]``/``[]``, or a
        stratum not declared by the study (when it is stratified).
    """
    r = study.randomisation
    answers = _only(answers, {"consent", "stratum"} if r.stratify_by else {"consent"})
    box = answers.get("consent") or []
    if not isinstance(box, list) or any(v != "yes" for v in box) or len(box) > 1:
        raise AnswerError(RELOAD)
    stratum = answers.get("stratum")
    if r.stratify_by and box:
        if stratum is None:
            raise AnswerError("Please answer the question above.")
        if not isinstance(stratum, str) or stratum not in r.strata:
            raise AnswerError(f"Please choose one of {', '.join(r.strata)}.")
    return bool(box), stratum or ""


def check_answers(study: Study, step, phase: str | None, answers) -> Answer:
    """Check the answers sent for ``step`` (a :class:`study.flow.Step`) and ``phase``.

    Parameters
    ----------
    study : Study
    step : Step
        The step the server is showing (its kind decides the fields expected).
    phase : str or None
        For a trial, the phase answered; ``final`` also takes ``confidence``.
    answers : dict
        Field name to value, as the browser sent them.

    Returns
    -------
    Answer

    Raises
    ------
    AnswerError
        On a missing answer, an unknown field, a value of the wrong type, an
        option not offered, a Likert answer off its scale, or a confidence
        outside ``study.confidence_scale``.
    """
    if step.kind in ("instructions", "done"):
        _only(answers, set())
        return Answer()
    if step.kind == "questionnaire":
        q = next(x for x in study.questionnaires if x.id == step.questionnaire_id)
        answers = _only(answers, {f"q:{i.label}" for i in q.items})
        out = {}
        for item in q.items:
            x = answers.get(f"q:{item.label}")
            if x is None:
                raise AnswerError("Please answer every statement.")
            if isinstance(x, bool) or not isinstance(x, int) or not 1 <= x <= q.scale_points:
                raise AnswerError(f"Each statement takes a whole number from 1 to {q.scale_points}.")
            out[item.label] = x
        return Answer(out)
    if step.kind == "attention":
        options = next(a for a in study.attention_checks if a.after_trial == step.trial_index + 1).options
        allowed = {"response"}
    else:
        options, allowed = study.model.outputs, {"response"} | ({"confidence"} if phase == "final" else set())
    answers = _only(answers, allowed)
    response = answers.get("response")
    if response is None:
        raise AnswerError("Please choose an answer." if options else "Please give a number.")
    if step.kind == "trial" and study.model.numeric:
        return Answer(check_number(study, response), _confidence_of(study, answers, allowed))
    check_text(response)
    if response not in options:
        raise AnswerError(f"Please choose one of the offered answers: {', '.join(options)}.")
    return Answer(response, _confidence_of(study, answers, allowed))


def _confidence_of(study: Study, answers: dict, allowed: set) -> float | None:
    if "confidence" not in allowed:
        return None
    if answers.get("confidence") is None:
        raise AnswerError("Please say how confident you are.")
    return check_confidence(study, answers["confidence"])


def check_number(study: Study, value) -> str:
    """A numeric study's answer as stored text (``repr`` of the float), if it is a finite number in ``model.range``.

    Raises
    ------
    AnswerError
        On text, booleans, NaN, infinities or a number outside the range.
    """
    lo, hi = study.model.range
    v = _number(value)
    if v is None or not lo <= v <= hi:
        raise AnswerError(f"Please give a number from {lo:g} to {hi:g}; got {str(value)[:40]!r}.")
    return repr(v)
