"""Issue 26: a consent carries an idempotency key made in the browser, as every answer does.

A participant whose consent reply was lost re-sends the same consent (same key): it is answered
with the same resume token and enrols one participant, on SQLite and on PostgreSQL (when
``CANDOR_TEST_POSTGRES_URL`` is set); with platform ids too (before, the replay was refused as
"already taken part" and the participant was locked out). Two consents with different keys are
two enrolments (a second browser), as before.
"""
from __future__ import annotations

import uuid

from sqlalchemy import func, select

from study import runtime
from study.models import Participant
from tests.study.conftest import db_url  # noqa: F401  (fixture)
from tests.study.live_study import STUDY, participant, serve_study, timing

CONSENT = {"consent": ["yes"], "stratum": "low"}
PROLIFIC = {"PROLIFIC_PID": "abc123", "STUDY_ID": "s1", "SESSION_ID": "x9"}


def _consent(key, token=None, recruitment=None):
    from app.services.study_participant import submit_answer

    t = dict(timing("consent"), key=key)
    return submit_answer(STUDY, token, t, dict(CONSENT), client="127.0.0.1", recruitment=recruitment)


def _participants() -> int:
    with runtime.engine().connect() as conn:
        return conn.scalar(select(func.count()).select_from(Participant))


def test_a_replayed_consent_enrols_once(db_url, tmp_path, monkeypatch):  # noqa: F811
    serve_study(db_url, tmp_path, monkeypatch)
    key = uuid.uuid4().hex
    first_token, err = _consent(key)
    assert err == "" and first_token
    replay_token, err = _consent(key)  # the reply to the first was lost: the browser still has no token
    assert err == "" and replay_token == first_token
    assert _participants() == 1
    assert participant(first_token) is not None
    other, err = _consent(uuid.uuid4().hex)  # another browser: another participant
    assert err == "" and other != first_token and _participants() == 2


def test_a_replayed_consent_with_platform_ids_gets_its_token_back(db_url, tmp_path, monkeypatch):  # noqa: F811
    serve_study(db_url, tmp_path, monkeypatch)
    key = uuid.uuid4().hex
    token, err = _consent(key, recruitment=PROLIFIC)
    assert err == "" and token
    again, err = _consent(key, recruitment=PROLIFIC)
    assert (again, err) == (token, "") and _participants() == 1
    refused, err = _consent(uuid.uuid4().hex, recruitment=PROLIFIC)  # the same platform id from elsewhere
    assert refused is None and "already taken part" in err and _participants() == 1


def test_a_replay_racing_the_first_consent_is_the_same_participant(db_url, tmp_path, monkeypatch):  # noqa: F811
    """The store's own check: an enrolment with a token already enrolled returns that participant."""
    from study import idempotency, store

    study = serve_study(db_url, tmp_path, monkeypatch)
    key = uuid.uuid4().hex
    token, err = _consent(key)
    assert err == ""
    p, again = store.enrol(runtime.engine(), study, stratum="low", token=idempotency.consent_token(STUDY, key))
    assert again == token and p.id == participant(token).id and _participants() == 1
