"""How many background jobs may run at once: ``CANDOR_MAX_JOBS`` on the server, ``CANDOR_MAX_JOBS_PER_USER`` each.

A background callback (``background=True``) forks a process per job. :class:`LimitedJobs`, mixed into
the app's DiskcacheManager, counts the live jobs of every worker of the server in the manager's
cache (a transaction, so two workers cannot both take the last slot) and refuses a job over either
limit before anything is forked: the callback's ``children`` outputs (its status line) show the
one-line reason and its other outputs are left as they are. A refused job is never queued.

"User" is ``flask.g.candor_user`` when a login sets it, else the client's address (behind a proxy that
does not pass the client's address, all users count as one).
"""
from __future__ import annotations

import logging
import time

from workspace import limits

log = logging.getLogger(__name__)
REGISTRY = "candor-running-jobs"
REFUSED = "candor_job_refused"


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

    from .components import error_alert

    outputs = callback_context.outputs_list
    if isinstance(outputs, dict):
        return error_alert(message) if outputs.get("property") == "children" else no_update
    return [error_alert(message) if o.get("property") == "children" else no_update for o in outputs]


class LimitedJobs:
    """Mixin for ``dash.DiskcacheManager``: refuse a job over the limits instead of forking it."""

    def _update(self, change) -> dict:
        """Apply ``change`` to the registry of live jobs (pid -> user) in one cache transaction; returns it."""
        with self.handle.transact():
            running = {pid: u for pid, u in (self.handle.get(REGISTRY) or {}).items() if _alive(pid)}
            change(running)
            self.handle.set(REGISTRY, running)
        return running

    def call_job_fn(self, key, job_fn, args, context):
        user, slot, why = current_user(), -time.time_ns(), None

        def reserve(running):
            nonlocal why
            why = refusal(user, running)
            if why is None:
                running[slot] = user  # a placeholder until the fork gives a pid

        self._update(reserve)
        if why is not None:
            log.warning("candor: background job refused for %s: %s", user, why)
            self.handle.set(key, {REFUSED: why}, expire=600)
            return 0
        self.handle.delete(key)  # an earlier refusal of the same job is not its result
        pid = None
        try:
            pid = super().call_job_fn(key, job_fn, args, context)
        finally:
            def settle(running):
                running.pop(slot, None)
                if pid:
                    running[int(pid)] = user

            self._update(settle)
        return pid

    def get_result(self, key, job):
        result = self.handle.get(key, self.UNDEFINED)
        if isinstance(result, dict) and REFUSED in result:
            self.clear_cache_entry(key)
            return _refusal_outputs(result[REFUSED])
        return super().get_result(key, job)

    def job_running(self, job):
        return bool(job) and int(job) > 0 and super().job_running(job)

    def terminate_job(self, job):
        if job is not None and int(job) > 0:
            super().terminate_job(job)
