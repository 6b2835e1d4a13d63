"""Shared state of the service layer: the workspace, lazily built objects, per-row caches.

Feature modules register what they build once (:func:`lazy`) and what they
memoize per row (:func:`row_cache`); :func:`init` resets both when a new
workspace is installed. A store built by ``python -m app build`` (:func:`use_built_store`) is what the
services look in first (:func:`built_store`): only while the installed workspace is the one it was built for.
"""
from __future__ import annotations

import logging
import os
import threading
import time
from time import monotonic as _monotonic  # the failure clock of _Lazy (tests may stand in for the module time)
from contextlib import contextmanager
from functools import lru_cache
from typing import Callable

from workspace.limits import trim_heap
from workspace.workspace import Workspace

_ws: Workspace | None = None
_factories: dict[str, Callable[[], object]] = {}
_lazies: dict[str, "_Lazy"] = {}
_caches: list = []
_warm_order: list[str] = []
_warm_last: set[str] = set()
_warm_first: set[str] = set()
warm_seconds: dict[str, tuple[float, float]] = {}
"""Per warm value computed by the last warm-up: (wall seconds, CPU seconds of the process: OpenMP threads of a model count, requests served meanwhile too)."""
log = logging.getLogger("candor.warmup")
_opened_store = None
"""The :class:`store.read.Store` the server was started with (``--store``, ``CANDOR_STORE``), checked."""
_store = None
"""``_opened_store`` while the installed workspace is the one it was built for, else None."""
first_request = threading.Event()
"""Set by the server on its first request; background warm-up waits for it so the first page is not slowed."""
warm_done = threading.Event()
"""Set when the warm-up has computed everything registered with ``warm=True`` (``/_candor/ready``)."""


class _Lazy:
    """A value computed once, on first access, under a lock.

    A factory that raised is called again only :data:`RETRY_AFTER_S` later; meanwhile ``get`` raises the same
    error. Pages poll, and a failed global SHAP was computed again (minutes of CPU) by every poll of every
    panel; a failure that passes (a model call timed out on a loaded server) is still retried.
    """

    RETRY_AFTER_S = 60.0

    def __init__(self, factory: Callable[[], object]) -> None:
        self._factory, self._lock, self._value, self._done = factory, threading.Lock(), None, False
        self._error, self._failed_at = None, 0.0

    def get(self):
        if not self._done:
            with self._lock:
                if self._error is not None and _monotonic() - self._failed_at < self.RETRY_AFTER_S:
                    raise self._error.with_traceback(None)
                if not self._done:
                    try:
                        self._value = self._factory()
                    except Exception as err:
                        self._error, self._failed_at = err, _monotonic()
                        raise
                    self._done, self._error = True, None
        return self._value


def _fresh_locks_after_fork() -> None:
    """Background callbacks run in a forked process; a lock another thread held at the fork would never
    be released there, so the child gets fresh locks (a value mid-computation is recomputed).
    The same hazard holds for Python's per-module import locks, which cannot be reset: modules a
    background job uses must be imported when its service module is imported, not inside the job."""
    for lz in _lazies.values():
        lz._lock = threading.Lock()


os.register_at_fork(after_in_child=_fresh_locks_after_fork)


def lazy(name: str, factory: Callable[[], object], *, warm: bool | str = False) -> Callable[[], object]:
    """Register ``factory`` under ``name``; returns a getter that builds the value once per workspace.

    ``warm=True`` adds it to what :func:`init` precomputes, in registration order; ``warm="last"`` after
    every ``warm=True`` value, whatever the import order (a step of minutes that one page also computes on
    opening, with its own progress, must not hold back the steps other pages wait for); ``warm="first"``
    before every other, and at once: the background warm-up computes the ``"first"`` values as soon as the
    workspace is installed, while the server is still starting, then waits for the first request before the
    rest (the Descriptive page's first row: a second or more of a user's first click otherwise, issue 23).
    """
    if warm not in (False, True, "last", "first"):
        raise ValueError(f"warm must be False, True, 'first' or 'last', got {warm!r}")
    _factories[name] = factory
    if warm:
        (_warm_last if warm == "last" else _warm_first if warm == "first" else set()).add(name)
        _warm_order.append(name)
        # stable: registration order within each group
        _warm_order.sort(key=lambda n: 0 if n in _warm_first else 2 if n in _warm_last else 1)
    return lambda: get(name)


def join_late(compute: bool = False) -> list[str]:
    """Give values registered after :func:`init` their place in the installed workspace; their names.

    Page modules (imported when the Dash app is made, after the workspace is installed) register values too:
    the warm ones among them are computed now when ``compute`` (``warm="sync"``: gunicorn ``--preload``),
    else by the background warm-up, which has not run yet.
    """
    late = [n for n in _factories if n not in _lazies]
    _lazies.update({n: _Lazy(_factories[n]) for n in late})
    if compute:
        for name in (n for n in _warm_order if n in late):
            _warm_step(name)
    return late


def get(name: str):
    if name not in _lazies:
        raise RuntimeError("services.init(workspace) has not been called")
    return _lazies[name].get()


def is_ready(name: str) -> bool:
    """Whether the lazy value ``name`` has been computed (never waits for it)."""
    lz = _lazies.get(name)
    return lz is not None and lz._done


def ready_entry(name: str, key):
    """``get(name).get(key)`` once the warm value ``name`` (a dict) is computed; None before, never waiting.

    A click answered from what the warm-up prepared (a stored row's view, its drawn panels) must not wait for
    the warm-up to reach that step: before it has, the caller computes the one entry it needs.
    """
    return get(name).get(key) if is_ready(name) else None


def row_cache(maxsize: int = 256):
    """``functools.lru_cache`` whose entries belong to one workspace.

    Entries are dropped when a new workspace is installed, and keyed by the workspace they were
    computed for: a computation that started before a switch (another request choosing a class)
    and ends after it is never served for the new workspace.
    """
    def wrap(fn):
        cached = lru_cache(maxsize=maxsize)(lambda _ws_id, *args, **kwargs: fn(*args, **kwargs))

        def call(*args, **kwargs):
            return cached(id(_ws), *args, **kwargs)

        call.cache_clear, call.cache_info, call.__wrapped__ = cached.cache_clear, cached.cache_info, fn
        _caches.append(cached)
        return call
    return wrap


def use_built_store(opened) -> None:
    """Serve from ``opened`` (a checked :class:`store.read.Store`, or None) from the next :func:`init` on."""
    global _opened_store
    _opened_store = opened


def built_store():
    """The build-then-serve store (``python -m app build``, :mod:`store`) that holds this workspace's results (look
    there first), or None."""
    return _store


def store_note() -> str:
    """One line for provenance: which store this workspace's results are read from, or why none is read."""
    if _store is not None:
        return f"read from store {_store.folder} (rows without a stored result computed live)"
    if _opened_store is not None and _ws is not None:
        return f"computed live: store {_opened_store.folder} not read ({_opened_store.mismatch(_ws)})"
    return "computed live (no store given)"


def workspace() -> Workspace:
    if _ws is None:
        raise RuntimeError("services.init(workspace) has not been called")
    return _ws


def init(ws: Workspace, *, warm: bool | str = True) -> None:
    """Install ``ws`` as the workspace every page explains.

    ``warm=True`` computes the registered warm values in a background thread (those registered
    ``warm="first"`` at once, the others after the first request), ``warm="sync"`` before returning (gunicorn
    ``--preload``), ``False`` leaves everything lazy.
    """
    global _ws, _store
    _ws = ws
    _store = _opened_store if _opened_store is not None and _opened_store.applies_to(ws) else None
    if _opened_store is not None and _store is None:  # e.g. a class switch: say so, never skip it silently
        log.warning("candor: store %s is not read for this workspace, its results are computed live: %s",
                    _opened_store.folder, _opened_store.mismatch(ws))
    warm_done.clear()
    for cached in _caches:
        cached.cache_clear()
    _lazies.clear()
    _lazies.update({name: _Lazy(f) for name, f in _factories.items()})
    if not warm:
        warm_done.set()  # nothing will be warmed: nothing to wait for
    elif warm == "sync":
        _warm()
    else:
        threading.Thread(target=_warm, kwargs={"wait": True}, name="candor-warm", daemon=True).start()


def _warm(wait: bool = False) -> None:
    warm_seconds.clear()
    first = [n for n in _warm_order if n in _warm_first]
    for name in first:  # before the first request: what a user's first click needs
        _warm_step(name)
    if wait:
        first_request.wait(timeout=15)
        time.sleep(1.0)  # the first page's own callbacks arrive just after the HTML
    for name in [n for n in _warm_order if n not in first]:  # also the pages' values registered meanwhile
        _warm_step(name)
    warm_done.set()


def _warm_step(name: str) -> None:
    """Compute the warm value ``name``, give its freed memory back and record its time (:data:`warm_seconds`)."""
    wall, cpu, failed = time.perf_counter(), time.process_time(), ""
    try:
        get(name)
    except Exception as err:  # surfaced again, with its message, when a page asks for it
        failed = f" (failed: {err})"
    trim_heap()  # a step's freed buffers (50 MB for one model call on Adult's 32,561 rows) before the next
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    warm_seconds[name] = (wall, cpu)
    log.info("warm-up step %s: %.2f s wall, %.2f s process CPU%s", name, wall, cpu, failed)


@contextmanager
def installed(ws: Workspace):
    """Install ``ws`` (nothing warmed) for the ``with`` block, then put back the workspace there was, if any
    (``python -m app check`` run in-process, tests)."""
    previous = _ws
    init(ws, warm=False)
    try:
        yield ws
    finally:
        if previous is not None:
            init(previous, warm=False)
