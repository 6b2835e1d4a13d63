"""``python -m app`` serves its first page while the model loads (issue 23: first HTTP 200 from process start).

Loading a scikit-learn model from ``.skops`` costs about 2 s before the first byte is read: ``import skops.io``
lists every scikit-learn estimator, which imports all of scikit-learn. Nothing the browser fetches first needs
the model: the page's HTML, its scripts (Plotly alone is 4.5 MB to parse) and styles. So the command line builds
the Dash app, starts serving, and loads the workspace on a thread meanwhile (:func:`start`); the browser parses
its scripts while the server loads. :class:`LoadGate` holds every request that needs the workspace (Dash's
layout, dependencies and callbacks, Candor's own routes) until the load has ended, then lets it through; if the
load failed, the command prints the one-line error and exits 2, as when it loaded first, and held requests get
503 with that line. gunicorn (``--preload``) and tests that build the app load before serving, as before.

Python's cyclic garbage collector is held from the command's start to the end of the load (:func:`hold_collector`):
importing dash, pandas, scikit-learn and SciPy and loading the model grows the heap from nothing to 190,000 tracked
objects, and each quarter of growth made the collector walk all of them: 0.38 s of CPU in 650 collections on the
path to the first layout (issue 23), for 24,000 objects of garbage. When the load has ended, :func:`start` freezes
what the start made (``gc.freeze``: the collector's later passes skip it, as CPython's documentation advises for a
server that forks, and Candor's background jobs fork) and turns the collector back on; the first time the server is
idle (:func:`collect_start_garbage`, from its idle thread) the start's objects are unfrozen, its garbage is
collected (0.13-0.15 s) while nobody waits, and what survives is frozen again, so the collector's later full passes
walk only what the server made since.
"""
from __future__ import annotations

import gc
import os
import sys
import threading
from typing import Callable

from workspace.errors import command_line

HELD_PREFIXES = ("/_dash-layout", "/_dash-dependencies", "/_dash-update-component", "/_candor/")
"""Paths a request waits on the load for (all of them need the workspace); the HTML and static files do not."""

WAIT_S = 600.0
"""Longest a held request waits for the load (seconds): then 503 with one line."""


class LoadGate:
    """WSGI middleware holding requests for :data:`HELD_PREFIXES` until the load has ended.

    Parameters
    ----------
    app : WSGI callable
    """

    def __init__(self, app):
        self.app, self.done, self.error = app, threading.Event(), ""

    def __call__(self, environ, start_response):
        path = environ.get("PATH_INFO", "")
        if path.startswith(HELD_PREFIXES) and not self.done.wait(WAIT_S if path != "/_candor/ready" else 0):
            return self._refuse(start_response, "the model is still loading; try again in a moment")
        if self.error:
            return self._refuse(start_response, self.error)
        return self.app(environ, start_response)

    @staticmethod
    def _refuse(start_response, line: str):
        body = (line + "\n").encode()
        start_response("503 Service Unavailable", [("Content-Type", "text/plain; charset=utf-8"),
                                                   ("Content-Length", str(len(body))), ("Retry-After", "2")])
        return [body]


_held = threading.Event()
"""Set while :func:`hold_collector` holds the collector and its garbage is not collected yet."""


def hold_collector() -> None:
    """Turn Python's cyclic garbage collector off until :func:`start`'s load has ended (``python -m app``, first)."""
    gc.disable()
    _held.set()


def _release_collector() -> None:
    """The start's objects frozen (their garbage waits for :func:`collect_start_garbage`), the collector back on."""
    if _held.is_set():
        gc.freeze()
        gc.enable()


def collect_start_garbage() -> bool:
    """Once, after :func:`hold_collector`: unfreeze the start's objects, collect its garbage and freeze what is left
    (the libraries, the model, the table, the warm caches): a later full collection walks only what the server made
    since, not the start's 300,000 objects (0.13-0.16 s each, inside whichever request triggered it); whether it ran."""
    if not _held.is_set() or not gc.isenabled():
        return False
    _held.clear()
    gc.unfreeze()
    gc.collect()
    gc.freeze()
    return True


def start(gate: LoadGate, load: Callable[[], None], on_loaded: Callable[[], None] | None = None) -> threading.Thread:
    """Run ``load`` on a thread, then open ``gate``; a load that fails ends the process in one line.

    Parameters
    ----------
    gate : LoadGate
    load : callable
        Loads and installs the workspace (raises :class:`CandorError` for the user's files).
    on_loaded : callable, optional
        Called once the load succeeded (the command line's "serving on" line).

    Notes
    -----
    After a successful load, the collector held by :func:`hold_collector` is turned back on, the start's objects
    frozen. A failed load prints ``candor: error: ...`` on stderr and exits the process with status 2 (a
    :class:`CandorError`) or 1 (anything else, with where it was raised), as ``python -m app`` does when it
    loads before serving; requests already held get 503 with the same line first.
    """
    def run():
        try:
            load()
        except Exception as err:  # noqa: BLE001  (the command line's one line, as python -m app's own)
            _fail(gate, *command_line(err))
        else:
            _release_collector()  # before the gate opens: the layout's and the callbacks' objects are collected
            gate.done.set()
            if on_loaded is not None:
                on_loaded()

    thread = threading.Thread(target=run, name="candor-load", daemon=True)
    thread.start()
    return thread


def _fail(gate: LoadGate, line: str, status: int) -> None:
    gate.error = line
    gate.done.set()
    print(f"candor: error: {line}", file=sys.stderr, flush=True)
    sys.stdout.flush()
    os._exit(status)  # the serving thread cannot be stopped from here; nothing is half-written by a failed load
