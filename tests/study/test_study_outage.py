"""Issue 26: the participant flow survives its database.

With a real PostgreSQL server stopped and started again mid-study (``scripts/start_postgres.sh
--pause/--resume``), a submission made during the outage is answered with the "being saved"
sentence (never an HTTP 500 or an exception's text), the step screen says the same and retries,
and the same answer re-sent with the same idempotency key after the restart is stored once:
acknowledged answers = stored answers, no duplicate. The server recovers by itself (pool
pre-ping), without a restart. A phase-skipping submission is one plain sentence too.
"""
from __future__ import annotations

import glob
import os
import shutil
import subprocess
import tempfile
import uuid
from pathlib import Path

import pytest
from sqlalchemy import func, select

from study import answers, runtime
from study.models import AnswerKey, QuestionnaireResponse, TrialLog
from tests.study.conftest import db_url  # noqa: F401  (fixture)
from tests.study.live_study import STUDY, enrol_via_page, serve_study, timing

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "start_postgres.sh"
HAS_PG = bool(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl")) and (os.geteuid() != 0 or shutil.which("runuser"))


def _submit(token, step, phase, answers_=None, key=None):
    from app.services.study_participant import submit_answer

    t = timing(step, phase)
    t["key"] = key or uuid.uuid4().hex
    return submit_answer(STUDY, token, t, answers_ or {}), t["key"]


def _text(component) -> str:
    if isinstance(component, str):
        return component
    children = getattr(component, "children", None)
    if children is None:
        return ""
    return " ".join(_text(c) for c in (children if isinstance(children, (list, tuple)) else [children]))


def _counts(token_keys: list[str]) -> tuple[int, int, int]:
    eng = runtime.engine()
    with eng.connect() as conn:
        trials = conn.scalar(select(func.count()).select_from(TrialLog))
        distinct = conn.scalar(select(func.count()).select_from(
            select(TrialLog.participant_id, TrialLog.trial_index, TrialLog.phase).distinct().subquery()))
        keys = conn.scalar(select(func.count()).select_from(AnswerKey).where(AnswerKey.key.in_(token_keys)))
    return trials, distinct, keys


@pytest.fixture(scope="module")
def pg_server():
    """A PostgreSQL server of this test's own (so that it can be stopped): ``(url, folder)``."""
    if not HAS_PG:
        pytest.skip("no PostgreSQL binaries (Debian package postgresql)")
    folder = Path(tempfile.mkdtemp(prefix="candor-pg."))  # not under pytest's 0700 folders: postgres reads it
    out = subprocess.run(["bash", str(SCRIPT)], env=dict(os.environ, CANDOR_PG_DIR=str(folder)),
                         capture_output=True, text=True, timeout=300, check=True)
    try:
        yield out.stdout.strip(), folder
    finally:
        subprocess.run(["bash", str(SCRIPT), "--stop", str(folder)], capture_output=True, timeout=120)


def _pg(action: str, folder: Path) -> None:
    subprocess.run(["bash", str(SCRIPT), action, str(folder)], capture_output=True, text=True, timeout=120,
                   check=True)


def test_postgres_stopped_mid_study_every_acknowledged_answer_stored_once(pg_server, tmp_path, monkeypatch):
    from app.views.study import render

    url, folder = pg_server
    serve_study(url, tmp_path, monkeypatch)
    tokens = [enrol_via_page(s) for s in ("low", "high", "low")]
    acked = []
    for tok in tokens:
        (res, key) = _submit(tok, 0, "instructions")
        assert res == (tok, "")
        (res, key) = _submit(tok, 1, "forward", {"response": "benign"})
        assert res == (tok, "")
        acked.append(key)
    _pg("--pause", folder)
    try:
        pending = {}
        for tok in tokens:  # answers sent while the database is down: "being saved", nothing else
            (res, key) = _submit(tok, 1, "initial", {"response": "malignant"})
            assert res == (tok, answers.SAVING)
            pending[tok] = key
        screen = _text(render(STUDY, tokens[0]))
        assert "tries again by itself" in screen and "Error" not in screen
        # a new participant's consent during the outage: the same sentence, no enrolment text
        from app.services.study_participant import submit_answer
        assert submit_answer(STUDY, None, timing("consent"), {"consent": ["yes"], "stratum": "low"}) == \
            (None, answers.SAVING)
    finally:
        _pg("--resume", folder)
    for tok in tokens:  # the page re-sends the same answer with the same key: stored now
        (res, _) = _submit(tok, 1, "initial", {"response": "malignant"}, key=pending[tok])
        assert res == (tok, "")
        acked.append(pending[tok])
    for tok in tokens:  # a replay of an acknowledged answer (its reply lost) is acknowledged, not stored again
        (res, _) = _submit(tok, 1, "initial", {"response": "benign"}, key=pending[tok])
        assert res == (tok, "")
    assert "Case 1 of" in _text(render(STUDY, tokens[0]))  # the server recovered by itself
    trials, distinct, keys = _counts(acked)
    assert (trials, distinct) == (6, 6)  # 3 forward + 3 initial: acknowledged = stored, none twice
    assert keys == len(acked) == 6
    with runtime.engine().connect() as conn:
        initial = conn.scalars(select(TrialLog.response).where(TrialLog.phase == "initial")).all()
    assert initial == ["malignant"] * 3  # the answer sent during the outage, not the replay's
    assert runtime.engine().connect().scalar(select(func.count()).select_from(QuestionnaireResponse)) == 0


def test_a_replayed_key_is_stored_once_on_every_backend(db_url, tmp_path, monkeypatch):  # noqa: F811
    serve_study(db_url, tmp_path, monkeypatch)
    tok = enrol_via_page("low")
    (res, key) = _submit(tok, 0, "instructions")
    assert res == (tok, "")
    (res, key) = _submit(tok, 1, "forward", {"response": "benign"})
    assert res == (tok, "")
    assert _submit(tok, 1, "forward", {"response": "malignant"}, key=key)[0] == (tok, "")
    assert _counts([key])[:2] == (1, 1) and _counts([key])[2] == 1
    bad = dict(timing(1, "initial"), key="not-a-key")
    from app.services.study_participant import submit_answer
    assert submit_answer(STUDY, tok, bad, {"response": "benign"}) == (tok, answers.RELOAD)


def test_a_phase_skipping_submission_is_one_plain_sentence(db_url, tmp_path, monkeypatch):  # noqa: F811
    serve_study(db_url, tmp_path, monkeypatch)
    tok = enrol_via_page("low")
    assert _submit(tok, 0, "instructions")[0] == (tok, "")
    (token, error), _ = _submit(tok, 1, "final", {"response": "benign", "confidence": 50})
    assert error == answers.STALE
    assert "Error" not in error and "'forward'" not in error
    assert _counts([])[0] == 0


def test_the_page_resends_while_saving_and_stops_once_stored(monkeypatch):
    """The submit callback keeps the re-send timer on while the answer is "being saved" (the same timing, so the
    same key, goes again) and turns it off once stored; a stale page is rendered again, an answer to fix is not."""
    from app.callbacks import study as page
    from app.services import study_participant
    from tests.study.live_study import app_once

    replies = iter([("tok", answers.SAVING), ("tok", answers.SAVING), ("tok", ""), ("tok", answers.STALE),
                    ("tok", "Please choose an answer.")])
    sent = []
    monkeypatch.setattr(study_participant, "submit_answer", lambda sid, tok, t, a, **kw: (sent.append(t), next(replies))[1])
    t = dict(timing(1, "initial"), key=uuid.uuid4().hex)
    with app_once().server.test_request_context("/"):
        outs = [page.submit_step(t, n, ["benign"], [{"field": "response"}], "tok", STUDY, 3, {}) for n in (None, 1, 2)]
        stale = page.submit_step(t, None, ["benign"], [{"field": "response"}], "tok", STUDY, 4, {})
        fix = page.submit_step(t, None, [None], [{"field": "response"}], "tok", STUDY, 5, {})
    assert [o[1:4] for o in outs] == [(3, answers.SAVING, False), (3, answers.SAVING, False), (4, "", True)]
    assert [o[4] for o in outs] == ["study-saving mb-2", "study-saving mb-2", "text-danger mb-2"]  # not red
    assert {s["key"] for s in sent[:3]} == {t["key"]}  # every re-send carries the answer's key
    assert stale[1:4] == (5, answers.STALE, True) and fix[1:4] == (5, "Please choose an answer.", True)
