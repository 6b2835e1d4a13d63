"""Background jobs on Celery and Redis (CANDOR_REDIS_URL): a real worker runs a real job, limits still hold.

Needs a Redis server: ``scripts/test`` starts Debian's ``redis-server`` and sets CANDOR_TEST_REDIS_URL.
"""
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

REDIS_URL = os.environ.get("CANDOR_TEST_REDIS_URL")
ROOT = Path(__file__).resolve().parents[2]
needs_redis = pytest.mark.skipif(not REDIS_URL, reason="CANDOR_TEST_REDIS_URL not set (scripts/test starts a Redis)")


def test_the_redis_url_is_read_in_settings_and_a_bad_one_is_refused_without_its_password():
    from workspace.errors import CandorError
    from workspace.settings import Settings

    url = "redis://:s3cret@10.0.0.5:6379/1"
    assert Settings.from_env({"CANDOR_REDIS_URL": url}).redis_url == url
    assert Settings.from_env({}).redis_url is None
    assert "s3cret" not in repr(Settings.from_env({"CANDOR_REDIS_URL": url}))
    with pytest.raises(CandorError, match="CANDOR_REDIS_URL must start with redis://") as err:
        Settings.from_env({"CANDOR_REDIS_URL": "http://:s3cret@10.0.0.5:6379"})
    assert "s3cret" not in str(err.value)


def _post(client, n, handles=None):
    body = {"output": "out.children", "outputs": {"id": "out", "property": "children"},
            "inputs": [{"id": "n", "property": "value", "value": n}], "changedPropIds": ["n.value"], "state": []}
    query = "" if handles is None else f"?cacheKey={handles['cacheKey']}&job={handles['job']}"
    response = client.post("/_dash-update-component" + query, json=body,
                           environ_base={"REMOTE_ADDR": "203.0.113.7"})
    assert response.status_code in (200, 204), response.data[:300]
    return json.loads(response.data) if response.status_code == 200 else {}


def _run(client, n, timeout=60):
    """Start the job for ``n`` and poll it as the browser does until it answers; (handles, answer)."""
    handles = _post(client, n)
    assert set(handles) >= {"cacheKey", "job"}, handles
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        answer = _post(client, n, handles)
        if "response" in answer:
            return handles, answer["response"]["out"]["children"]
        time.sleep(0.2)
    raise AssertionError(f"job for {n} gave no answer in {timeout} s")


@pytest.fixture(scope="module")
def celery_setup():
    import redis

    redis.Redis.from_url(REDIS_URL).flushdb()  # the throwaway test server only
    env = dict(os.environ, CANDOR_REDIS_URL=REDIS_URL, PYTHONPATH=str(ROOT))
    worker = subprocess.Popen([sys.executable, "-m", "celery", "-A", "tests.app.celery_job_app:celery", "worker",
                               "--concurrency=2", "--pool=prefork", "--loglevel=WARNING", "--without-gossip",
                               "--without-mingle", "--without-heartbeat"],
                              cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    os.environ["CANDOR_REDIS_URL"] = REDIS_URL  # read by the test app's module at import, as by the worker
    try:
        from tests.app import celery_job_app
    finally:
        os.environ.pop("CANDOR_REDIS_URL")
    try:
        yield celery_job_app, worker
    finally:
        worker.terminate()
        try:
            worker.wait(20)
        except subprocess.TimeoutExpired:
            worker.kill()
            worker.wait()


@needs_redis
def test_settings_choose_celery_on_redis_when_the_url_is_set(monkeypatch, tmp_path):
    import dash

    from app.serve.server import background_manager
    from workspace import settings

    monkeypatch.setattr(settings, "_installed", None)
    monkeypatch.setenv("CANDOR_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("CANDOR_REDIS_URL", REDIS_URL)
    manager = background_manager()
    assert isinstance(manager, dash.CeleryManager)
    assert manager.handle.conf.broker_url == REDIS_URL
    monkeypatch.delenv("CANDOR_REDIS_URL")
    assert isinstance(background_manager(), dash.DiskcacheManager)


@needs_redis
def test_a_celery_worker_runs_the_job_and_the_per_user_limit_refuses_the_next(celery_setup, monkeypatch):
    from workspace import settings

    module, worker = celery_setup
    monkeypatch.setattr(settings, "_installed", None)
    monkeypatch.setenv("CANDOR_MAX_JOBS_PER_USER", "1")
    client = module.app.server.test_client()

    _, answer = _run(client, 7)
    assert answer.startswith("49 computed by pid ")
    worker_pid = int(answer.rsplit(" ", 1)[1])
    assert worker_pid != os.getpid() and worker_pid != worker.pid  # a pool process of the Celery worker

    slow = _post(client, -30)  # holds this user's only slot
    job_id = slow["job"].rsplit("~", 1)[0]
    deadline = time.monotonic() + 30
    while module.manager.handle.AsyncResult(job_id).state != "STARTED" and time.monotonic() < deadline:
        time.sleep(0.1)
    assert module.manager.handle.AsyncResult(job_id).state == "STARTED"
    try:
        _, refused = _run(client, 5)
        text = json.dumps(refused)
        assert "you already have 1 background job(s) running" in text and "CANDOR_MAX_JOBS_PER_USER=1" in text
        assert "25 computed" not in text
    finally:
        module.manager.terminate_job(job_id)
    deadline = time.monotonic() + 30
    while module.manager.handle.AsyncResult(job_id).state not in ("REVOKED", "FAILURE") \
            and time.monotonic() < deadline:
        time.sleep(0.1)
    _, again = _run(client, 6)  # the cancelled job no longer counts
    assert again.startswith("36 computed by pid ")
    assert worker.poll() is None, worker.stderr.read().decode()[-2000:] if worker.poll() is not None else ""


@needs_redis
def test_a_pending_task_holds_its_slot_briefly_when_no_worker_answers(monkeypatch, tmp_path):
    """Attack F10: with Redis up and no worker, two queued exports held a user's slots for 6 h (Celery calls
    a task nobody took PENDING). Without a worker a PENDING task now counts for ``PENDING_GRACE_S``."""
    import time as _time

    from app.serve import jobs
    from app.serve.server import background_manager
    from workspace import settings

    monkeypatch.setattr(settings, "_installed", None)
    monkeypatch.setenv("CANDOR_CACHE_DIR", str(tmp_path))
    manager = background_manager(redis_url=REDIS_URL)
    now = _time.time()
    never_queued = "0c5e1e55-0000-4000-8000-00000000f10a"  # nobody took it, so Celery says PENDING for ever
    assert manager.handle.AsyncResult(never_queued).state == "PENDING"
    # no worker answers the ping (this module's own worker may still be up: the answer is set, not asked)
    monkeypatch.setattr(manager.handle.control, "ping", lambda timeout=1.0: [])
    assert manager._celery_alive(never_queued, now - 10, now)  # just queued: holds its slot
    assert not manager._celery_alive(never_queued, now - jobs.PENDING_GRACE_S - 1, now)  # released after 2 min
    monkeypatch.setattr(manager.handle.control, "ping", lambda timeout=1.0: [{"celery@w": {"ok": "pong"}}])
    manager._seen_at = -1e9  # ask again
    assert manager._celery_alive(never_queued, now - jobs.PENDING_GRACE_S - 1, now)  # a worker will take it
