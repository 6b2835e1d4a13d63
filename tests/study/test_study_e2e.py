"""The whole participant flow in headless Chromium, with a reload mid-study and a double click;
the researcher callbacks refuse requests without the login cookie."""

from __future__ import annotations

import shutil
import threading
from pathlib import Path

import pytest
from sqlalchemy import func, select

from study import auth, runtime
from study.models import Participant, QuestionnaireResponse, TrialLog

DATA = Path(__file__).parent / "data"
STUDY = "trust-pilot"


@pytest.fixture(scope="module")
def dash_app():
    from app.serve.server import create_app

    return create_app(warm=False)


def _serve(dash_app, db_url, tmp_path, monkeypatch):
    from werkzeug.serving import make_server

    studies = tmp_path / "studies"
    studies.mkdir()
    shutil.copy(DATA / "small_study.yaml", studies / f"{STUDY}.yaml")
    monkeypatch.setenv("CANDOR_STUDY_DIR", str(studies))
    monkeypatch.setenv("DATABASE_URL", db_url)
    monkeypatch.setenv("CANDOR_RESEARCHER_PASSWORD", "correct horse")
    monkeypatch.setenv("CANDOR_SECRET_KEY", "test-secret-" + "0" * 32)  # 32+ characters
    runtime.reset()
    server = make_server("127.0.0.1", 0, dash_app.server, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        runtime.reset()


@pytest.fixture
def live(dash_app, db_url, tmp_path, monkeypatch):
    """The app on loopback over a fresh database (every back end) and a study folder."""
    yield from _serve(dash_app, db_url, tmp_path, monkeypatch)


@pytest.fixture
def live_once(dash_app, one_db_url, tmp_path, monkeypatch):
    """As ``live``, on one back end only (PostgreSQL when available): the browser run is slow."""
    yield from _serve(dash_app, one_db_url, tmp_path, monkeypatch)


def _body(driver) -> str:
    from selenium.webdriver.common.by import By

    els = driver.find_elements(By.ID, "study-body")
    return els[0].text if els else ""


def _wait(cond, timeout=30.0):
    from tests.e2e.browser import wait_until

    return wait_until(cond, "the study page", timeout)


def _answer_and_submit(driver, *, double=False):
    from selenium.webdriver.common.by import By

    before = _body(driver)
    for group in driver.find_elements(By.CSS_SELECTOR, "#study-body .study-radio"):
        driver.execute_script("arguments[0].click();", group.find_elements(By.CSS_SELECTOR, "input")[0])
    button = driver.find_element(By.CSS_SELECTOR, "#study-body button.btn-primary")
    driver.execute_script("arguments[0].click();" * (2 if double else 1), button)
    try:
        _wait(lambda: _body(driver) not in ("", before))
    except AssertionError:
        console = [e["message"][:300] for e in driver.get_log("browser")][-5:]
        raise TimeoutError(f"the page did not move on; it shows: {_body(driver)[:300]!r}; console: {console}") from None


@pytest.mark.e2e
def test_participant_flow_resumes_after_reload(live_once, tmp_path):
    live = live_once
    # the study sends participants back (here: to this server) with their code, 3 s after the debrief
    (tmp_path / "studies" / f"{STUDY}.yaml").write_text(
        (DATA / "small_study.yaml").read_text()
        + f'recruitment:\n  completion_url: "{live}/returned?cc={{code}}"\n  redirect_seconds: 3\n', encoding="utf-8")
    pytest.importorskip("selenium")
    from selenium.webdriver.common.by import By

    from tests.e2e.browser import chromium_driver, find_chromium, severe_console_errors

    try:
        find_chromium()
    except RuntimeError as err:  # CI installs chromium; only a bare dev box lacks it
        pytest.skip(str(err))
    with chromium_driver() as driver:
        driver.get(f"{live}/study/{STUDY}")
        _wait(lambda: "Consent" in _body(driver))
        driver.execute_script("arguments[0].click();", driver.find_element(By.CSS_SELECTOR, "#study-body input[type=checkbox]"))
        _answer_and_submit(driver)  # stratum + Start
        _wait(lambda: "?t=" in driver.current_url)
        assert "Instructions" in _body(driver)
        _answer_and_submit(driver)
        steps = 0
        reloaded = False
        while "completion code" not in _body(driver):
            if steps == 4 and not reloaded:  # mid-trial: case 2, after its forward prediction
                shown = _body(driver)
                driver.refresh()
                _wait(lambda: _body(driver) == shown)
                reloaded = True
            _answer_and_submit(driver, double=(steps == 2))
            steps += 1
            assert steps < 40
        code = driver.find_element(By.ID, "study-completion-code").text
        errors = severe_console_errors(driver)
        assert errors == [], "\n".join(e[:400] for e in errors)
        assert len(code) == 10 and reloaded
        _wait(lambda: driver.current_url == f"{live}/returned?cc={code}", timeout=20)  # the automatic return
    eng = runtime.engine()
    with eng.connect() as conn:
        assert conn.scalar(select(func.count()).select_from(Participant)) == 1
        assert conn.scalar(select(Participant.completion_code)) == code
        assert conn.scalar(select(func.count()).select_from(TrialLog)) == 3 * 3 + 1
        assert conn.scalar(select(func.count()).select_from(QuestionnaireResponse)) == 12 + 2
        rts = conn.scalars(select(TrialLog.rt_ms).where(TrialLog.phase != "attention")).all()
    assert all(rt is not None and rt >= 0 for rt in rts)


def _dash_post(client, output, outputs, inputs, state=(), cookie=None):
    payload = {"output": output, "outputs": outputs, "inputs": list(inputs), "state": list(state),
               "changedPropIds": [f"{inputs[0]['id']}.{inputs[0]['property']}"]}
    if cookie:
        client.set_cookie(auth.COOKIE, cookie)
    else:
        client.delete_cookie(auth.COOKIE)
    return client.post("/_dash-update-component", json=payload)


def test_researcher_pages_refuse_without_login(live, dash_app):
    from study.simulate import run_participant

    study = runtime.get_study(STUDY)
    run_participant(runtime.engine(), study, seed=3, stratum="low")
    client = dash_app.server.test_client()
    dash_inputs = [{"id": "researcher-study", "property": "value", "value": STUDY},
                   {"id": "researcher-auth-state", "property": "data", "value": 0}]
    out = {"id": "researcher-dashboard", "property": "children"}

    refused = _dash_post(client, "researcher-dashboard.children", out, dash_inputs)
    assert refused.status_code == 200
    assert "Login required" in refused.get_data(as_text=True)
    assert "Enrolment" not in refused.get_data(as_text=True)
    forged = _dash_post(client, "researcher-dashboard.children", out, dash_inputs, cookie="researcher.forged.sig")
    assert "Login required" in forged.get_data(as_text=True)

    login_out = "..researcher-auth-state.data...researcher-login-message.children.."
    login_outs = [{"id": "researcher-auth-state", "property": "data"},
                  {"id": "researcher-login-message", "property": "children"}]
    login_in = [{"id": "researcher-login", "property": "n_clicks", "value": 1}]
    state = lambda pw: [{"id": "researcher-password", "property": "value", "value": pw},  # noqa: E731
                        {"id": "researcher-auth-state", "property": "data", "value": 0}]
    wrong = _dash_post(client, login_out, login_outs, login_in, state("guess"))
    assert "Wrong password" in wrong.get_data(as_text=True) and auth.COOKIE not in wrong.headers.get("Set-Cookie", "")
    right = _dash_post(client, login_out, login_outs, login_in, state("correct horse"))
    set_cookie = right.headers.get("Set-Cookie", "")
    assert set_cookie.startswith(f"{auth.COOKIE}=") and "HttpOnly" in set_cookie and "SameSite=Strict" in set_cookie
    cookie = set_cookie.split(";")[0].split("=", 1)[1]
    assert auth.verify(cookie)

    allowed = _dash_post(client, "researcher-dashboard.children", out, dash_inputs, cookie=cookie)
    text = allowed.get_data(as_text=True)
    assert "Enrolment and completion" in text and "Results by condition" in text

    exp_out = {"id": "researcher-download", "property": "data"}
    exp_in = [{"id": "researcher-export-csv", "property": "n_clicks", "value": 1},
              {"id": "researcher-export-parquet", "property": "n_clicks", "value": 0}]
    exp_state = [{"id": "researcher-study", "property": "value", "value": STUDY}]
    assert _dash_post(client, "researcher-download.data", exp_out, exp_in, exp_state).status_code == 204
    got = _dash_post(client, "researcher-download.data", exp_out, exp_in, exp_state, cookie=cookie)
    assert got.status_code == 200 and f"{STUDY}-csv.zip" in got.get_data(as_text=True)
