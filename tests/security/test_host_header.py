"""The server answers only for its own host names (issue 11, kind 7: DNS rebinding).

A web page at ``rebind.attacker.example`` can make its name resolve to 127.0.0.1 and then read a
local Candor "same-origin"; the request still names the attacker's host in ``Host``. Such requests
are refused with 400. They FAIL on main (53d365e), which answered any Host.
"""
from __future__ import annotations

import requests

from tests.e2e.serving import running_app
from tests.security.access_support import dash_app, dash_post, isolated, key_of  # noqa: F401

FOREIGN = ("rebind.attacker.example", "rebind.attacker.example:8050", "127.0.0.1.nip.io", "localhost.attacker.example")


def test_foreign_host_is_refused_and_loopback_names_are_served(dash_app, isolated):
    """Attack: DNS rebinding through the Flask app; every route, GET or POST, answers 400 for a foreign Host."""
    client = dash_app.server.test_client()
    key = key_of(dash_app, "upload-sample-result")
    sample = [{"id": "upload-sample", "property": "n_clicks", "value": 1}]
    for host in FOREIGN:
        for path in ("/", "/_dash-layout", "/_candor/workspace", "/login", "/assets/style.css"):
            assert client.get(path, headers={"Host": host}).status_code == 400, (host, path)
        got = dash_post(client, key, sample, headers={"Host": host, "Origin": f"http://{host}"})
        assert got.status_code == 400, host
    for host in ("localhost", "localhost:8050", "127.0.0.1:8050", "[::1]:8050"):
        assert client.get("/_dash-layout", headers={"Host": host}).status_code == 200, host


def test_allowed_hosts_setting_names_the_deployment_beside_loopback(dash_app, isolated, monkeypatch):
    """``CANDOR_ALLOWED_HOSTS`` names the hosts of a deployment, beside the loopback names; others get 400."""
    monkeypatch.setenv("CANDOR_ALLOWED_HOSTS", "candor.example.org, 10.1.2.3")
    client = dash_app.server.test_client()
    assert client.get("/_dash-layout", headers={"Host": "candor.example.org"}).status_code == 200
    assert client.get("/_dash-layout", headers={"Host": "10.1.2.3:8050"}).status_code == 200
    assert client.get("/_dash-layout", headers={"Host": "localhost"}).status_code == 200
    assert client.get("/_dash-layout", headers={"Host": "example.org"}).status_code == 400


def test_running_server_refuses_a_rebound_host(tmp_path):
    """Attack: DNS rebinding against ``python -m app`` itself: the real server answers 400, its own name 200."""
    env = {"CANDOR_WARM": "0", "CANDOR_SESSION_DB": str(tmp_path / "sessions.sqlite3")}
    with running_app([], env, tmp_path / "server.log") as base:
        port = base.rsplit(":", 1)[1]
        for host in FOREIGN:
            assert requests.get(base + "/", headers={"Host": host}, timeout=30).status_code == 400
            assert requests.get(base + "/_dash-layout", headers={"Host": host}, timeout=30).status_code == 400
        assert requests.get(base + "/_dash-layout", headers={"Host": f"127.0.0.1:{port}"}, timeout=30).status_code == 200
        assert requests.get(base + "/", headers={"Host": f"localhost:{port}"}, timeout=30).status_code == 200


def test_loopback_names_stay_allowed_beside_the_configured_hosts(monkeypatch):
    """A new user set CANDOR_ALLOWED_HOSTS=candor.example.org as the README shows and every request via
    127.0.0.1 (health checks included) got 400. Loopback names cannot be forged by DNS rebinding."""
    from app.serve import access

    monkeypatch.setenv("CANDOR_ALLOWED_HOSTS", "candor.example.org")
    for host in ("127.0.0.1:8050", "localhost", "candor.example.org", "[::1]:8050"):
        assert access.host_allowed(host), host
    for host in ("evil.example", "127.0.0.1.nip.io", "candor.example.org.evil.example"):
        assert not access.host_allowed(host), host
