"""Issue 16: recruitment platforms. Prolific's PROLIFIC_PID/STUDY_ID/SESSION_ID and MTurk's
workerId/assignmentId/hitId in the study link are stored with the participant at consent; one
platform account enrols once per study; the completion page links back with the code."""

from __future__ import annotations

import pytest
from sqlalchemy import create_engine, func, inspect, select

from study import runtime
from study.db import migrate
from study.models import Participant
from study.recruitment import completion_link, parse_params
from study.schema import validate_text
from tests.study.conftest import db_url  # noqa: F401  (fixture)
from tests.study.live_study import STUDY, serve_study

PROLIFIC = {"PROLIFIC_PID": "5f1a2b3c4d5e6f7a8b9c0d1e", "STUDY_ID": "65a0b1c2d3e4f5a6b7c8d9e0",
            "SESSION_ID": "abc123XYZ", "t": "ignored"}


def _consent(recruit):
    from app.services.study_participant import submit_answer
    from tests.study.live_study import timing

    return submit_answer(STUDY, None, timing("consent"), {"consent": ["yes"], "stratum": "low"}, recruitment=recruit)


def _participants():
    with runtime.engine().connect() as conn:
        return conn.execute(select(Participant.recruitment, Participant.recruitment_id)).all()


def test_prolific_ids_are_stored_and_one_account_enrols_once(db_url, tmp_path, monkeypatch):  # noqa: F811
    serve_study(db_url, tmp_path, monkeypatch)
    token, err = _consent(PROLIFIC)
    assert err == "" and token
    want = {k: v for k, v in PROLIFIC.items() if k != "t"}
    assert _participants() == [(want, "prolific:5f1a2b3c4d5e6f7a8b9c0d1e")]
    again, err = _consent(PROLIFIC)
    assert again is None and "already taken part" in err
    assert len(_participants()) == 1
    token2, err = _consent({"workerId": "A1B2C3D4E5", "assignmentId": "3X4Y5Z", "hitId": "H1T"})
    assert err == "" and token2 and len(_participants()) == 2
    assert ({"workerId": "A1B2C3D4E5", "assignmentId": "3X4Y5Z", "hitId": "H1T"}, "mturk:A1B2C3D4E5") in _participants()
    token3, err = _consent(None)  # a link without platform ids still enrols
    assert err == "" and token3 and (None, None) in _participants()


def test_malformed_ids_are_refused_and_nothing_is_stored(db_url, tmp_path, monkeypatch):  # noqa: F811
    serve_study(db_url, tmp_path, monkeypatch)
    _, err = _consent({"PROLIFIC_PID": "x'; DROP TABLE participants;--"})
    assert "PROLIFIC_PID is not valid" in err
    _, err = _consent({"assignmentId": "3X4Y5Z"})
    assert "no workerId" in err
    assert _participants() == []
    assert parse_params({"PROLIFIC_PID": "a" * 64}) == {"PROLIFIC_PID": "a" * 64}
    with pytest.raises(ValueError, match="PROLIFIC_PID"):
        parse_params({"PROLIFIC_PID": "a" * 65})


def test_completion_page_links_back_with_the_code(db_url, tmp_path, monkeypatch):  # noqa: F811
    from app.cli.study_simulate import run_one
    from app.views.study import render
    from study.simulate import RelianceModel
    from tests.study.live_study import DATA

    source = (DATA / "small_study.yaml").read_text() + \
        'recruitment:\n  completion_url: "https://app.prolific.com/submissions/complete?cc={code}"\n'
    study = serve_study(db_url, tmp_path, monkeypatch, text=source)
    assert study.completion_url.endswith("cc={code}")
    token = run_one(study, 0, 5, RelianceModel())  # every step through the participant flow
    page = render(STUDY, token)
    assert not any(getattr(c, "id", None) == "study-debrief" for c in page.children)  # the file has none
    code = next(c for c in page.children if getattr(c, "id", None) == "study-completion-code").children
    link = next(c for c in page.children if getattr(c, "id", None) == "study-completion-link")
    assert len(code) == 10 and link.href == f"https://app.prolific.com/submissions/complete?cc={code}"
    # the automatic return (default 5 s): the timer fires once and the browser goes to the same link
    (url,) = [c for c in page.children if getattr(c, "id", None) == "study-redirect-url"]
    (timer,) = [c for c in page.children if getattr(c, "id", None) == "study-redirect-timer"]
    assert url.data == link.href and timer.interval == 5000 and timer.max_intervals == 1
    from study.schema import parse_study

    assert parse_study(source.replace("cc={code}\"\n", "cc={code}\"\n  redirect_seconds: null\n")).redirect_seconds is None
    (err,) = validate_text((DATA / "small_study.yaml").read_text() + "recruitment:\n  redirect_seconds: 30\n")
    assert err.path == "recruitment.redirect_seconds" and "needs a completion_url" in err.message
    assert completion_link("https://x.org/done?c={code}", "A B/C") == "https://x.org/done?c=A%20B%2FC"


@pytest.mark.parametrize("url", ["javascript:alert(1)", "https://has space.org", "ftp://x.org"])
def test_completion_url_must_be_http(example_text, url):
    (err,) = validate_text(example_text + f'recruitment:\n  completion_url: "{url}"\n')
    assert err.path == "recruitment.completion_url" and "http(s) URL" in err.message
    assert err.line == len(example_text.splitlines()) + 2


def test_debrief_is_shown_with_the_completion_code(db_url, tmp_path, monkeypatch):  # noqa: F811
    from app.cli.study_simulate import run_one
    from app.views.study import render
    from study.simulate import RelianceModel
    from tests.study.live_study import DATA

    source = (DATA / "small_study.yaml").read_text() + "debrief: The model was wrong on one case of three.\n"
    study = serve_study(db_url, tmp_path, monkeypatch, text=source)
    page = render(STUDY, run_one(study, 0, 6, RelianceModel()))
    (note,) = [c for c in page.children if getattr(c, "id", None) == "study-debrief"]
    assert note.children == "The model was wrong on one case of three."
    (err,) = validate_text(source.replace("debrief: The model", "debrief: ''\n# The model"))
    assert err.path == "debrief"


def test_migration_from_the_previous_head_adds_the_columns(tmp_path):
    eng = create_engine(f"sqlite:///{tmp_path / 'old.sqlite3'}")
    migrate(eng, "0002b_study_pins")
    assert "recruitment" not in {c["name"] for c in inspect(eng).get_columns("participants")}
    migrate(eng)
    cols = {c["name"] for c in inspect(eng).get_columns("participants")}
    assert {"recruitment", "recruitment_id"} <= cols
    assert "uq_participant_recruitment" in {i["name"] for i in inspect(eng).get_indexes("participants")}
    with eng.connect() as conn:
        assert conn.scalar(select(func.count()).select_from(Participant)) == 0
    eng.dispose()
