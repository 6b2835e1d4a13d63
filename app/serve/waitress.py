"""``python -m app`` serves with waitress (gunicorn, the ``Procfile``'s server, is configured in ``gunicorn.conf.py``).

waitress, not Flask's development server: a fixed pool of ``CANDOR_THREADS`` request threads (default 16, as
under gunicorn, so one slow model does not stall other users), reused from request to request. Flask's server
starts a thread for every request; on this machine a Dash request that found the process idle took twice as long
there (20.6 vs 10.1 ms for a trivial callback, 34.4 vs 23.1 ms for a Descriptive row, medians of 30 requests
0.7 s apart, as a user clicks).
"""
from __future__ import annotations

import waitress
from waitress import parser, utilities

from workspace import limits


class _UploadLimit(utilities.RequestEntityTooLarge):
    """waitress's 413 for a body over ``max_request_body_size``, saying which limit in Candor's words (waitress
    would say "exceeds max_body of 12233387")."""

    def __init__(self, _body: str):
        super().__init__(limits.too_large_message())


def serve(server, host: str, port: int, threads: int = 16) -> None:
    """Serve the WSGI ``server`` (Dash's Flask app) on ``host:port`` with ``threads`` request threads
    (``Settings.threads``, ``CANDOR_THREADS``) until interrupted (Ctrl-C ends it quietly).

    A request body over :func:`workspace.limits.max_request_bytes` is refused with 413 by waitress before it is
    read, from its ``Content-Length`` or, chunked, once that many bytes have come (waitress reads a whole body
    before the application sees it, so the limit must be waitress's own); Flask's ``MAX_CONTENT_LENGTH``
    (:func:`app.serve.server.create_app`) holds the same limit under gunicorn. Proxy headers (``Forwarded``,
    ``X-Forwarded-*``) reach the application as sent, as under gunicorn: which to believe is decided there
    (``CANDOR_PROXY_HOPS``, ``app/serve/headers.py``), and any of them makes a request not local (``app/serve/access.py``).

    Raises
    ------
    OSError
        If ``host:port`` cannot be bound.
    """
    parser.RequestEntityTooLarge = _UploadLimit  # the name waitress's parser raises the 413 with
    try:
        waitress.serve(server, host=host, port=port, threads=threads, ident="candor",
                       max_request_body_size=limits.max_request_bytes(), _quiet=True,
                       # waitress deletes Forwarded and X-Forwarded-* by default: a request through a proxy then
                       # looked local (local mode served it with every role) and CANDOR_PROXY_HOPS's ProxyFix never
                       # saw them; app/serve/headers.py (ProxyFix, only with hops set) and app/serve/access.py decide instead
                       clear_untrusted_proxy_headers=False)
    except KeyboardInterrupt:
        pass
