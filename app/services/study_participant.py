"""The participant page's one service: a submission to the participant's use cases, one sentence back.

The use cases and their rules are :mod:`study.participation`; what a trial shows comes from
:mod:`app.services.study_stimuli` (:data:`~app.services.study_stimuli.STIMULI`). The submit callback
(``app/callbacks/study.py``) and ``python -m app study simulate`` call :func:`submit_answer`.
"""
from __future__ import annotations

import logging

from workspace.errors import CandorError, first_line

UNAVAILABLE = "This study cannot be taken right now. Please contact the researcher who sent you the link."
_log = logging.getLogger(__name__)


def submit_answer(study_id: str, token: str | None, timing: dict, answers: dict,
                  client: str | None = None, recruitment: dict | None = None) -> tuple[str | None, str]:
    """Send one submission to the participant's use case (:func:`study.participation.submit`); one sentence back.

    Parameters
    ----------
    study_id : str
    token : str or None
        The participant's resume token (None before consent).
    timing : dict
        ``step`` (index or ``"consent"``), ``phase``, ``rt_ms`` (``performance.now()``
        from render to click), ``client_ts`` (ms since the epoch), ``nonce``, ``key`` (the
        idempotency key made in the browser).
    answers : dict
        Field name to value, from the ``study-answer`` inputs on screen.
    client : str or None, default=None
        The requester's address, for the enrolment rate limit.
    recruitment : dict or None, default=None
        The study link's query parameters (Prolific/MTurk ids), stored at consent.

    Returns
    -------
    token : str or None
        The (possibly new) resume token.
    error : str
        A message for the participant (what to fix), or "". Never an exception's text:
        :data:`study.answers.SAVING` while the database cannot be reached (the page re-sends
        the same answer, whose idempotency key makes it stored once), :data:`study.answers.STALE`
        for a step or phase the participant is not on, :data:`study.answers.FAILED` otherwise.
    """
    from study import answers as checks
    from study import flow, idempotency, limits, participation, runtime
    from study.schema import StudyError

    try:
        try:
            study = runtime.get_study(study_id)
        except (StudyError, ValueError):  # ValueError: a changed file under a registered id
            return token, UNAVAILABLE
        if study is None:
            return token, "This study does not exist."
        from .study_stimuli import STIMULI

        new_token = participation.submit(runtime.engine(), study, token, timing, answers, stimuli=STIMULI,
                                         client=client, recruitment=recruitment)
        return new_token, ""
    except flow.NoSuchStep:
        return token, checks.RELOAD
    except flow.OffStep as err:  # a step or phase the participant is not on: the page shows the right one
        _log.info("study %s: stale submission refused: %s", study_id, first_line(err))
        return token, checks.STALE
    except (participation.Refused, checks.AnswerError, limits.EnrolmentRefused, CandorError) as err:
        return token, str(err)
    except ValueError as err:  # an answer the store refuses (checked before, so a page out of date)
        _log.info("study %s: stale submission refused: %s", study_id, first_line(err))
        return token, checks.STALE
    except Exception as exc:  # the participant sees one plain sentence, never a server error or its text
        if idempotency.unavailable(exc):  # the page re-sends the same answer (same key) until it is stored
            _log.warning("study %s: database unavailable, the page will resend: %s", study_id, first_line(exc))
            return token, checks.SAVING
        _log.exception("study %s: submission failed", study_id)
        return token, checks.FAILED
