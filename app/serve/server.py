"""Build the Dash app. ``server`` is the WSGI entry point (``gunicorn app.serve.server:server``).

The workspace comes from :func:`workspace.workspace.load_sample_workspace` unless the settings
(:class:`workspace.settings.Settings`) name the user's files: ``python -m app`` passes the ones it
parsed from its flags; gunicorn's ``server`` reads ``Settings.from_env()`` (``CANDOR_MODEL``,
``CANDOR_DATA``, ``CANDOR_TARGET``, ``CANDOR_TRUST_PICKLE=1``, ``CANDOR_CLASS``, ``CANDOR_TORCH_*``).
"""
from __future__ import annotations

import functools
import os
import threading
import time
from pathlib import Path
from typing import Callable

import dash
from plotly.utils import PlotlyJSONEncoder

from workspace import limits
from workspace.json_cache import JSONOnlyDisk, json_cache
from . import deferred_load, fork_gate
from .. import services
from .jobs import REFUSED, REFUSED_JOB, CeleryLimitedJobs, LimitedJobs, celery_app
from workspace import settings as _settings
from workspace.settings import Settings
from workspace.workspace import Workspace
from ..services import selection
from ..services.selection import LAUNCH_UID, Selection
from .startup import defer_torch

ROOT = Path(__file__).resolve().parents[2]
# Dash names the page modules after the folder of its ``name``'s module: app/ (the pages' parent), so they stay
# "pages.<page>" (dash.page_registry's keys) now that this module lives in app/serve/; Flask's root is app/ too
DASH_NAME = "app.__main__"
_app: dash.Dash | None = None


class _QuietForkManager(dash.DiskcacheManager):
    """Dash's DiskcacheManager, forking a job only while no other request is in flight (:mod:`app.serve.fork_gate`)."""

    def call_job_fn(self, key, job_fn, args, context):
        with fork_gate.GATE.forking():
            return super().call_job_fn(key, job_fn, args, context)


class _ForkAfterWarmManager(LimitedJobs, _QuietForkManager):
    """Dash's DiskcacheManager, but a job forks only once the warm-up thread is done, within the job limits, and
    never when its result is already cached (:meth:`app.serve.jobs.LimitedJobs.answered`).

    :class:`app.serve.jobs.LimitedJobs` refuses a job over ``CANDOR_MAX_JOBS`` / ``CANDOR_MAX_JOBS_PER_USER``.

    A background job runs in a forked copy of the server. A lock that another thread holds at the
    moment of the fork (an import in progress, a model loading, SQLite inside a request) stays held
    forever in the copy, and the job hangs; the warm-up thread is what imports and loads at run time,
    so jobs wait for it, and the fork itself waits for the requests in flight (:mod:`app.serve.fork_gate`).
    """

    def answered(self, key) -> bool:
        """Whether the cache already holds the result of the job ``key`` names (not a refusal, not an error).

        Dash keeps a result under its key when ``cache_by`` is set (:func:`background_manager`) and reads it on
        the first poll, but still forks a job to compute it again: a copy of the whole server process, made at
        the fork gate (:mod:`app.serve.fork_gate`) once every request in flight has ended (issue 27).
        """
        result = self.handle.get(key)
        return result is not None and not (isinstance(result, dict)
                                           and (REFUSED in result or "background_callback_error" in result))

    def call_job_fn(self, key, job_fn, args, context):
        if self.answered(key):  # e.g. the Surrogate page's default frontier, on every visit after the first:
            return REFUSED_JOB  # the id under which no process runs; the first poll reads the cached result
        services.warm_done.wait(timeout=300)
        return super().call_job_fn(key, job_fn, args, context)

    def get_or_create_signing_secret(self, generate):
        """Dash's secret for signing job handles, stored as text (JSON has no bytes; Dash reads text back)."""
        self.handle.add(self.SIGNING_SECRET_KEY, generate().decode("ascii"))
        return self.handle.get(self.SIGNING_SECRET_KEY)


class _DashJSONDisk(JSONOnlyDisk):
    """Background jobs' values (results, progress, set_props, the job registry) as JSON, encoded as Dash's
    CeleryManager encodes them (``PlotlyJSONEncoder``: components, figures, numpy, ``no_update``)."""

    encoder = PlotlyJSONEncoder


class _CeleryJobs(CeleryLimitedJobs, dash.CeleryManager):
    """Dash's CeleryManager within the job limits, counted in Redis (:class:`app.serve.jobs.CeleryLimitedJobs`)."""


def background_manager(cache_dir: Path | None = None, *, redis_url: str | None = None):
    """Runs ``background=True`` callbacks (long jobs with progress and cancel) in worker processes.

    With ``redis_url`` (default: ``CANDOR_REDIS_URL`` of the current settings) jobs go to Celery
    workers through that Redis (Dash's ``CeleryManager``; start them with
    ``celery -A app.serve.celery_worker:celery worker``); otherwise each job forks from the server and results are
    cached on disk under ``<cache_dir>/background`` (``CANDOR_CACHE_DIR``, default ``.cache``) as JSON
    only (:class:`workspace.json_cache.JSONOnlyDisk`, as the Celery path's JSON: a pickled row is never read).
    Either way results are keyed by this launch and by the current selection (model, data, class),
    so neither a restart nor a switch to another model or class ever serves stale results (STYLE B3
    rule 4), and the job limits of :mod:`app.serve.jobs` apply.
    """
    redis_url = _settings.current().redis_url if redis_url is None else redis_url
    if redis_url:
        return _CeleryJobs(celery_app(redis_url), cache_by=[_cache_key], expire=3600)
    folder = Path(_settings.current().cache_dir if cache_dir is None else cache_dir) / "background"
    return _ForkAfterWarmManager(json_cache(folder, _DashJSONDisk), cache_by=[_cache_key], expire=3600)


def _cache_key() -> str:
    return f"{LAUNCH_UID}-{selection.current().generation}"


def create_app(workspace: Workspace | None = None, *, warm: bool | str | None = None,
               settings: Settings | None = None, defer_load: Callable[[], None] | None = None) -> dash.Dash:
    """Create the Dash app over ``workspace`` (default: the one ``settings`` name).

    Parameters
    ----------
    workspace : Workspace, optional
    warm : bool or "sync", optional
        ``True``: compute global SHAP, the surrogate and load the transformer
        in a background thread right away, so that first clicks are fast.
        ``"sync"``: do it before returning (gunicorn ``--preload``, so forked
        workers inherit the results). Default: ``settings.warm`` (``CANDOR_WARM``).
    settings : Settings, optional
        Given (``python -m app``, gunicorn's ``server``): installed for the whole process
        (:func:`workspace.settings.current`). None: read from the environment for this call only,
        and modules keep reading the environment (tests that set variables per test).
    defer_load : callable, optional
        Given (``python -m app``): the workspace loads on a thread while the app already serves its HTML and
        scripts (:mod:`app.serve.deferred_load`), and this is called once it has loaded; a load that fails
        ends the process in one line. None: it loads before this returns.

    Raises
    ------
    CandorError
        If a setting has a bad value (named) or the named files cannot be loaded.
    """
    defer_torch()  # loading a scikit-learn model must not import torch (issue 14); pages that need it do
    limits.limit_heap_arenas()  # request threads share two malloc arenas (resident memory, issue 14)
    limits.map_large_blocks()  # and a freed array of 1 MiB or more goes back to the system at once (issue 23)
    if settings is not None:
        _settings.install(settings)
    settings = settings or Settings.from_env()
    if warm is None:
        warm = settings.warm
    chosen = Selection.from_settings(settings) if workspace is None else Selection(generation="explicit")
    selection.start(chosen, warm=warm)
    load = functools.partial(_load, workspace, chosen, settings, warm)
    if defer_load is None:
        load()
    app = dash.Dash(
        DASH_NAME, use_pages=True, pages_folder=str(ROOT / "app" / "pages"), assets_folder=str(ROOT / "assets"),
        title="Candor", update_title=None,
        # pages lay out what applies to the model (a regressor's Persuasive page is one sentence), so
        # a page's components may be absent from every layout: no start-up validation layout
        suppress_callback_exceptions=True, background_callback_manager=background_manager(settings.cache_dir, redis_url=settings.redis_url or ""),
    )
    from .. import callbacks  # noqa: F401  (registers every page's callbacks)

    services.join_late(compute=warm == "sync")  # the pages' own warm values (the Descriptive page's stored rows)
    from ..shell.layout import shell

    app.layout = shell
    app.index_string = app.index_string.replace("<html>", '<html lang="en">', 1)  # WCAG 3.1.1: the page's language
    # request bodies over one upload (as base64 in Dash's JSON) are refused before they are read (413)
    app.server.config["MAX_CONTENT_LENGTH"] = limits.max_request_bytes()
    app.server.register_error_handler(413, _too_large)
    limits.apply_memory_ceiling()
    from . import access, callback_inputs
    from .startup import setup_dash_now

    setup_dash_now(app)  # before any request: Dash's lazy first-request set-up races in a fresh worker
    callback_inputs.install(app)  # every callback's inputs checked; a forged one changes nothing, never a 500
    access.install(app)  # Host allowlist, cross-site POSTs, login and roles, before every other hook
    app.server.before_request(services.first_request.set)
    app.server.before_request(selection.sync)  # another worker may have switched model, data or class
    trim = _IdleTrim()
    app.server.before_request(trim.begin)  # the process's one count of requests in flight (app/services/_requests.py):
    app.server.teardown_request(trim.end)  # the idle trim waits for none, the warm-up's row loops pause meanwhile
    threading.Thread(target=trim.run, name="candor-idle-trim", daemon=True).start()
    app.server.add_url_rule("/_candor/ready", "candor_ready", _ready)
    app.server.add_url_rule("/_candor/workspace", "candor_workspace", _workspace_info)
    from . import headers

    headers.install(app)  # CSP (the clientside callbacks hashed now), nosniff, referrer, frames; the proxy's hops
    app.server.wsgi_app = fork_gate.guard_requests(app.server.wsgi_app)  # outermost: the whole request holds it
    if defer_load is not None:  # the HTML and scripts served at once; what needs the workspace waits for it
        gate = app.server.wsgi_app = deferred_load.LoadGate(app.server.wsgi_app)
        deferred_load.start(gate, load, defer_load)
    return app


def _load(workspace: Workspace | None, chosen: Selection, settings: Settings, warm) -> None:
    """Load the workspace (``workspace``, or the files ``chosen`` names), check its store and the study files, and
    install it for every service (warm-up started as ``warm`` says)."""
    ws = workspace or chosen.load()
    limits.one_openmp_thread()  # one OpenMP thread a process, set once the model's libraries are loaded
    from store.read import open_for  # a store (--store, CANDOR_STORE) is checked before anything is served

    services.use_built_store(open_for(settings, ws) if settings.store else None)
    # every model call of this server under CANDOR_MODEL_TIMEOUT_S, a model that raises one line on the page (never
    # a 500): the installed workspace's adapter carries these limits (and every workspace installed after it)
    services.init(ws, warm=warm, call_limits=limits.model_call_limits())
    limits.trim_heap()  # the table reader's freed buffers (the warm-up trims after each of its steps)
    from .study_check import check_study_files

    check_study_files()  # a study file whose declared truth the data contradict is refused before serving
    # the study database is opened (and migrated) on first use by study mode (study.runtime.engine),
    # so a launch that never runs a study creates no database file


class _IdleTrim:
    """Give freed memory back (:func:`limits.trim_heap`) when the server has been idle for ``IDLE_S`` seconds.

    ``malloc_trim`` takes 10-40 ms on a few hundred MB of heap and holds malloc's locks meanwhile, so it never
    runs inside a request (Flask's teardown runs before the response is written): a daemon thread runs it once
    no request has been in flight for ``IDLE_S`` seconds since the last one ended.
    """

    IDLE_S = 2.0

    def __init__(self):
        self.last_end = 0.0
        self.dirty = threading.Event()

    def begin(self) -> None:
        services.request_began()

    def end(self, _exc=None) -> None:
        self.last_end = time.monotonic()  # before the count falls: the idle thread never sees 0 with an old end
        services.request_ended()
        self.dirty.set()

    def run(self) -> None:
        while True:
            self.dirty.wait()
            while True:
                time.sleep(self.IDLE_S / 4)
                idle = not services.serving() and time.monotonic() - self.last_end >= self.IDLE_S
                if idle:
                    break
            self.dirty.clear()
            deferred_load.collect_start_garbage()  # once: the start's garbage (python -m app held the collector)
            limits.trim_heap()


def _too_large(_err):
    """413: the request body is over the upload limit (the browser's upload boxes refuse such files first)."""
    return limits.too_large_message() + "\n", 413, {"Content-Type": "text/plain; charset=utf-8"}


def _workspace_info():
    """What this process explains (JSON): for operators and tests of multi-worker deployments.

    The worker's process id and the selection's internal generation only for the researcher role (the local
    operator has it): nothing internal reaches a viewer or an analyst (SECURITY.md, issue 27).
    """
    from .access import has_role

    ws, chosen = services.workspace(), selection.current()
    info = {"name": ws.name, "task": ws.task, "classes": list(ws.classes), "ready": services.warm_done.is_set()}
    if has_role("researcher"):
        info.update(pid=os.getpid(), generation=chosen.generation)
    return info


def _ready():
    """Readiness probe: 200 once global SHAP, the surrogates and the models are computed, else 503."""
    return ("ready\n", 200) if services.warm_done.is_set() else ("warming up\n", 503)


def get_app() -> dash.Dash:
    """The process-wide app, created on first use."""
    global _app
    if _app is None:
        _app = create_app(settings=Settings.from_env())
    return _app


def __getattr__(name: str):
    if name == "server":
        return get_app().server
    raise AttributeError(name)
