"""Requests Dash cannot read get one line and a 4xx, never a 500 or a traceback (issue 27, found by an attack).

FAILED before ``callback_inputs.malformed_body`` and the component-suites handler: each body below answered
HTTP 500 with a traceback in the log, most without logging in (Dash's dispatch reads the body before any
callback or input check runs: ``inputs`` a string, ``changedPropIds`` null, a clientside callback's output,
a JSON body nested past the decoder's depth), and an unknown ``/_dash-component-suites/`` path raised
``DependencyException`` (500, 3 KB of log each).
"""
from __future__ import annotations

import json
import logging

import pytest

from tests.security.access_support import ORIGIN, dash_app, isolated, login, users_file  # noqa: F401


def _bodies(dash_app) -> list:
    server_key = next(k for k, v in dash_app.callback_map.items() if v.get("callback") is not None
                      and "study-body.children" in k)
    clientside = next(k for k, v in dash_app.callback_map.items() if v.get("callback") is None)
    ok = {"output": server_key, "outputs": {"id": "study-body", "property": "children"}, "inputs": [], "state": []}
    # a body with one input fewer than the callback declares (the participant's page, which anyone may call; a
    # callback the user may not call is refused for that first, 403): Dash's grouping raised IndexError, HTTP 500
    # (found when the upload's Explain callback gained a state, issue 25)
    declared = dash_app.callback_map[server_key]["inputs"]
    assert len(declared) >= 1
    short = {**ok, "inputs": [{"id": i["id"], "property": i["property"], "value": None} for i in declared[:-1]],
             "state": [{"id": i["id"], "property": i["property"], "value": None}
                       for i in dash_app.callback_map[server_key].get("state", [])],
             "outputs": [{"id": p.rpartition(".")[0], "property": p.rpartition(".")[2]}
                         for p in server_key[2:-2].split("...")] if server_key.startswith("..") else ok["outputs"]}
    return [
        short,
        {"output": clientside},
        {**ok, "inputs": "x"},
        {**ok, "changedPropIds": None},
        {**ok, "changedPropIds": [["x"]]},
        {**ok, "inputs": [1, 2]},
        {**ok, "state": {"a": 1}},
        {**ok, "outputs": "x"},
        {**ok, "inputs": [{"id": ["x"], "property": "value"}]},
        [1, 2, 3],
        "[" * 100_000 + "]" * 100_000,
    ]


@pytest.mark.parametrize("who", ["anonymous", "viewer"])
def test_bodies_dash_cannot_read_are_refused_in_one_line(dash_app, isolated, monkeypatch, caplog, who):
    caplog.set_level(logging.WARNING)
    users_file(isolated, monkeypatch, vera=("viewer", "vera-pass-1"))
    client = dash_app.server.test_client()
    if who == "viewer":
        assert login(client, "vera", "vera-pass-1").status_code == 303
    for body in _bodies(dash_app):
        data = body if isinstance(body, str) else json.dumps(body)
        got = client.post("/_dash-update-component", data=data, content_type="application/json",
                          headers={"Origin": ORIGIN})
        text = got.get_data(as_text=True)
        assert got.status_code == 400, (str(body)[:80], got.status_code, text[:200])
        assert text.startswith("candor: ") and text.count("\n") == 1
    assert not [r for r in caplog.records if r.exc_info or "Traceback" in r.getMessage()]


def test_an_unknown_component_suites_path_is_404(dash_app, caplog):
    caplog.set_level(logging.WARNING)
    client = dash_app.server.test_client()
    for path in ("/_dash-component-suites/x/y.js", "/_dash-component-suites/dash/deps/nothing@1.v2_0_0m1.min.js"):
        got = client.get(path)
        assert got.status_code == 404, (path, got.status_code)
    assert not [r for r in caplog.records if r.exc_info]
