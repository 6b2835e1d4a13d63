"""The study database is opened on first use (issue 12): a launch that never runs a study creates no
database file, and the first study or researcher request opens and migrates it, once, even when several
requests arrive together.

On main (53d365e) ``create_app`` migrated the study database at every start, so the file existed
before any request; these tests fail there.
"""
from __future__ import annotations

import shutil
import threading
from pathlib import Path

import pytest
from sqlalchemy import create_engine, inspect, text

from study import runtime
from tests.security.access_support import dash_post, isolated, key_of  # noqa: F401

DATA = Path(__file__).parent / "data"
STUDY = "trust-pilot"
BODY_KEY = "study-body.children"


@pytest.fixture
def fresh(isolated, tmp_path, monkeypatch):  # noqa: F811
    """A database path that does not exist yet, a study folder, and no engine in this process."""
    db = tmp_path / "db" / "candor-study.sqlite3"
    studies = tmp_path / "studies"
    studies.mkdir()
    shutil.copy(DATA / "small_study.yaml", studies / f"{STUDY}.yaml")
    monkeypatch.setenv("DATABASE_URL", f"sqlite:///{db}")
    monkeypatch.setenv("CANDOR_STUDY_DIR", str(studies))
    runtime.reset()
    yield db
    runtime.reset()


def _render_step(client, study_id=STUDY, token=None):
    """POST the participant page's render callback as the browser does on load."""
    return dash_post(client, BODY_KEY,
                     [{"id": "study-token", "property": "data", "value": token},
                      {"id": "study-refresh", "property": "data", "value": 0}, []],
                     [{"id": "study-id", "property": "data", "value": study_id}])


def _migrated_once(db: Path) -> list:
    eng = create_engine(f"sqlite:///{db}")
    try:
        assert {"studies", "participants", "trial_log", "study_pins"} <= set(inspect(eng).get_table_names())
        with eng.connect() as conn:
            return conn.execute(text("SELECT version_num FROM alembic_version_study")).fetchall()
    finally:
        eng.dispose()


def test_no_study_no_database_file_first_study_request_creates_it(fresh):
    """Starting the app and using it without a study leaves no study database behind; the first request
    of the participant page opens it, migrates it and serves the consent step."""
    from app.serve.server import create_app

    dash_app = create_app(warm=False)
    client = dash_app.server.test_client()
    assert client.get("/").status_code == 200
    assert not fresh.exists() and not fresh.parent.exists()
    assert client.get(f"/study/{STUDY}").status_code == 200  # the page shell alone reads no study data
    assert not fresh.exists()

    got = _render_step(client)
    assert got.status_code == 200, got.get_data(as_text=True)[:300]
    assert "consent" in got.get_data(as_text=True).lower()
    assert fresh.is_file()
    assert _migrated_once(fresh) == [("0005_answer_keys",)]


def test_concurrent_first_requests_migrate_once(fresh):
    """Eight participants opening the study page at the same moment on a database nobody opened:
    every request is answered with the consent step, and the migrations ran once."""
    from app.serve.server import create_app

    dash_app = create_app(warm=False)
    assert not fresh.exists()
    start, results = threading.Barrier(8), []

    def one():
        client = dash_app.server.test_client()
        start.wait()
        got = _render_step(client)
        results.append((got.status_code, "consent" in got.get_data(as_text=True).lower()))

    threads = [threading.Thread(target=one) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert results == [(200, True)] * 8
    assert _migrated_once(fresh) == [("0005_answer_keys",)]


def test_researcher_page_opens_the_database_on_first_use(fresh, monkeypatch):
    """A researcher who logs in before any participant came sees the study's (empty) dashboard; the
    dashboard's first request opens and migrates the database."""
    from app.serve.server import create_app

    monkeypatch.setenv("CANDOR_RESEARCHER_PASSWORD", "correct horse")
    dash_app = create_app(warm=False)
    client = dash_app.server.test_client()
    login = dash_post(client, key_of(dash_app, "researcher-login-message"),
                      [{"id": "researcher-login", "property": "n_clicks", "value": 1}],
                      [{"id": "researcher-password", "property": "value", "value": "correct horse"},
                       {"id": "researcher-auth-state", "property": "data", "value": 0}])
    assert login.status_code == 200
    assert not fresh.exists()
    got = dash_post(client, "researcher-dashboard.children",
                    [{"id": "researcher-study", "property": "value", "value": STUDY},
                     {"id": "researcher-auth-state", "property": "data", "value": 1}])
    assert got.status_code == 200, got.get_data(as_text=True)[:300]
    assert "No participants yet." in got.get_data(as_text=True)
    assert fresh.is_file()
    assert _migrated_once(fresh) == [("0005_answer_keys",)]
