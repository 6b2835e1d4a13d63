"""The security headers of every response, and the proxy in front: one place (SECURITY.md, issue 27).

:func:`install` adds one ``after_request`` hook that sets, on every response (pages, Dash's JSON, assets,
the login form, refusals):

- ``Content-Security-Policy``: scripts only from this server and the inline scripts Dash itself writes into
  the index page (its renderer and the clientside callbacks), allowed by their SHA-256 (``Dash.csp_hashes``),
  so an injected ``<script>`` or event handler does not run; ``'unsafe-eval'`` for Plotly's WebGL traces
  (:data:`EVAL_NEEDED`); styles from this server and inline (Plotly and React write style elements and
  attributes); images from this server, ``data:`` and ``blob:`` (Plotly's icons and "download as PNG");
  requests only to this server; no plugins, no ``<base>`` elsewhere, forms only to this server; frames of
  this page only in the origins of ``CANDOR_FRAME_ANCESTORS`` (default none: ``frame-ancestors 'none'``).
- ``X-Frame-Options``: ``DENY`` unless embedding origins are allowed (the header cannot name several
  origins; browsers that know ``frame-ancestors`` follow it and ignore this one).
- ``X-Content-Type-Options: nosniff`` and ``Referrer-Policy: same-origin`` (a link out of Candor carries no
  address, whose ``?row=`` and ``?class=`` say what was looked at).

A TLS-terminating proxy's ``X-Forwarded-Proto``/``-For``/``-Host`` are believed only when ``CANDOR_PROXY_HOPS``
says how many proxies stand in front (werkzeug's ``ProxyFix`` with that many hops): then ``request.is_secure``
(the session cookie's ``Secure``) and the client's address (the per-address limits) are the client's.
"""
from __future__ import annotations

from werkzeug.middleware.proxy_fix import ProxyFix

from workspace import settings

EVAL_NEEDED = True
"""Plotly's WebGL traces (``scattergl``: the beeswarm, dependence and residual scatters past
:data:`app.views.figures.SVG_MAX_POINTS` dots) compile their drawing code with
``new Function`` (regl), refused without ``'unsafe-eval'``; measured in Chromium by
``tests/e2e/test_security_headers.py`` (a WebGL scatter is not drawn without it). Dash's renderer, its components
and Plotly's SVG traces run without it."""


def policy(script_hashes: list[str], frame_ancestors: tuple[str, ...] = ()) -> str:
    """The ``Content-Security-Policy`` header's value.

    Parameters
    ----------
    script_hashes : list of str
        CSP source expressions of the inline scripts allowed (``'sha256-...'``, as ``Dash.csp_hashes`` gives).
    frame_ancestors : tuple of str, default=()
        Origins that may frame the pages; empty: none may.
    """
    scripts = ["'self'", *script_hashes, *(["'unsafe-eval'"] if EVAL_NEEDED else [])]
    parts = {
        "default-src": ["'self'"],
        "script-src": scripts,
        "style-src": ["'self'", "'unsafe-inline'"],
        "img-src": ["'self'", "data:", "blob:"],
        "font-src": ["'self'", "data:"],
        "connect-src": ["'self'"],
        "object-src": ["'none'"],
        "base-uri": ["'self'"],
        "form-action": ["'self'"],
        "frame-ancestors": list(frame_ancestors) or ["'none'"],
    }
    return "; ".join(f"{name} {' '.join(values)}" for name, values in parts.items())


def response_headers(script_hashes: list[str], frame_ancestors: tuple[str, ...] = ()) -> dict[str, str]:
    """Every header :func:`install` sets, name -> value."""
    headers = {"Content-Security-Policy": policy(script_hashes, frame_ancestors),
               "X-Content-Type-Options": "nosniff", "Referrer-Policy": "same-origin"}
    if not frame_ancestors:
        headers["X-Frame-Options"] = "DENY"
    return headers


def install(dash_app) -> None:
    """Set :func:`response_headers` on every response of ``dash_app``'s server, and trust the proxy the settings name.

    Call it after every callback is registered and Dash is set up (:func:`app.serve.startup.setup_dash_now`): the
    clientside callbacks' code is hashed once, here.
    """
    given = settings.current()
    headers = response_headers(dash_app.csp_hashes(), given.frame_ancestors)

    def add(response):
        for name, value in headers.items():
            response.headers.setdefault(name, value)
        return response

    dash_app.server.after_request(add)
    trust_proxy(dash_app.server, given.proxy_hops)


def trust_proxy(server, hops: int) -> None:
    """Believe the last ``hops`` proxies' ``X-Forwarded-For``/``-Proto``/``-Host`` (0: none, nothing changes).

    Without it a TLS-terminating proxy's HTTPS looks like plain HTTP to the app (no ``Secure`` cookie unless
    ``CANDOR_SECURE_COOKIES=1``) and every client has the proxy's address.
    """
    if hops:
        server.wsgi_app = ProxyFix(server.wsgi_app, x_for=hops, x_proto=hops, x_host=hops)
