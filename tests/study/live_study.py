"""Helpers for tests that drive the participant flow through the server's boundary function
(:func:`app.services.study_participant.submit_answer`) over the sample workspace, without a browser."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

from study import runtime, store

DATA = Path(__file__).parent / "data"
STUDY = "trust-pilot"
_APP = []


def app_once():
    """The Dash app over the sample workspace, created once per test session."""
    if not _APP:
        from app.serve.server import create_app

        _APP.append(create_app(warm=False))
    return _APP[0]


def serve_study(db_url: str, tmp_path: Path, monkeypatch, text: str | None = None, name: str = "small_study.yaml"):
    """Point study mode at ``db_url`` and a folder holding the small study (or ``text``); return the study."""
    app_once()
    studies = tmp_path / "studies"
    studies.mkdir(exist_ok=True)
    if text is None:
        shutil.copy(DATA / name, studies / f"{STUDY}.yaml")
    else:
        (studies / f"{STUDY}.yaml").write_text(text, encoding="utf-8")
    monkeypatch.setenv("CANDOR_STUDY_DIR", str(studies))
    monkeypatch.setenv("DATABASE_URL", db_url)
    runtime.reset()
    return runtime.get_study(STUDY)


def timing(step, phase=None, rt_ms=1234.5):
    """A timing record as the browser sends it."""
    return {"step": step, "phase": phase, "rt_ms": rt_ms, "client_ts": time.time() * 1000, "nonce": 0.5}


def submit(token, step, phase=None, answers=None, **kw):
    """Call the boundary function as the submit callback does; return ``(token, error)``."""
    from app.services.study_participant import submit_answer

    return submit_answer(STUDY, token, timing(step, phase, **kw), answers or {})


def enrol_via_page(stratum: str = "low") -> str:
    """Consent on the page; return the resume token."""
    token, err = submit(None, "consent", None, {"consent": ["yes"], "stratum": stratum})
    assert err == "" and token, err
    return token


def participant(token: str):
    return store.participant_by_token(runtime.engine(), STUDY, token)
