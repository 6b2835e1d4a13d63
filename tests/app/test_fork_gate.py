"""A background job forks only while no other request is in flight (``app.serve.fork_gate``).

CI failed on ``tests/e2e/test_job_cancel.py``: a "Fit MUSE" job forked while the page's other
background callback polled its progress (a diskcache read, SQLite with the interpreter released), and
the copy hung at its first cache write. Oracles: a real fork and a real diskcache, with the hang seen
as the child killed by its alarm; the gate's order of events recorded by threads.
"""
from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import diskcache
import pytest

from app.serve.fork_gate import ForkGate, guard_requests

ROOT = Path(__file__).resolve().parents[2]

CHILD_ALARM_S = 2


def _fork_and_write(cache: diskcache.Cache, n: int) -> bool:
    """Fork; the child writes to ``cache`` as a job's first progress report does. Whether it hung."""
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        signal.alarm(CHILD_ALARM_S)
        cache.set("progress", n)
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    return os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGALRM


def _polls(cache, gate, stop):
    """A request thread polling a job's progress, as Dash's renderer does, inside the gate when given one."""
    while not stop.is_set():
        if gate is None:
            cache.get("k7")
        else:
            with gate.request():
                cache.get("k7")


def _forks_beside_polls(folder: str, n_forks: int) -> int:
    """How many of ``n_forks`` forks hung, each made inside the gate beside three threads polling a diskcache."""
    cache = diskcache.Cache(str(Path(folder) / "jobs"))
    for i in range(50):
        cache.set(f"k{i}", "x" * 1000)
    gate, stop = ForkGate(), threading.Event()
    threads = [threading.Thread(target=_polls, args=(cache, gate, stop), daemon=True) for _ in range(3)]
    for t in threads:
        t.start()
    hung = 0
    try:
        for n in range(n_forks):
            with gate.forking(timeout=5) as quiet:
                assert quiet
                hung += _fork_and_write(cache, n)
    finally:
        stop.set()
        for t in threads:
            t.join()
    return hung


FORKS = ("import sys; from tests.app.test_fork_gate import _forks_beside_polls; "
         "print(_forks_beside_polls(sys.argv[1], 150))")
"""The forks run in a fresh interpreter holding little more than diskcache and the gate: a fork's cost grows with the
memory of the process forked (page tables; 1.5 ms at 15 MiB, about 40 ms at this suite's 230 MiB and more in a
worker that has run other tests), and what is tested, SQLite's locks held by threads at the fork, does not."""


def test_forks_beside_sqlite_reads_inside_the_gate_never_hang(tmp_path):
    """150 forks beside three threads polling a diskcache, each fork inside the gate: none may hang (in a fresh
    interpreter, :data:`FORKS`).

    Without the gate such forks hang at random (13 of 60, 3 of the first 16 here; 13 of 150 in that fresh
    interpreter with the gate's request hold made a no-op; once, on CI, none of 1,200 did), so the control that the
    hazard is real is the deterministic one below.
    """
    out = subprocess.run([sys.executable, "-c", FORKS, str(tmp_path)], cwd=ROOT, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    hung = int(out.stdout.split()[-1])
    assert hung == 0, f"{hung} of 150 forked jobs hung with the gate"


@pytest.mark.parametrize("gated", [False, True], ids=["without the gate", "with the gate"])
def test_a_lock_held_by_a_request_at_the_fork_hangs_the_copy_unless_the_gate_waits(gated):
    """The hazard made certain: a request holds a lock (as SQLite's reads hold theirs) when the job forks.

    Without the gate the copy inherits the lock held, and hangs at its first use of it; with the gate
    the fork waits until the request has ended, and the copy runs.
    """
    gate, lock, inside, release = ForkGate(), threading.Lock(), threading.Event(), threading.Event()

    def request():
        with gate.request() if gated else contextlib.nullcontext():
            with lock:
                inside.set()
                release.wait(10)

    t = threading.Thread(target=request)
    t.start()
    inside.wait(5)
    if gated:  # the request ends on its own a moment later; the gate makes the fork wait for it
        threading.Timer(0.3, release.set).start()
    with gate.forking(timeout=5) if gated else contextlib.nullcontext():
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child
            signal.alarm(CHILD_ALARM_S)
            with lock:
                pass
            os._exit(0)
    release.set()  # without the gate the fork went ahead with the lock held
    _, status = os.waitpid(pid, 0)
    t.join(5)
    hung = os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGALRM
    assert hung is (not gated)


def test_a_fork_waits_for_requests_in_flight_and_new_requests_wait_for_the_fork():
    gate, events = ForkGate(), []
    in_request, release = threading.Event(), threading.Event()

    def request():
        with gate.request():
            in_request.set()
            release.wait()
            events.append("request ends")

    def late_request():
        with gate.request():
            events.append("late request runs")

    def fork():
        with gate.forking(timeout=5) as quiet:
            events.append(f"fork (quiet={quiet})")
            time.sleep(0.2)  # a late request that arrives now waits for this
            events.append("fork ends")

    first = threading.Thread(target=request)
    first.start()
    in_request.wait()
    forker = threading.Thread(target=fork)
    forker.start()
    time.sleep(0.2)
    assert events == []  # the fork waits for the request in flight
    release.set()
    time.sleep(0.1)  # the fork is under way
    late = threading.Thread(target=late_request)
    late.start()
    for t in (first, forker, late):
        t.join(5)
    assert events == ["request ends", "fork (quiet=True)", "fork ends", "late request runs"]
    assert gate.inside == 0


def test_a_job_forked_inside_its_own_request_does_not_wait_for_itself_nor_for_another_forking_request():
    gate, forked = ForkGate(), []
    both_inside = threading.Barrier(2)

    def request_that_starts_a_job(name):
        with gate.request():
            both_inside.wait()  # two requests in flight, each about to fork
            with gate.forking(timeout=5) as quiet:
                forked.append((name, quiet, gate.inside))
            with gate.request():  # nested: never waits
                pass

    threads = [threading.Thread(target=request_that_starts_a_job, args=(n,)) for n in "ab"]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert sorted(forked) == [("a", True, 0), ("b", True, 0)]  # no deadlock, and each forked alone
    assert gate.inside == 0


def test_a_request_that_never_ends_delays_a_fork_by_the_timeout_only(caplog):
    gate, release = ForkGate(), threading.Event()
    inside = threading.Event()

    def stuck():
        with gate.request():
            inside.set()
            release.wait()

    t = threading.Thread(target=stuck)
    t.start()
    inside.wait()
    start = time.monotonic()
    with gate.forking(timeout=0.3) as quiet:
        waited = time.monotonic() - start
    release.set()
    t.join(5)
    assert quiet is False and 0.3 <= waited < 2
    assert "1 other request(s) are still in flight" in caplog.text


def test_the_middleware_holds_the_gate_for_the_whole_request():
    gate, seen = ForkGate(), []

    def wsgi_app(environ, start_response):
        seen.append(gate.inside)
        start_response("200 OK", [])
        return [b"ok"]

    body = guard_requests(wsgi_app, gate)({}, lambda status, headers: None)
    assert body == [b"ok"] and seen == [1] and gate.inside == 0


PROBE = """
import json, sys
from pathlib import Path
from workspace.settings import Settings
from app.serve.server import create_app
from app.serve import fork_gate
folder = Path(sys.argv[1])
app = create_app(settings=Settings(warm=False, cache_dir=folder / "cache", state_dir=folder / "state",
                                   text_dir=folder / "text"))
app.server.add_url_rule("/probe", "probe", lambda: {"inside": fork_gate.GATE.inside})
print(json.dumps(app.server.test_client().get("/probe").get_json()))
"""


def test_the_app_holds_the_gate_for_each_request(tmp_path):
    """The wiring, in a fresh process: a route of the real app runs inside the gate."""
    out = subprocess.run([sys.executable, "-c", PROBE, str(tmp_path)], cwd=ROOT, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert json.loads(out.stdout.strip().splitlines()[-1]) == {"inside": 1}


def test_the_job_manager_forks_only_once_the_requests_in_flight_end(monkeypatch):
    import dash

    from app.serve import fork_gate, server

    gate = ForkGate()
    monkeypatch.setattr(fork_gate, "GATE", gate)
    events = []
    monkeypatch.setattr(dash.DiskcacheManager, "call_job_fn",
                        lambda self, *a: events.append(("fork", gate.inside)) or 123)
    manager = server._QuietForkManager.__new__(server._QuietForkManager)  # no cache needed to fork
    inside, release = threading.Event(), threading.Event()

    def poll():
        with gate.request():
            inside.set()
            release.wait()
            events.append(("poll ends", gate.inside))

    t = threading.Thread(target=poll)
    t.start()
    inside.wait()
    threading.Timer(0.3, release.set).start()
    with gate.request():  # the request that asks for the job
        assert manager.call_job_fn("key", None, (), {}) == 123
    t.join(5)
    assert events == [("poll ends", 1), ("fork", 0)]  # the asking request waits outside while the fork waits
