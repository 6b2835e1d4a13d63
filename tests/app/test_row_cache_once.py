"""A value kept per state (``services.row_cache``, ``drawn_once``) is computed once when many threads ask for it at
once (issue 27: viewers opening a page of a fresh worker each drew its views alike until the first was kept)."""
from __future__ import annotations

import os
import signal
import threading

import pytest

from app.services import _core


@pytest.fixture
def state(sample_workspace):
    from app import services

    with services.overridden(services.ServiceState(sample_workspace)) as st:
        yield st


def _blocking(calls: list, release: threading.Event):
    def compute(key):
        calls.append(key)
        release.wait(timeout=60)
        if key == "fails":
            raise ValueError("not kept")
        return f"value of {key}"
    return compute


def test_threads_asking_for_the_same_arguments_compute_them_once(state):
    calls, release = [], threading.Event()
    cached = _core.row_cache(maxsize=8)(_blocking(calls, release))
    answers = []
    threads = [threading.Thread(target=lambda: answers.append(cached("row 7"))) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=0.5)  # let them all reach the computation (each one computed it before the fix)
    other = threading.Thread(target=lambda: answers.append(cached("row 8")))
    other.start()  # other arguments are not held back by row 7's computation
    release.set()
    for t in [*threads, other]:
        t.join(timeout=60)
    assert sorted(calls) == ["row 7", "row 8"]
    assert sorted(answers) == ["value of row 7"] * 6 + ["value of row 8"]
    assert cached("row 7") == "value of row 7" and calls.count("row 7") == 1


def test_an_error_is_not_kept_and_a_forked_child_never_waits_for_its_parents_threads(state):
    calls, release = [], threading.Event()
    cached = _core.row_cache(maxsize=8)(_blocking(calls, release))
    release.set()
    for _ in range(2):
        with pytest.raises(ValueError, match="not kept"):
            cached("fails")
    assert calls == ["fails", "fails"]

    hold = threading.Event()
    held = threading.Thread(target=lambda: cached("held"))
    release.clear()
    held.start()
    while "held" not in calls:
        hold.wait(0.01)
    pid = os.fork()  # another thread is inside the computation of "held": the child computes it itself
    if pid == 0:
        signal.alarm(30)  # a lock inherited held would wait for ever: ended by the alarm instead, and the test fails
        release.set()
        os._exit(0 if cached("held") == "value of held" else 1)
    _, status = os.waitpid(pid, 0)
    release.set()
    held.join(timeout=60)
    assert os.waitstatus_to_exitcode(status) == 0
