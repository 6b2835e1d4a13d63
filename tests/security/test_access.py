"""Roles are enforced on the server: what every user sees changes only for an analyst (issue 11, kinds 3 and 7).

Each test names the attack it proves fails. They FAIL on main (53d365e), where any request could
upload, install a model, switch the class, go back to the sample or start a background job, and a
server bound to every address served without any login.
"""
from __future__ import annotations

import os
import socket
import subprocess
import sys
import time

import flask
import pytest

from accounts.users import User
from workspace.errors import CandorError
from tests.e2e.serving import ROOT, free_port
from tests.security.access_support import dash_app, dash_post, isolated, key_of, login, users_file  # noqa: F401

SAMPLE_BUTTON = [{"id": "upload-sample", "property": "n_clicks", "value": 1}]


def _state_changing_calls(dash_app):
    """(name, key, inputs, state) of every callback that changes what every user sees, or starts a job."""
    return [
        ("back to the sample", key_of(dash_app, "upload-sample-result"), SAMPLE_BUTTON, []),
        ("install an uploaded pair", key_of(dash_app, "upload-result.children"),
         [{"id": "upload-load", "property": "n_clicks", "value": 1}],
         [{"id": "upload-model-token", "property": "data", "value": "x.skops"},
          {"id": "upload-data-token", "property": "data", "value": "x.csv"},
          {"id": "upload-target", "property": "value", "value": "target"},
          {"id": "upload-features-token", "property": "data", "value": None}]),
        ("upload a model", key_of(dash_app, "upload-model-token"),
         [{"id": "upload-model", "property": "contents", "value": "data:application/octet-stream;base64,AAAA"}],
         [{"id": "upload-model", "property": "filename", "value": "m.skops"}]),
        ("switch the class", key_of(dash_app, "class-switched.data", "class-status"),
         [{"id": "class-select", "property": "value", "value": "benign"}], []),
        ("refit the surrogate (background job)", key_of(dash_app, "surrogate-error"),
         [{"id": "surrogate-fit", "property": "n_clicks", "value": 1},
          {"id": "surrogate-link-fit", "property": "data", "value": "muse:0"}],
         [{"id": i, "property": "value", "value": v} for i, v in (
             ("surrogate-features-of-interest", None), ("surrogate-max-rules", 5), ("surrogate-max-width", 3),
             ("surrogate-max-neighborhoods", 4), ("surrogate-lambdas", None))]),
    ]


def _generation(tmp_path):
    from app.services import selection

    path = selection.state_file()
    return selection.current().generation, path.read_text() if path.exists() else None


def test_viewer_and_anonymous_cannot_change_what_everyone_sees(dash_app, isolated, monkeypatch):
    """Attack: a viewer, or anyone without a login, posts the upload/install/class/sample/job callbacks
    directly (no button needed). Each is refused with 403 and the workspace of every worker stays as it was;
    an analyst's same request goes through."""
    users_file(isolated, monkeypatch, vera=("viewer", "vera-pass-1"), ann=("analyst", "ann-pass-1"))
    before = _generation(isolated)
    viewer = dash_app.server.test_client()
    assert login(viewer, "vera", "vera-pass-1").status_code == 303
    anonymous = dash_app.server.test_client()
    for name, key, inputs, state in _state_changing_calls(dash_app):
        for who, client in (("viewer", viewer), ("anonymous", anonymous)):
            got = dash_post(client, key, inputs, state)
            assert got.status_code == 403, (name, who, got.status_code, got.get_data(as_text=True)[:200])
    assert _generation(isolated) == before
    # the viewer reads pages; the anonymous user is sent to the login form
    assert viewer.get("/descriptive").status_code == 200
    assert anonymous.get("/descriptive").status_code == 302
    assert anonymous.get("/descriptive").headers["Location"].startswith("/login?next=/descriptive")

    analyst = dash_app.server.test_client()
    assert login(analyst, "ann", "ann-pass-1").status_code == 303
    done = dash_post(analyst, key_of(dash_app, "upload-sample-result"), SAMPLE_BUTTON)
    assert done.status_code == 200 and "Now explaining" in done.get_data(as_text=True)
    assert _generation(isolated) != before


def test_participants_reach_only_the_participant_callbacks(dash_app, isolated, monkeypatch):
    """Attack: an anonymous study participant calls the analyst's callbacks. Only the study flow's are reachable."""
    users_file(isolated, monkeypatch, vera=("viewer", "vera-pass-1"))
    anonymous = dash_app.server.test_client()
    study = dash_post(anonymous, key_of(dash_app, "study-body.children"),
                      [{"id": "study-token", "property": "data", "value": None},
                       {"id": "study-refresh", "property": "data", "value": 0}, []],
                      [{"id": "study-id", "property": "data", "value": "no-such-study"}])
    assert study.status_code != 403
    table = dash_post(anonymous, key_of(dash_app, "overview-table.data"),  # a viewer's server callback
                      [{"id": "overview-table", "property": "page_current", "value": 0}])
    assert table.status_code == 403
    row = dash_post(anonymous, "row-status.children", [{"id": "row-input", "property": "value", "value": 3}])
    assert row.status_code == 400  # clientside now: no server callback to call
    page = key_of(dash_app, "_pages_content")
    for path, status in (("/study/trust-pilot", 200), ("/", 403), ("/study-admin", 403), ("/upload", 403)):
        got = dash_post(anonymous, page, [{"id": "_pages_location", "property": "pathname", "value": path},
                                          {"id": "_pages_location", "property": "search", "value": ""}])
        assert got.status_code == status, path
    assert anonymous.get("/study/trust-pilot").status_code == 200
    assert "navbar" not in anonymous.get("/_dash-layout").get_data(as_text=True)  # no analyst navbar for them


def test_services_refuse_without_the_analyst_role(dash_app, isolated):
    """Attack: a future callback that forgets its table entry calls the services directly. The services that
    change what every worker explains check the role themselves (defence in depth)."""
    from app.services import selection, upload

    with dash_app.server.test_request_context("/"):
        flask.g.candor_user = User("vera", "viewer")
        with pytest.raises(CandorError, match="needs the analyst role; you are logged in as vera"):
            upload.use_sample()
        with pytest.raises(CandorError, match="analyst role"):
            selection.install(selection.Selection())  # what the class switch and an install both go through
        with pytest.raises(CandorError, match="analyst role"):
            upload.receive("m.skops", "data:application/octet-stream;base64,AAAA", "model")


def test_cross_site_post_is_refused(dash_app, isolated):
    """Attack (CSRF): a page on another site makes the user's browser POST "back to the sample" or a login to
    their local Candor. Refused with 403 unless the Origin (or Referer) is this server; nothing changes."""
    before = _generation(isolated)
    client = dash_app.server.test_client()
    key = key_of(dash_app, "upload-sample-result")
    for headers in ({"Origin": "http://evil.example"}, {"Origin": "null"},
                    {"Origin": "http://localhost.evil.example"}):
        got = dash_post(client, key, SAMPLE_BUTTON, headers=headers)
        assert got.status_code == 403, headers
    refused_form = client.post("/_dash-update-component", data="{}", content_type="text/plain",
                               headers={"Referer": "http://evil.example/page"})
    assert refused_form.status_code == 403
    no_origin_form = client.post("/login", data={"username": "a", "password": "b"})
    assert no_origin_form.status_code == 403
    assert _generation(isolated) == before
    same_site = dash_post(client, key, SAMPLE_BUTTON)  # the local user, same origin: allowed
    assert same_site.status_code == 200 and "Now explaining" in same_site.get_data(as_text=True)


def _start_refused(cmd: list[str], env: dict, port: int) -> tuple[int | None, str, bool]:
    """Run ``cmd``; return (exit status or None, its output, whether the port ever answered)."""
    proc = subprocess.Popen(cmd, cwd=ROOT, env={**os.environ, "CANDOR_WARM": "0", **env}, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    answered = False
    deadline = time.time() + 240
    try:
        while proc.poll() is None and time.time() < deadline:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    answered = True
                    break
            time.sleep(0.3)
    finally:
        if proc.poll() is None:
            proc.terminate()
        out = proc.communicate(timeout=60)[0]
    return proc.returncode, out, answered


@pytest.mark.parametrize("server", ["python -m app", "gunicorn -c gunicorn.conf.py"])
def test_non_loopback_bind_without_login_is_refused(server, monkeypatch):
    """Attack: the operator starts Candor on every address (``--host 0.0.0.0``, the Procfile's gunicorn bind)
    without configuring a login; anyone on the network could switch the model. Refused at start, exit 2."""
    for name in ("CANDOR_USERS_FILE", "CANDOR_AUTH_HEADER", "CANDOR_RESEARCHER_PASSWORD"):
        monkeypatch.delenv(name, raising=False)
    port = free_port()
    cmd = ([sys.executable, "-m", "app", "--host", "0.0.0.0", "--port", str(port)] if server.startswith("python")
           else [sys.executable, "-m", "gunicorn", "-c", "gunicorn.conf.py", "--bind", f"0.0.0.0:{port}"])
    status, out, answered = _start_refused(cmd, {}, port)
    assert not answered
    assert status == 2, out[-2000:]
    assert "candor: error: refusing to serve on 0.0.0.0 without a login" in out
    assert "Traceback" not in out


def test_the_page_router_is_judged_by_the_address_it_renders(dash_app, isolated, monkeypatch):
    """Attack (found by a tester): Dash passes inputs by position and ignores their ids, so a study address
    second and ``/persuasive`` first rendered the Persuasive page, with the model's feature names, to an
    anonymous client that the check took for a participant."""
    users_file(isolated, monkeypatch, vera=("viewer", "vera-pass-1"))
    anonymous = dash_app.server.test_client()
    page = key_of(dash_app, "_pages_content")
    spoofs = (
        [{"id": "x", "property": "pathname", "value": "/persuasive"},
         {"id": "_pages_location", "property": "pathname", "value": "/study/trust-pilot"}],
        [{"id": "_pages_location", "property": "pathname", "value": "/persuasive"},
         {"id": "_pages_location", "property": "pathname", "value": "/study/trust-pilot"}],
        [{"id": "_pages_location", "property": "search", "value": "/study/trust-pilot"},
         {"id": "_pages_location", "property": "pathname", "value": "/study/trust-pilot"}],
    )
    for inputs in spoofs:
        got = dash_post(anonymous, page, inputs)
        assert got.status_code == 403, inputs
        assert "Persuasive" not in got.get_data(as_text=True)
    honest = dash_post(anonymous, page, [{"id": "_pages_location", "property": "pathname", "value": "/study/trust-pilot"},
                                         {"id": "_pages_location", "property": "search", "value": ""}])
    assert honest.status_code == 200


def test_a_big_callback_body_is_refused_unread_unless_the_user_is_an_analyst(dash_app, isolated, monkeypatch):
    """Attack (found by a tester): a 60 MB JSON body to ``_dash-update-component`` cost 18 s of CPU and 1.5 GB
    before the login check looked at it. Anyone but an analyst may now send ``CANDOR_MAX_CALLBACK_KB``."""
    users_file(isolated, monkeypatch, vera=("viewer", "vera-pass-1"), ann=("analyst", "ann-pass-1"))
    monkeypatch.setenv("CANDOR_MAX_CALLBACK_KB", "64")
    body = b'{"output":"x","inputs":[' + b",".join([b"[]"] * 40_000) + b"]}"  # ~120 KiB
    anonymous = dash_app.server.test_client()
    got = anonymous.post("/_dash-update-component", data=body, content_type="application/json",
                         headers={"Origin": "http://localhost"})
    assert got.status_code == 413 and "CANDOR_MAX_CALLBACK_KB" in got.get_data(as_text=True)
    viewer = dash_app.server.test_client()
    assert login(viewer, "vera", "vera-pass-1").status_code == 303
    assert viewer.post("/_dash-update-component", data=body, content_type="application/json",
                       headers={"Origin": "http://localhost"}).status_code == 413
    analyst = dash_app.server.test_client()
    assert login(analyst, "ann", "ann-pass-1").status_code == 303
    # an analyst's big body is read (and refused as an unknown callback, not for its size)
    assert analyst.post("/_dash-update-component", data=body, content_type="application/json",
                        headers={"Origin": "http://localhost"}).status_code == 400


def test_a_viewer_sees_the_default_frontier_but_cannot_fit_other_settings(dash_app, isolated, monkeypatch):
    """A new user found a viewer's Surrogate page stuck on "computing the frontier" (every background job
    needed an analyst). Opening the page may start the default frontier; "Fit MUSE" still needs an analyst."""
    from app.serve.callback_roles import required_role

    users_file(isolated, monkeypatch, vera=("viewer", "vera-pass-1"))
    key = "surrogate-frontier-key.data"
    opened = {"changedPropIds": ["url.pathname"]}
    assert required_role(key, opened, background=True) == "viewer"
    # Chromium opens the page with changedPropIds [] (the page's first call): a viewer was refused with 403 there
    # (issue 27); this callback computes the default frontier whatever its inputs say
    assert required_role(key, {"changedPropIds": []}, background=True) == "viewer"
    for changed in (["surrogate-fit.n_clicks"], ["url.pathname", "surrogate-fit.n_clicks"], None, "url.pathname"):
        assert required_role(key, {"changedPropIds": changed}, background=True) == "analyst", changed
    viewer = dash_app.server.test_client()
    assert login(viewer, "vera", "vera-pass-1").status_code == 303
    inputs = [{"id": "surrogate-frontier-go", "property": "data", "value": 1}]  # the job's one input
    body = {"output": key, "outputs": {"id": "surrogate-frontier-key", "property": "data"}, "inputs": inputs,
            "state": [], "changedPropIds": ["surrogate-fit.n_clicks"]}
    assert viewer.post("/_dash-update-component", json=body, headers={"Origin": "http://localhost"}).status_code == 403


def test_a_viewer_sees_job_buttons_disabled_with_the_reason(dash_app, isolated, monkeypatch):
    """A first-time user clicked "Fit MUSE" as a viewer and nothing happened (the server refused with 403).
    The job buttons are disabled for viewers and say which role they need; an analyst's are enabled."""
    import json

    users_file(isolated, monkeypatch, vera=("viewer", "vera-pass-1"), ann=("analyst", "ann-pass-1"))
    page = key_of(dash_app, "_pages_content")
    for name, password, disabled in (("vera", "vera-pass-1", True), ("ann", "ann-pass-1", False)):
        client = dash_app.server.test_client()
        assert login(client, name, password).status_code == 303
        for path, button in (("/surrogate", "surrogate-fit"), ("/text", "text-heads-run")):
            got = dash_post(client, page, [{"id": "_pages_location", "property": "pathname", "value": path},
                                           {"id": "_pages_location", "property": "search", "value": ""}])
            assert got.status_code == 200
            text = got.get_data(as_text=True)

            def find(node):
                if isinstance(node, dict):
                    if node.get("props", {}).get("id") == button:
                        return node["props"]
                    for v in node.values():
                        hit = find(v)
                        if hit is not None:
                            return hit
                elif isinstance(node, list):
                    for v in node:
                        hit = find(v)
                        if hit is not None:
                            return hit
                return None

            props = find(json.loads(text))
            assert props is not None, (path, button)
            assert bool(props.get("disabled")) is disabled, (name, path)
            assert ("needs the analyst role" in text) is disabled, (name, path)
