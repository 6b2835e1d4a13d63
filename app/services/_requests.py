"""Requests in flight, for the warm-up to give way to (issue 23).

The server counts the requests it is serving (:func:`request_began` in Flask's ``before_request``,
:func:`request_ended` in its ``teardown_request``, which runs for a request that failed too); the warm-up's steps
that loop over rows (a store's prepared rows: their views, :func:`app.services.row_view.stored_views`, and their
drawn Descriptive panels, ``app.callbacks.descriptive.rendered_stored_rows``) call :func:`yield_to_requests`
between two rows, so a user's click does not share the interpreter with them.
"""
from __future__ import annotations

import threading

__all__ = ["YIELD_MAX_S", "request_began", "request_ended", "serving", "yield_to_requests"]

_in_flight = [0]  # requests being served
_in_flight_lock = threading.Lock()
_no_request = threading.Event()
_no_request.set()
YIELD_MAX_S = 0.25
"""Longest a warm-up step waits, between two rows, for the requests in flight to end (:func:`yield_to_requests`):
under a constant stream of requests the warm-up still moves on, at least four rows a second."""


def request_began() -> None:
    """A request is being served (the server's ``before_request``): warm-up loops pause between rows."""
    with _in_flight_lock:
        _in_flight[0] += 1
        _no_request.clear()


def request_ended(_exc=None) -> None:
    """A request ended (the server's ``teardown_request``)."""
    with _in_flight_lock:
        _in_flight[0] = max(0, _in_flight[0] - 1)
        if _in_flight[0] == 0:
            _no_request.set()


def yield_to_requests(max_wait_s: float = YIELD_MAX_S) -> bool:
    """Called by the warm-up between two rows of a long step: wait, at most ``max_wait_s`` seconds, while a request is
    being served, so a user's click does not share the interpreter with the warm-up (issue 23: served from a store,
    the warm-up drew Adult's 500 stored rows for about 5 s after the start, and each start's first five row clicks
    took 195-304 ms against 91-148 after). Returns whether no request was in flight when it returned."""
    return _no_request.is_set() or _no_request.wait(max_wait_s)


def serving() -> bool:
    """Whether a request is being served (the server's idle trim waits for none, ``app/serve/server.py``)."""
    return not _no_request.is_set()
