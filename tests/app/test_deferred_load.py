"""``python -m app`` serves its HTML and scripts while the model loads (app.serve.deferred_load, issue 23): requests
that need the workspace wait for the load, a failed load ends the command in one line with status 2."""
from __future__ import annotations

import subprocess
import sys
import threading
import time
import weakref

from app.serve.deferred_load import LoadGate
from tests.e2e.serving import free_port


class _Cyclic:
    def __init__(self):
        self.me = self

ROOT = __import__("pathlib").Path(__file__).resolve().parents[2]


def _inner(environ, start_response):
    start_response("200 OK", [("Content-Type", "text/plain")])
    return [b"served " + environ["PATH_INFO"].encode()]


def _get(gate, path: str) -> tuple[str, bytes]:
    status = {}
    body = b"".join(gate({"PATH_INFO": path}, lambda s, h: status.setdefault("s", s)))
    return status["s"], body


def test_the_page_is_served_at_once_and_callbacks_wait_for_the_load():
    gate = LoadGate(_inner)
    assert _get(gate, "/") == ("200 OK", b"served /")  # the HTML
    assert _get(gate, "/_dash-component-suites/dash/dash_renderer.min.js")[0] == "200 OK"  # scripts
    status, body = _get(gate, "/_candor/ready")  # the readiness probe never waits: not ready
    assert status.startswith("503") and b"still loading" in body
    answers = []
    held = threading.Thread(target=lambda: answers.append(_get(gate, "/_dash-update-component")))
    held.start()
    time.sleep(0.3)
    assert answers == [] and held.is_alive()  # held while the model loads
    gate.done.set()
    held.join(5)
    assert answers == [("200 OK", b"served /_dash-update-component")]


def test_a_failed_load_answers_its_line_to_held_requests():
    gate = LoadGate(_inner)
    gate.error = "the data has no column 'income'"
    gate.done.set()
    status, body = _get(gate, "/_dash-layout")
    assert status.startswith("503") and body == b"the data has no column 'income'\n"


def test_a_model_that_fails_to_load_ends_the_command_in_one_line(tmp_path):
    """The table lacks the target: the load (on its thread) fails after the server started; the command says so in
    one line, exits 2 and never says it is serving."""
    table = tmp_path / "table.csv"
    table.write_text("a,b\n1,2\n3,4\n")
    model = ROOT / "sample_models" / "artifacts"
    skops = sorted(model.glob("*.skops"))[0]
    proc = subprocess.run([sys.executable, "-m", "app", "--model", str(skops), "--data", str(table), "--target", "y",
                           "--port", str(free_port())], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2, proc.stderr
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert lines[-1].startswith("candor: error: ") and "Traceback" not in proc.stderr, proc.stderr
    assert "serving" not in proc.stderr


def test_the_collector_is_held_through_the_load_and_the_start_s_garbage_collected_once_idle():
    """issue 23: the start's heap grows to 190,000 objects and each quarter of growth made Python's collector walk all
    of them (0.38 s of CPU before the first layout). python -m app holds it until the load has ended; then the start's
    objects are frozen and the collector is on again, and the first idle moment collects the start's garbage and freezes
what survives."""
    import gc

    from app.serve import deferred_load

    seen = {}

    def load():
        seen["enabled"] = gc.isenabled()
        seen["garbage"] = weakref.ref(_Cyclic())  # garbage of the start: a cycle only the collector frees

    try:
        deferred_load.hold_collector()
        gate = LoadGate(_inner)
        deferred_load.start(gate, load).join(10)
        assert gate.done.is_set() and seen["enabled"] is False  # no collection while the model loaded
        assert gc.isenabled() and gc.get_freeze_count() > 0  # on again, the start's objects set aside
        gc.collect()  # a collection now frees nothing of the start's: it is frozen
        assert seen["garbage"]() is not None
        assert deferred_load.collect_start_garbage() is True
        assert seen["garbage"]() is None and gc.isenabled()  # the start's garbage collected
        assert gc.get_freeze_count() > 0  # and what survives frozen again: later full passes skip it
        assert deferred_load.collect_start_garbage() is False  # once
    finally:
        gc.unfreeze()
        gc.enable()
