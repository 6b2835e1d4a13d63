"""How many background jobs may run at once: ``CANDOR_MAX_JOBS`` on the server, ``CANDOR_MAX_JOBS_PER_USER`` each.

A background callback (``background=True``) forks a process per job (Dash's DiskcacheManager) or
sends it to a Celery worker (Dash's CeleryManager, when ``CANDOR_REDIS_URL`` is set).
:class:`LimitedJobs`, mixed into the DiskcacheManager, counts the live jobs of every worker of the
server in the manager's cache (a transaction, so two workers cannot both take the last slot);
:class:`CeleryLimitedJobs` counts them in Redis under a Redis lock. Either refuses a job over either
limit before anything is forked or queued: the callback's ``children`` outputs (its status line) show
the one-line reason and its other outputs are left as they are. A refused job is never queued.

"User" is ``flask.g.candor_user`` when a login sets it, else the client's address (behind a proxy that
does not pass the client's address, all users count as one).
"""
from __future__ import annotations

import json
import logging
import time

from workspace import limits

log = logging.getLogger(__name__)
REGISTRY = "candor-running-jobs"
REFUSED = "candor_job_refused"
REFUSED_JOB = 0  # the job id Dash gets for a refused job: nothing runs under it


def current_user() -> str:
    """Who is asking: the logged-in user name if a login provides one, else the client's address."""
    import flask

    user = getattr(flask.g, "candor_user", None) if flask.has_app_context() else None
    if user:
        return f"user:{getattr(user, 'name', user)}"
    return f"addr:{flask.request.remote_addr}" if flask.has_request_context() else "local"


def _alive(pid: int) -> bool:
    import psutil

    if pid < 0:  # a slot reserved while its job forks (see LimitedJobs.call_job_fn)
        return time.time_ns() + pid < 600 * 10**9
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except (psutil.NoSuchProcess, psutil.AccessDenied, ValueError):
        return False


def refusal(user: str, running: dict[int, str]) -> str | None:
    """Why a new job of ``user`` is refused given the ``running`` jobs (pid -> user), or None if it may start."""
    total, per_user = int(limits.setting("CANDOR_MAX_JOBS")), int(limits.setting("CANDOR_MAX_JOBS_PER_USER"))
    mine = sum(u == user for u in running.values())
    if mine >= per_user:
        return (f"you already have {mine} background job(s) running, the most one user may run at once "
                f"(CANDOR_MAX_JOBS_PER_USER={per_user}); wait for one to finish or cancel it, then try again")
    if len(running) >= total:
        return (f"the server is already running {len(running)} background jobs, its limit (CANDOR_MAX_JOBS={total}); "
                "try again when one has finished")
    return None


def _refusal_outputs(message: str):
    """The callback's outputs for a refused job: an alert in each ``children`` output, the rest unchanged."""
    from dash import callback_context, no_update

    from ..views.components import error_alert

    outputs = callback_context.outputs_list
    if isinstance(outputs, dict):
        return error_alert(message) if outputs.get("property") == "children" else no_update
    return [error_alert(message) if o.get("property") == "children" else no_update for o in outputs]


class LimitedJobs:
    """Mixin for ``dash.DiskcacheManager``: refuse a job over the limits instead of forking it.

    The registry of live jobs (job id -> user) and refusals live in the manager's diskcache; a
    subclass for another manager overrides ``_update``, ``_alive``, ``_set_refusal``, ``_refusal``
    and ``_clear_refusal`` (:class:`CeleryLimitedJobs`).
    """

    def _update(self, change) -> dict:
        """Apply ``change`` to the registry of live jobs (pid -> user) in one cache transaction; returns it."""
        with self.handle.transact():
            stored = self.handle.get(REGISTRY) or {}  # JSON: the pids come back as text
            running = {int(pid): u for pid, u in stored.items() if self._alive(pid)}
            change(running)
            self.handle.set(REGISTRY, running)
        return running

    def _alive(self, job) -> bool:
        return _alive(int(job))

    def _set_refusal(self, key, why: str) -> None:
        self.handle.set(key, {REFUSED: why}, expire=600)

    def _refusal(self, key) -> str | None:
        result = self.handle.get(key, self.UNDEFINED)
        return result[REFUSED] if isinstance(result, dict) and REFUSED in result else None

    def _clear_refusal(self, key) -> None:
        self.handle.delete(key)

    def call_job_fn(self, key, job_fn, args, context):
        user, slot, why = current_user(), -time.time_ns(), None

        def reserve(running):
            nonlocal why
            why = refusal(user, running)
            if why is None:
                running[slot] = user  # a placeholder until the fork gives a pid (or Celery a task id)

        self._update(reserve)
        if why is not None:
            log.warning("candor: background job refused for %s: %s", user, why)
            self._set_refusal(key, why)
            return REFUSED_JOB
        self._clear_refusal(key)  # an earlier refusal of the same job is not its result
        job = None
        try:
            job = super().call_job_fn(key, job_fn, args, context)
        finally:
            def settle(running):
                running.pop(slot, None)
                if job:
                    running[job] = user

            self._update(settle)
        return job

    def get_result(self, key, job):
        why = self._refusal(key)
        if why is not None:
            self.clear_cache_entry(key)
            return _refusal_outputs(why)
        return super().get_result(key, job)

    def job_running(self, job):
        return not _refused(job) and super().job_running(job)

    def terminate_job(self, job):
        if not _refused(job):
            super().terminate_job(job)


def _refused(job) -> bool:
    """Whether ``job`` (as Dash hands it back: a pid, a Celery task id, or their text) names no running job."""
    return job is None or str(job) in ("", str(REFUSED_JOB))


RUNNING_STATES = ("PENDING", "RECEIVED", "STARTED", "RETRY", "PROGRESS")
LOST_AFTER_S = 6 * 3600  # a task still PENDING after this long is taken as lost (Celery reports unknown ids as PENDING)
PENDING_GRACE_S = 120
"""How long a PENDING task holds its slot when no Celery worker answers a ping: with no worker nothing will
ever run it, and two users' queued exports held every slot for ``LOST_AFTER_S`` (6 h) (attack F10)."""


class CeleryLimitedJobs(LimitedJobs):
    """Mixin for ``dash.CeleryManager``: the job limits, counted in the Celery app's Redis.

    The registry is one JSON value in Redis (task id -> [user, start time]), changed under a Redis
    lock, so the web workers of several servers share one count. A task is live while Celery reports
    it pending, received, started or retrying (and a pending one for at most ``LOST_AFTER_S``).
    """

    def _redis(self):
        return self.handle.backend.client

    def _update(self, change) -> dict:
        client = self._redis()
        with client.lock(f"{REGISTRY}-lock", timeout=30, blocking_timeout=30):
            stored = json.loads(client.get(REGISTRY) or "{}")
            now = time.time()
            running = {int(job) if job.lstrip("-").isdigit() else job: user
                       for job, (user, started) in stored.items() if self._celery_alive(job, started, now)}
            change(running)
            started = {job: s for job, (_, s) in stored.items()}
            client.set(REGISTRY, json.dumps({str(job): [user, started.get(str(job), now)]
                                             for job, user in running.items()}))
        return running

    def _celery_alive(self, job: str, started: float, now: float) -> bool:
        if job.lstrip("-").isdigit():  # a placeholder slot while the task is being queued
            return _alive(int(job))
        state = self.handle.AsyncResult(job).state
        if state != "PENDING":
            return state in RUNNING_STATES
        return now - started < (LOST_AFTER_S if self._workers_seen(now) else PENDING_GRACE_S)

    def _workers_seen(self, now: float) -> bool:
        """Whether a Celery worker answered a ping in the last 30 s (asked at most every 30 s, 0.5 s wait)."""
        if now - getattr(self, "_seen_at", -1e9) > 30:
            try:
                self._seen = bool(self.handle.control.ping(timeout=0.5))
            except Exception:  # noqa: BLE001 - a broker error means no worker can be reached either
                self._seen = False
            self._seen_at = now
        return self._seen

    def _set_refusal(self, key, why: str) -> None:
        self._redis().set(key, json.dumps({REFUSED: why}), ex=600)

    def _refusal(self, key) -> str | None:
        raw = self._redis().get(key)
        try:
            result = json.loads(raw) if raw else None
        except ValueError:
            return None
        return result[REFUSED] if isinstance(result, dict) and REFUSED in result else None

    def _clear_refusal(self, key) -> None:
        self._redis().delete(key)


def celery_app(redis_url: str):
    """The Celery app of background jobs: ``redis_url`` is both broker and result store.

    Workers run it with ``celery -A app.serve.celery_worker:celery worker`` (``app/serve/celery_worker.py`` builds the same
    Dash app, so its background callbacks are registered as the same Celery tasks).
    """
    from celery import Celery

    app = Celery("candor", broker=redis_url, backend=redis_url)
    app.conf.update(task_track_started=True, worker_prefetch_multiplier=1, result_expires=3600,
                    broker_connection_retry_on_startup=True, task_serializer="json", result_serializer="json",
                    accept_content=["json"])
    return app
