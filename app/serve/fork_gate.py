"""No background job forks while another thread of the server is inside a request.

A background job (Dash's DiskcacheManager) runs in a forked copy of the server. ``fork`` copies one
thread, the caller; a lock that any other thread holds at that moment stays held forever in the copy.
Python's own locks can be reset after a fork (``app.services._core._fresh_locks_after_fork``), but not
the C libraries' locks that are taken with the interpreter released: SQLite's (every diskcache read of a
job's progress takes them), OpenMP's, a model's. A job forked while another request polled its progress
hung at its first cache write, and "Fit MUSE" stayed disabled for good (CI, 2026-12-01; in
a test of 60 forks beside three threads reading a diskcache, 13 hung that way).

So every request holds the gate while it runs (:func:`guard_requests`, WSGI middleware), and the
thread about to fork waits until it is the only one inside (:meth:`ForkGate.forking`); requests that
arrive meanwhile wait the few milliseconds of the fork. The gate is the standard readers-writer
discipline, with the writer (the fork) first; see W. Stevens and S. Rago, *Advanced Programming in
the UNIX Environment*, 3rd ed., section 12.9 "Threads and fork", for why only a quiet process can be
forked safely.
"""
from __future__ import annotations

import contextlib
import logging
import os
import threading

log = logging.getLogger(__name__)

FORK_WAIT_S = 60.0
"""How long a fork waits for the requests in flight to end. A request still running then (a model
that hangs) does not block every job for good: the fork goes ahead and the log says so."""


class ForkGate:
    """Requests hold the gate shared (:meth:`request`); a fork holds it alone (:meth:`forking`).

    The forking thread's own requests do not count (a job starts inside the request that asked for it),
    and two forks wait for each other in turn, whichever requests they were asked from.
    """

    def __init__(self):
        self._reset()

    def _reset(self) -> None:
        self._cond = threading.Condition()
        self._inside = 0  # requests in flight, over every thread
        self._forking = False
        self._mine = threading.local()  # this thread's requests in flight (nested holds)

    def _own(self) -> int:
        return getattr(self._mine, "n", 0)

    @property
    def inside(self) -> int:
        """Requests in flight now (threads inside :meth:`request`, nested holds counted)."""
        with self._cond:
            return self._inside

    @contextlib.contextmanager
    def request(self):
        """Hold the gate for a request: waits while a fork is under way (a nested hold never waits)."""
        with self._cond:
            if not self._own():
                self._cond.wait_for(lambda: not self._forking)
            self._inside += 1
        self._mine.n = self._own() + 1
        try:
            yield
        finally:
            self._mine.n -= 1
            with self._cond:
                self._inside -= 1
                self._cond.notify_all()

    @contextlib.contextmanager
    def forking(self, timeout: float = FORK_WAIT_S):
        """Hold the gate alone while the ``with`` block forks; yields whether every other request had ended.

        Parameters
        ----------
        timeout : float
            Seconds to wait for the other requests in flight; then the block runs anyway (logged).
        """
        own = self._own()
        with self._cond:
            self._inside -= own  # this thread's requests wait for the fork, not the other way round
            self._cond.notify_all()
            self._cond.wait_for(lambda: not self._forking)
            self._forking = True
            quiet = self._cond.wait_for(lambda: self._inside == 0, timeout)
            busy = self._inside
        if not quiet:
            log.warning("candor: a background job forks while %d other request(s) are still in flight after "
                        "%.0f s; if it hangs, Cancel ends it", busy, timeout)
        try:
            yield quiet
        finally:
            with self._cond:
                self._forking = False
                self._inside += own
                self._cond.notify_all()


GATE = ForkGate()
os.register_at_fork(after_in_child=GATE._reset)  # the copy serves no request: a fresh, open gate


def guard_requests(wsgi_app, gate: ForkGate = GATE):
    """WSGI middleware: ``wsgi_app`` with every request holding ``gate`` until its response is made."""

    def guarded(environ, start_response):
        with gate.request():
            return wsgi_app(environ, start_response)

    return guarded
