"""The Procfile's gunicorn serves its first requests, and serves ``/`` while a slow model is busy (issue 11,
kinds 10 and 11, the serving parts).

Both tests start the Procfile's own ``web`` command (bound to 127.0.0.1 instead of 0.0.0.0). They FAIL on
main (53d365e): a fresh worker answered 500 to concurrent first requests (Dash set itself up on the first
request and the others raced past it), and with ``--workers 2 --threads 4`` eight calls to a slow model
left every other user, even ``GET /``, waiting for many seconds.
"""
from __future__ import annotations

import contextlib
import json
import os
import shlex
import signal
import socket
import subprocess
import sys
import threading
import time
import weakref
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pandas as pd
import psutil
import pytest
import requests

from tests.e2e.serving import ROOT, free_port

ROW_OUTPUT = "descriptive-shap-waterfall.figure"
"""The Descriptive page's row callback (one request per row change): found by this output in
``/_dash-dependencies``, so the test sends what the page sends whatever its other outputs are."""
# what a page load, and the open tabs of users whose worker was just replaced, send first
FIRST_PATHS = ["/_dash-layout", "/_dash-dependencies", "/", "/descriptive"] * 2 + ["POST row"] * 8


def row_request(base: str, row: int) -> dict:
    """The body of the Descriptive page's row callback for ``row``, built from the server's dependencies."""
    deps = requests.get(base + "/_dash-dependencies", timeout=120).json()
    dep = next(d for d in deps if ROW_OUTPUT in d["output"] and not d.get("clientside_function"))
    outs = [o.rsplit(".", 1) for o in dep["output"].strip(".").split("...")]
    values = {("row-input", "value"): row, ("descriptive-shap-players", "value"): "children"}
    inputs = [{**i, "value": values.get((i["id"], i["property"]))} for i in dep["inputs"]]
    state = [{**i, "value": values.get((i["id"], i["property"]))} for i in dep.get("state", [])]
    outs = [(json.loads(i) if i.startswith("{") else i, p) for i, p in outs]  # a pattern-matching id is JSON
    return {"output": dep["output"], "outputs": [{"id": i, "property": p} for i, p in outs], "inputs": inputs,
            "changedPropIds": ["row-input.value"], "state": state}


def procfile_web(port: int) -> tuple[list[str], dict]:
    """The Procfile's ``web`` command and its inline variables, bound to 127.0.0.1:``port``."""
    line = next(ln for ln in (ROOT / "Procfile").read_text().splitlines() if ln.startswith("web:"))
    words = shlex.split(line[len("web:"):].replace("${PORT:-8050}", str(port)))
    env = {}
    while "=" in words[0] and not words[0].startswith("-"):
        name, _, value = words.pop(0).partition("=")
        env[name] = value
    assert words[0] == "gunicorn"
    words = [sys.executable, "-m", "gunicorn", *words[1:]]
    words[words.index("--bind") + 1] = f"127.0.0.1:{port}"
    return words, env


@contextlib.contextmanager
def procfile_server(env: dict, log_path: Path, timeout: float = 300):
    """Start the Procfile's gunicorn; yield (base URL, process) as soon as its socket accepts (no request sent)."""
    port = free_port()
    cmd, inline = procfile_web(port)
    with open(log_path, "w") as log:
        proc = subprocess.Popen(cmd, cwd=ROOT, env={**os.environ, "PYTHONUNBUFFERED": "1", **inline, **env},
                                stdout=log, stderr=subprocess.STDOUT)
        try:
            deadline = time.time() + timeout
            while time.time() < deadline:
                with socket.socket() as s:
                    if s.connect_ex(("127.0.0.1", port)) == 0:
                        break
                if proc.poll() is not None:
                    raise RuntimeError(f"gunicorn exited: {log_path.read_text()[-3000:]}")
                time.sleep(0.05)
            yield f"http://127.0.0.1:{port}", proc
        finally:
            proc.terminate()
            proc.wait(timeout=60)


def _fire_together(base: str, paths: list[str]) -> list[int]:
    """GET every path at the same moment (a barrier), as a page load's first requests do."""
    barrier = threading.Barrier(len(paths))
    body = row_request(base, 3) if any(p.startswith("POST") for p in paths) else None

    def get(path):
        barrier.wait()
        if path.startswith("POST"):
            return requests.post(base + "/_dash-update-component", json=body, timeout=300).status_code
        return requests.get(base + path, timeout=120).status_code

    with ThreadPoolExecutor(len(paths)) as pool:
        return list(pool.map(get, paths))


def _workers(proc) -> set[int]:
    return {c.pid for c in psutil.Process(proc.pid).children()}


def test_fresh_workers_answer_concurrent_first_requests(tmp_path):
    """Attack (availability): every restart or respawn of a worker made the first users' page loads and callbacks
    fail with 500. Sixteen concurrent first requests to fresh workers, at start and after a reload (SIGHUP), are
    all 200."""
    env = {"CANDOR_SESSION_DB": str(tmp_path / "sessions.sqlite3"), "CANDOR_STATE_DIR": str(tmp_path / "state")}
    with procfile_server(env, tmp_path / "gunicorn.log") as (base, proc):
        assert _fire_together(base, FIRST_PATHS) == [200] * len(FIRST_PATHS)
        old = _workers(proc)
        os.kill(proc.pid, signal.SIGHUP)  # gunicorn replaces every worker
        deadline = time.time() + 120
        while time.time() < deadline:
            now = _workers(proc)
            if now and not now & old and len(now) == len(old):
                break
            time.sleep(0.1)
        assert not _workers(proc) & old, "gunicorn did not replace its workers"
        assert _fire_together(base, FIRST_PATHS) == [200] * len(FIRST_PATHS)


@pytest.fixture(scope="module")
def slow_model(tmp_path_factory):
    """A real slow model: k-nearest neighbours (brute force) over 20 000 rows; one row's SHAP and LIME take
    seconds of CPU, as a large user model would (SHAP and LIME now sample until their standard errors meet
    a tolerance, so 20 000 rows are as slow per row as 60 000 were with fixed samples)."""
    import skops.io as sio
    from sklearn.neighbors import KNeighborsClassifier

    folder = tmp_path_factory.mktemp("slow")
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(20_000, 12)), columns=[f"f{i}" for i in range(12)])
    y = (X.f0 + X.f1 > 0).astype(int)
    sio.dump(KNeighborsClassifier(n_neighbors=15, algorithm="brute").fit(X, y), folder / "knn.skops")
    X.assign(label=y).to_csv(folder / "knn.csv", index=False)
    return folder


SLOW = 12


def _explain_row(base: str, row: int) -> int:
    return requests.post(base + "/_dash-update-component", json=row_request(base, row), timeout=600).status_code


def test_slow_model_does_not_stall_other_users(tmp_path, slow_model):
    """Attack (availability): a few users, or one script, explaining rows of a slow model kept every request
    thread busy, so nobody else got even ``/`` (28 s on main). With 12 slow explanations in flight (more than
    the 8 request threads the Procfile had), ``GET /`` and ``/_dash-layout`` are answered within 5 s."""
    env = {"CANDOR_SESSION_DB": str(tmp_path / "sessions.sqlite3"), "CANDOR_STATE_DIR": str(tmp_path / "state"),
           "CANDOR_MODEL": str(slow_model / "knn.skops"), "CANDOR_DATA": str(slow_model / "knn.csv"),
           "CANDOR_TARGET": "label", "CANDOR_WARM": "0"}  # warm-up is not what is measured here
    with procfile_server(env, tmp_path / "gunicorn.log") as (base, _proc):
        deadline = time.time() + 120
        while requests.get(base + "/_dash-layout", timeout=120).status_code != 200 and time.time() < deadline:
            time.sleep(0.2)
        with ThreadPoolExecutor(SLOW) as pool:
            slow = [pool.submit(_explain_row, base, row) for row in range(10, 10 + SLOW)]
            time.sleep(1.5)  # the explanations are being computed now
            took = {}
            for path in ("/", "/_dash-layout"):
                t0 = time.time()
                assert requests.get(base + path, timeout=120).status_code == 200
                took[path] = time.time() - t0
            in_flight = sum(not f.done() for f in slow)
            print(f"answered while {in_flight} slow explanations were in flight: {took}")
            assert max(took.values()) < 5.0, took
            assert in_flight >= 8, "the explanations were not slow enough to test anything"
            assert [f.result() for f in slow] == [200] * SLOW


def test_every_app_in_a_process_serves_the_clientside_callbacks():
    """Setting Dash up eagerly moved the clientside callbacks' code into the first app only; a second app
    in the same process served pages whose clientside callbacks all failed ("reading 'apply'")."""
    from app.serve.server import create_app

    pages = [create_app(warm=False).server.test_client().get("/").data for _ in range(2)]
    counts = [p.count(b"_dashprivate_clientside_funcs") for p in pages]
    assert counts[0] > 0 and counts[0] == counts[1]


def test_gunicorn_warms_before_forking_unless_warming_is_off(monkeypatch):
    """A new user served with gunicorn without CANDOR_WARM=sync and /_candor/ready answered 503 for 150 s and
    more: the warm-up thread ran in the preloading master, which a forked worker does not inherit."""
    import runpy

    for given, want in ((None, "sync"), ("1", "sync"), ("sync", "sync"), ("0", "0")):
        if given is None:
            monkeypatch.delenv("CANDOR_WARM", raising=False)
        else:
            monkeypatch.setenv("CANDOR_WARM", given)
        config = runpy.run_path(str(ROOT / "gunicorn.conf.py"))
        assert config["preload_app"] is True and os.environ["CANDOR_WARM"] == want, given


class _Cycle:
    def __init__(self):
        self.me = self


def test_gunicorn_freezes_the_preloaded_app_before_forking():
    """The master's ``when_ready`` (gunicorn calls it once the preloaded app is loaded, before the workers fork)
    collects and freezes: the workers' collector then skips the start's objects."""
    import gc
    import runpy

    config = runpy.run_path(str(ROOT / "gunicorn.conf.py"))
    probe = weakref.ref(_Cycle())  # garbage only a collection frees
    try:
        config["when_ready"](None)
        assert probe() is None and gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()
