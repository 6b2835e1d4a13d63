"""``python -m app`` (waitress) passes a proxy's headers on to the application (issue 27, found by an attack).

waitress deletes ``Forwarded`` and ``X-Forwarded-*`` by default (``clear_untrusted_proxy_headers``). FAILED
before ``app/serve/waitress.py`` passed them on: a request through a reverse proxy on the same machine looked local, so
local mode (no users file) served it as the local user holding every role (``/_candor/workspace`` showed the
worker's PID to a remote client), and ``CANDOR_PROXY_HOPS=1`` changed nothing (no ``Secure`` cookie for a proxy's
HTTPS, every client counted at the proxy's address). Tested on a real server process, not Flask's test client,
which has no waitress in front.
"""
from __future__ import annotations

import requests

from tests.e2e.serving import running_app
from tests.security.access_support import add_user

PROXIED = {"X-Forwarded-For": "203.0.113.7", "X-Forwarded-Proto": "https"}


def test_local_mode_does_not_serve_a_proxied_request_as_the_local_user(tmp_path):
    env = {"CANDOR_WARM": "0", "CANDOR_CACHE_DIR": str(tmp_path / "cache"), "CANDOR_STATE_DIR": str(tmp_path / "state")}
    with running_app([], env, tmp_path / "log") as base:
        direct = requests.get(base + "/_candor/workspace", timeout=30)
        proxied = requests.get(base + "/_candor/workspace", headers=PROXIED, timeout=30, allow_redirects=False)
        page = requests.get(base + "/descriptive", headers=PROXIED, timeout=30, allow_redirects=False)
    assert direct.status_code == 200 and "pid" in direct.json()  # the local user, on this machine
    assert proxied.status_code != 200 and "pid" not in proxied.text, (proxied.status_code, proxied.text[:200])
    assert page.status_code != 200, page.status_code


def test_proxy_hops_see_the_proxys_https_and_client_address(tmp_path):
    users = tmp_path / "users"
    add_user(users, "ann", "analyst", "ann-pass-123")
    env = {"CANDOR_WARM": "0", "CANDOR_CACHE_DIR": str(tmp_path / "cache"), "CANDOR_STATE_DIR": str(tmp_path / "state"),
           "CANDOR_USERS_FILE": str(users), "CANDOR_PROXY_HOPS": "1", "CANDOR_SESSION_DB": str(tmp_path / "sessions.db")}
    with running_app([], env, tmp_path / "log") as base:
        s = requests.Session()
        got = s.post(base + "/login", data={"username": "ann", "password": "ann-pass-123", "next": "/"},
                     headers={"Origin": base.replace("http://", "https://"), **PROXIED}, allow_redirects=False,
                     timeout=30)
        fails = [requests.post(base + "/login", data={"username": "ann", "password": "wrong", "next": "/"},
                               headers={"Origin": base, "X-Forwarded-For": "198.51.100.1"}, allow_redirects=False,
                               timeout=30).status_code for _ in range(7)]
        other = requests.post(base + "/login", data={"username": "ann", "password": "ann-pass-123", "next": "/"},
                              headers={"Origin": base, "X-Forwarded-For": "198.51.100.2"}, allow_redirects=False,
                              timeout=30)
    assert got.status_code == 303, got.text[:200]
    assert "secure" in got.headers.get("Set-Cookie", "").lower()  # the client's request was HTTPS
    assert fails[-1] == 429  # the guesser's address waits ...
    assert other.status_code == 303  # ... the owner's, another client behind the same proxy, does not
