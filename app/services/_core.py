"""Shared state of the service layer: one :class:`ServiceState` (the workspace, its store, lazily built
values, per-row caches) and the registry of what the feature modules build.

Feature modules register what they build once (:func:`lazy`) and what they memoize per row
(:func:`row_cache`); both live in the installed :class:`ServiceState`, so installing another
(:func:`install`, :func:`init` for a new workspace) starts from nothing computed, and putting one back
(:func:`overridden`, for ``check``, the report and tests) gives back what it had computed. A store built by
``python -m app build`` (``ServiceState(opened_store=...)``, :func:`use_built_store`) is what the services look in
first (:func:`built_store`): only while the installed workspace is the one it was built for.
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

_factories: dict[str, Callable[[], object]] = {}
_warm_order: list[str] = []
_warm_last: set[str] = set()
_warm_late: set[str] = set()
_warm_first: set[str] = set()
_no_workspace: set[str] = set()  # values whose factory reads no workspace: available before init (lazy)
log = logging.getLogger("candor.warmup")
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


class _OneAtATime:
    """``functools.lru_cache(maxsize)(fn)`` that computes each set of arguments once at a time: a call that finds the
    same arguments being computed by another thread waits for it and reads its result instead of computing it again
    beside it (an error is not kept: the waiting call computes again).

    Viewers opening a page of a fresh worker each computed its views alike until the first was kept (issue 27).
    """

    def __init__(self, fn, maxsize: int) -> None:
        self._cached = lru_cache(maxsize=maxsize)(fn)
        self.fresh_locks()

    def __call__(self, *args, **kwargs):
        key = (args, tuple(sorted(kwargs.items()))) if kwargs else args
        with self._lock:
            entry = self._running.get(key)  # unhashable arguments raise TypeError here, as lru_cache would
            if entry is None:
                entry = self._running[key] = [threading.Lock(), 0]
            entry[1] += 1
        try:
            with entry[0]:
                return self._cached(*args, **kwargs)
        finally:
            with self._lock:
                entry[1] -= 1
                if entry[1] == 0:
                    del self._running[key]

    def cache_clear(self) -> None:
        self._cached.cache_clear()

    def cache_info(self):
        return self._cached.cache_info()

    def fresh_locks(self) -> None:
        """New locks and nothing under way (a forked child: a computation another thread ran at the fork never ends
        there)."""
        self._lock, self._running = threading.Lock(), {}


class ServiceState:
    """Everything the services hold for one installed workspace: the workspace, its store, lazy values, caches.

    Parameters
    ----------
    workspace : Workspace or None, default=None
        What every page explains (None: nothing installed; :func:`workspace` raises).
    selection : app.services.selection.Selection or None, default=None
        What ``workspace`` was loaded from (the files and class every process of the launch explains).
    opened_store : store.read.Store or None, default=None
        The store the server was started with (``--store``, ``CANDOR_STORE``), checked; read only while it
        :meth:`~store.read.Store.applies_to` the workspace (:attr:`built_store`).
    call_limits : explainers.model_adapter.CallLimits or None, default=None
        Given to the workspace's adapter (the server's model-call deadline and its one-line errors); None
        leaves the adapter's own.
    warm_switches : bool or str, default=False
        How a later switch of workspace (another class, an upload, another worker's choice) warms (as
        :func:`init`'s ``warm``); nothing is warmed in a process without a server.

    Attributes
    ----------
    built_store : store.read.Store or None
        ``opened_store`` when it was built for ``workspace``, else None.
    warm_seconds : dict of str to (float, float)
        Per warm value computed by this state's warm-up: (wall seconds, CPU seconds of the process: OpenMP
        threads of a model count, requests served meanwhile too).
    seen_mtime : int or None
        The selection file's modification time this process last read (:func:`app.services.selection.sync`).
    last_fingerprint : (Workspace or None, str)
        The workspace and fingerprint the last guarded job of this state ended with (``tabular.guarded``): the next job's
        "before" (a row the store lacks runs SHAP then LIME; a random forest's model call costs about 25 ms whatever
        its rows, and the guard made four of a row's nine, issue 23). A mutation between two jobs still differs from
        the next job's "after".
    """

    def __init__(self, workspace: Workspace | None = None, *, selection=None, opened_store=None, call_limits=None,
                 warm_switches: bool | str = False) -> None:
        if workspace is not None and call_limits is not None and workspace.adapter.limits != call_limits:
            workspace = workspace.limited(call_limits)
        self.workspace, self.selection, self.opened_store = workspace, selection, opened_store
        self.call_limits, self.warm_switches = call_limits, warm_switches
        self.built_store = opened_store if opened_store is not None and workspace is not None and \
            opened_store.applies_to(workspace) else None
        self.warm_seconds: dict[str, tuple[float, float]] = {}
        self.seen_mtime: int | None = None
        self.last_fingerprint: tuple = (None, "")
        self._lazies: dict[str, _Lazy] = {}
        self._caches: dict = {}
        self._joined = set(_factories)
        self._lock = threading.Lock()

    def replaced(self, **changes) -> ServiceState:
        """A new state (nothing computed) with this one's parameters and ``seen_mtime``, ``changes`` applied."""
        params = dict(workspace=self.workspace, selection=self.selection, opened_store=self.opened_store,
                      call_limits=self.call_limits, warm_switches=self.warm_switches)
        new = ServiceState(**{**params, **changes})
        new.seen_mtime = self.seen_mtime
        return new

    def lazy_value(self, name: str) -> _Lazy:
        """The :class:`_Lazy` of the registered value ``name`` in this state (made on first use)."""
        lz = self._lazies.get(name)
        if lz is None:
            if name not in _no_workspace and (self.workspace is None or name not in self._joined):
                raise RuntimeError("services.init(workspace) has not been called")  # join_late places late values
            with self._lock:
                lz = self._lazies.setdefault(name, _Lazy(_factories[name]))
        return lz

    def is_ready(self, name: str) -> bool:
        """Whether the lazy value ``name`` has been computed in this state (never waits for it)."""
        lz = self._lazies.get(name)
        return lz is not None and lz._done

    def cache(self, owner, maxsize: int, fn):
        """This state's ``lru_cache(maxsize)(fn)`` for the :func:`row_cache` function ``owner``, computing each set
        of arguments once at a time (:class:`_OneAtATime`)."""
        cached = self._caches.get(owner)
        if cached is None:
            with self._lock:
                cached = self._caches.setdefault(owner, _OneAtATime(fn, maxsize))
        return cached

    def fresh_locks(self) -> None:
        """New locks for this state and its lazy values (a forked child; see :func:`_fresh_locks_after_fork`)."""
        self._lock = threading.Lock()
        for lz in self._lazies.values():
            lz._lock = threading.Lock()
        for cached in self._caches.values():
            cached.fresh_locks()


_state = ServiceState()


def _fresh_locks_after_fork() -> None:
    """Background callbacks run in a forked process; a lock another thread held at the fork would never
    be released there, so the child gets fresh locks (a value mid-computation is recomputed).
    The same hazard holds for Python's per-module import locks, which cannot be reset: modules a
    background job uses must be imported when its service module is imported, not inside the job."""
    _state.fresh_locks()


os.register_at_fork(after_in_child=_fresh_locks_after_fork)


def lazy(name: str, factory: Callable[[], object], *, warm=False, needs_workspace=True) -> Callable[[], object]:
    """Register ``factory`` under ``name``; returns a getter that builds the value once per installed state.

    ``warm=True`` adds it to what :func:`init` precomputes, in registration order; ``warm="last"`` after
    every ``warm=True`` value, whatever the import order (a step of minutes that one page also computes on
    opening, with its own progress, must not hold back the steps other pages wait for); ``warm="first"``
    before every other, and at once: the background warm-up computes the ``"first"`` values as soon as the
    workspace is installed, while the server is still starting, then waits for the first request before the
    rest (the Descriptive page's first row: a second or more of a user's first click otherwise, issue 23).
    ``warm="late"`` after every ``warm=True`` value and before the ``"last"`` ones (seconds of CPU for one page
    that must neither hold the first clicks nor wait behind a step of minutes). ``needs_workspace=False``: the
    factory reads no workspace, and the value is available before :func:`init` too."""
    if warm not in (False, True, "late", "last", "first"):
        raise ValueError(f"warm must be False, True, 'first', 'late' or 'last', got {warm!r}")
    _factories[name] = factory
    if not needs_workspace:
        _no_workspace.add(name)
    if warm:
        {"last": _warm_last, "late": _warm_late, "first": _warm_first}.get(warm, set()).add(name)
        _warm_order.append(name)
        # stable: registration order within each group
        _warm_order.sort(key=lambda n: 0 if n in _warm_first else 3 if n in _warm_last else 2 if n in _warm_late
                         else 1)
    return lambda: get(name)


def join_late(compute: bool = False) -> list[str]:
    """Give values registered after the installed state was made their place in it; their names.

    Page modules (imported when the Dash app is made, after the workspace is installed) register values too:
    the warm ones among them are computed now when ``compute`` (``warm="sync"``: gunicorn ``--preload``),
    else by the background warm-up, which has not run yet.
    """
    st = _state
    late = [n for n in _factories if n not in st._joined]
    st._joined.update(late)
    if compute:
        for name in (n for n in _warm_order if n in late):
            _warm_step(st, name)
    return late


def get(name: str):
    """The lazy value ``name`` of the installed state (computed on first use)."""
    return _state.lazy_value(name).get()


def is_ready(name: str) -> bool:
    """Whether the lazy value ``name`` has been computed (never waits for it)."""
    return _state.is_ready(name)


def ready_entry(name: str, key):
    """``get(name).get(key)`` once the warm value ``name`` (a dict) is computed; None before, never waiting.

    A click answered from what the warm-up prepared (a stored row's view, its drawn panels) must not wait for
    the warm-up to reach that step: before it has, the caller computes the one entry it needs.
    """
    return get(name).get(key) if is_ready(name) else None


def row_cache(maxsize: int = 256):
    """``functools.lru_cache`` whose entries belong to one installed :class:`ServiceState`; concurrent calls with the
    same arguments compute them once (:class:`_OneAtATime`).

    Entries live in the state that was installed when the call began: installing another (a new workspace)
    starts empty, and a computation that started before a switch (another request choosing a class) and ends
    after it is kept in the state it began in, never served for the new one.
    """
    def wrap(fn):
        def call(*args, **kwargs):
            return _state.cache(call, maxsize, fn)(*args, **kwargs)

        call.cache_clear = lambda: _state.cache(call, maxsize, fn).cache_clear()
        call.cache_info = lambda: _state.cache(call, maxsize, fn).cache_info()
        call.__wrapped__ = fn
        return call
    return wrap


def state() -> ServiceState:
    """The installed :class:`ServiceState`."""
    return _state


def use_built_store(opened) -> None:
    """Serve from ``opened`` (a checked :class:`store.read.Store`, or None): the installed state's workspace,
    nothing computed yet, with that store (a new workspace keeps it, :func:`init`)."""
    install(_state.replaced(opened_store=opened))


def built_store():
    """The build-then-serve store (``python -m app build``, :mod:`store`) that holds this workspace's results (look
    there first), or None."""
    return _state.built_store


def store_note() -> str:
    """One line for provenance: which store this workspace's results are read from, or why none is read."""
    st = _state
    if st.built_store is not None:
        return f"read from store {st.built_store.folder} (rows without a stored result computed live)"
    if st.opened_store is not None and st.workspace is not None:
        return f"computed live: store {st.opened_store.folder} not read ({st.opened_store.mismatch(st.workspace)})"
    return "computed live (no store given)"


def workspace() -> Workspace:
    """The installed workspace.

    Raises
    ------
    RuntimeError
        If none is installed.
    """
    ws = _state.workspace
    if ws is None:
        raise RuntimeError("services.init(workspace) has not been called")
    return ws


def install(new: ServiceState, *, warm: bool | str = False) -> ServiceState:
    """Make ``new`` the state every service reads; returns the state it replaces.

    ``warm=True`` computes the registered warm values in a background thread (those registered
    ``warm="first"`` at once, the others after the first request), ``warm="sync"`` before returning (gunicorn
    ``--preload``), ``False`` leaves everything lazy.
    """
    global _state
    previous, _state = _state, new
    if new.opened_store is not None and new.built_store is None and new.workspace is not None:
        # e.g. a class switch: say so, never skip it silently
        log.warning("candor: store %s is not read for this workspace, its results are computed live: %s",
                    new.opened_store.folder, new.opened_store.mismatch(new.workspace))
    warm_done.clear()
    if not warm:
        warm_done.set()  # nothing will be warmed: nothing to wait for
    elif warm == "sync":
        _warm(new)
    else:
        threading.Thread(target=_warm, args=(new,), kwargs={"wait": True}, name="candor-warm", daemon=True).start()
    return previous


def init(ws: Workspace, *, warm: bool | str = True, **changes) -> None:
    """Install ``ws`` as the workspace every page explains, nothing computed, with the installed state's store,
    selection and limits (``changes``: other :class:`ServiceState` parameters); ``warm`` as :func:`install`."""
    install(_state.replaced(workspace=ws, **changes), warm=warm)


def _warm(st: ServiceState, wait: bool = False) -> None:
    st.warm_seconds.clear()
    first = [n for n in _warm_order if n in _warm_first]
    for name in first:  # before the first request: what a user's first click needs
        _warm_step(st, name)
    if wait:
        first_request.wait(timeout=15)
        time.sleep(1.0)  # the first page's own callbacks arrive just after the HTML
    for name in [n for n in _warm_order if n not in first]:  # also the pages' values registered meanwhile
        if _state is not st:  # another workspace was installed: its own warm-up computes its values
            return
        _warm_step(st, name)
    warm_done.set()


def _warm_step(st: ServiceState, name: str) -> None:
    """Compute the warm value ``name`` of ``st``, give its freed memory back and record its time
    (``st.warm_seconds``)."""
    wall, cpu, failed = time.perf_counter(), time.process_time(), ""
    try:
        st.lazy_value(name).get()
    except Exception as err:  # surfaced again, with its message, when a page asks for it
        failed = f" (failed: {err})"
    trim_heap()  # a step's freed buffers (50 MB for one model call on Adult's 32,561 rows) before the next
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    st.warm_seconds[name] = (wall, cpu)
    log.info("warm-up step %s: %.2f s wall, %.2f s process CPU%s", name, wall, cpu, failed)


@contextmanager
def overridden(temporary: ServiceState):
    """Install ``temporary`` (nothing warmed) for the ``with`` block, then put back the state there was, with
    what it had computed (``python -m app check`` and the report run in-process, tests)."""
    previous = install(temporary)
    try:
        yield temporary
    finally:
        install(previous)
