"""Issue 11, kind 8: fake enrolments are limited per client address and per study (counted in the
database, so every gunicorn worker sees the same count), and a study can cap its participants."""

from __future__ import annotations

import threading

import pytest
from sqlalchemy import func, select

from study import runtime, store
from study.db import open_database
from study.models import Participant
from study.schema import parse_study
from tests.study.conftest import db_url, example_text, study  # noqa: F401  (fixtures)
from tests.study.live_study import DATA, serve_study, submit


def _participants(engine) -> int:
    with engine.connect() as conn:
        return conn.scalar(select(func.count()).select_from(Participant))


def test_enrolment_rate_is_limited_on_the_page(db_url, tmp_path, monkeypatch):  # noqa: F811
    """Attack: a script enrolled 47 fake participants per second. With CANDOR_ENROL_PER_MINUTE=3,
    the fourth consent within a minute is refused with a message, and nothing is stored."""
    monkeypatch.setenv("CANDOR_ENROL_PER_MINUTE", "3")
    serve_study(db_url, tmp_path, monkeypatch)
    errors = [submit(None, "consent", None, {"consent": ["yes"], "stratum": "low"})[1] for _ in range(5)]
    assert errors[:3] == ["", "", ""]
    assert "too many enrolments" in errors[3].lower() and "minute" in errors[3]
    assert _participants(runtime.engine()) == 3


def test_rate_limit_is_shared_by_two_workers(db_url, study):  # noqa: F811
    """Two engines (two gunicorn workers) enrolling at once from one address cannot exceed the
    per-client limit between them; another address and the per-study limit are counted apart."""
    from study import limits

    a, b = open_database(db_url), open_database(db_url)
    store.register_study(a, study)
    lim = limits.EnrolLimits(per_client=5, per_study=8)
    ok, refused = [], []

    def one(eng, client):
        try:
            store.enrol(eng, study, stratum="low", client=client, limits=lim)
            ok.append(client)
        except limits.EnrolmentRefused as err:
            refused.append(str(err))

    threads = [threading.Thread(target=one, args=((a, b)[i % 2], "198.51.100.7")) for i in range(12)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(ok) == 5 and len(refused) == 7
    for _ in range(4):  # another address: its own limit, then the study's
        one(b, "203.0.113.9")
    assert ok.count("203.0.113.9") == 3
    assert "joining this study right now" in refused[-1]
    assert _participants(a) == 8
    a.dispose()
    b.dispose()


def test_participant_cap(db_url, tmp_path, monkeypatch):  # noqa: F811
    """A study file's ``max_participants`` is enforced: the third consent to a 2-participant
    study is refused with 'This study is full', on the page."""
    text = (DATA / "small_study.yaml").read_text(encoding="utf-8") + "max_participants: 2\n"
    serve_study(db_url, tmp_path, monkeypatch, text=text)
    errors = [submit(None, "consent", None, {"consent": ["yes"], "stratum": "high"})[1] for _ in range(3)]
    assert errors[:2] == ["", ""] and "This study is full" in errors[2]
    assert _participants(runtime.engine()) == 2


@pytest.mark.parametrize("value", ["0", "-3", "ten", "1e3"])
def test_bad_limit_setting_is_named(value, monkeypatch, example_text):  # noqa: F811
    """A misconfigured limit is refused with a message naming the variable, not silently replaced."""
    from study import limits

    monkeypatch.setenv("CANDOR_ENROL_PER_MINUTE", value)
    with pytest.raises(ValueError, match="CANDOR_ENROL_PER_MINUTE must be a whole number"):
        limits.limits_from_env()
    assert parse_study(example_text).max_participants is None
