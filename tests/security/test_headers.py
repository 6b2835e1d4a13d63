"""Every response carries the security headers; a proxy's HTTPS is believed only with CANDOR_PROXY_HOPS (issue 27).

The browser half (every page drawn under the policy, no violation) is tests/e2e/test_security_headers.py.
"""
from __future__ import annotations

import pytest
from werkzeug.middleware.proxy_fix import ProxyFix

from app.serve import headers
from tests.security.access_support import ORIGIN, dash_app, isolated, users_file  # noqa: F401
from workspace.errors import CandorError
from workspace.settings import Settings


def _script_sources(policy: str) -> list[str]:
    [directive] = [d for d in policy.split("; ") if d.startswith("script-src ")]
    return directive.split()[1:]


@pytest.mark.parametrize("path", ["/", "/descriptive", "/login", "/assets/style.css", "/_dash-layout",
                                  "/_candor/ready", "/no-such-page"])
def test_every_response_has_the_headers(dash_app, isolated, path):
    response = dash_app.server.test_client().get(path)
    policy = response.headers["Content-Security-Policy"]
    assert "frame-ancestors 'none'" in policy.split("; ")
    assert "object-src 'none'" in policy.split("; ") and "default-src 'self'" in policy.split("; ")
    sources = _script_sources(policy)
    assert sources[0] == "'self'" and "'unsafe-inline'" not in sources
    assert response.headers["X-Frame-Options"] == "DENY"
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    assert response.headers["Referrer-Policy"] == "same-origin"


def test_refusals_have_the_headers_too(dash_app, isolated):
    response = dash_app.server.test_client().get("/", headers={"Host": "evil.example"})
    assert response.status_code == 400
    assert response.headers["X-Frame-Options"] == "DENY" and "Content-Security-Policy" in response.headers


def test_the_policy_allows_exactly_the_inline_scripts_of_the_index_page(dash_app, isolated):
    import base64
    import hashlib
    import re

    page = dash_app.server.test_client().get("/")
    html = re.sub(r"<!--.*?-->", "", page.text, flags=re.S)  # Dash's <!--[if IE]> alert runs in no browser we serve
    inline = re.findall(r"<script(?![^>]*\bsrc=)(?![^>]*application/json)[^>]*>(.*?)</script>", html, re.S)
    assert len(inline) >= 10  # the renderer and the clientside callbacks
    hashes = {f"'sha256-{base64.b64encode(hashlib.sha256(s.encode()).digest()).decode()}'" for s in inline}
    allowed = set(_script_sources(page.headers["Content-Security-Policy"]))
    assert hashes <= allowed
    assert allowed - hashes == {"'self'", "'unsafe-eval'"}  # unsafe-eval: Plotly's WebGL (headers.EVAL_NEEDED)


def test_frame_ancestors_setting():
    given = headers.response_headers([], ("https://portal.example.org",))
    assert "frame-ancestors https://portal.example.org" in given["Content-Security-Policy"]
    assert "X-Frame-Options" not in given  # it cannot name an origin; frame-ancestors decides
    env = {"CANDOR_FRAME_ANCESTORS": "https://a.example, https://b.example:8443", "CANDOR_PROXY_HOPS": "1"}
    settings = Settings.from_env(env)
    assert settings.frame_ancestors == ("https://a.example", "https://b.example:8443") and settings.proxy_hops == 1
    with pytest.raises(CandorError, match="CANDOR_FRAME_ANCESTORS takes origins"):
        Settings.from_env({"CANDOR_FRAME_ANCESTORS": "*; script-src *"})
    with pytest.raises(CandorError, match="CANDOR_PROXY_HOPS must be"):
        Settings.from_env({"CANDOR_PROXY_HOPS": "-1"})


def _session_cookie(response) -> str:
    [cookie] = [c for c in response.headers.getlist("Set-Cookie") if c.startswith("candor_session=")]
    return cookie


@pytest.mark.parametrize("hops", [0, 1])
def test_session_cookie_behind_a_tls_proxy(dash_app, isolated, monkeypatch, hops):
    users_file(isolated, monkeypatch, ann=("viewer", "pw-ann-123"))
    monkeypatch.setattr(dash_app.server, "wsgi_app", dash_app.server.wsgi_app)  # restored after the test
    headers.trust_proxy(dash_app.server, hops)
    client = dash_app.server.test_client()
    through_proxy = {"X-Forwarded-Proto": "https", "X-Forwarded-For": "203.0.113.7",
                     "X-Forwarded-Host": "localhost", "Origin": "https://localhost" if hops else ORIGIN}
    response = client.post("/login", data={"username": "ann", "password": "pw-ann-123", "next": "/"},
                           headers=through_proxy, environ_base={"REMOTE_ADDR": "127.0.0.1"})
    assert response.status_code == 303
    cookie = _session_cookie(response)
    assert "HttpOnly" in cookie and "SameSite=Lax" in cookie
    assert ("Secure" in cookie) == bool(hops)  # the proxy's https is believed only when a setting says it is there
    assert isinstance(dash_app.server.wsgi_app, ProxyFix) == bool(hops)
