"""The what-if editor's part of ``python -m benchmarks.tablestakes`` (issue 25): an edit to every panel settled.

In headless Chromium, ``python -m app`` serves the bundled sample (breast cancer) and a user's Adult pipeline
(:func:`benchmarks.build_store.prepare_adult`: one-hot ``ColumnTransformer`` + ``HistGradientBoostingClassifier``
fitted on ``adult.data``, serving ``adult.test``); on the Descriptive page (SHAP waterfall, LIME, their agreement,
the status line) and on the Persuasive page (the story, its checks and costs, three figures), each edit sets one
control of the editor in the browser (``dash_clientside.set_props``, as a user's Enter does) to a new value, so
every edit is a row no cache holds; the time is from the edit to the page settled (:mod:`benchmarks.browser_timing`:
no Dash request in flight, no figure changing for 500 ms, which is not counted). Beside it, the server process's CPU
milliseconds per edit (``/proc/PID/stat``: the machine is shared, wall time depends on its load). Target: p95 <=
300 ms. ``--quick``: 4 edits a page, Adult fitted on 2,000 rows.
"""
from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import requests

ROOT = Path(__file__).resolve().parents[2]

WHATIF_TARGET_MS = 300
WHATIF_FEATURES = {"breast cancer": ("worst concave points", "worst area", "mean texture", "worst radius"),
                   "adult": ("age", "marital-status", "capital-gain", "occupation", "hours-per-week")}
"""The features each case's edits cycle through (numbers and, for Adult, levels)."""
ROWS = {"breast cancer": 128, "adult": 3}

_SET = """
const [id, value] = arguments;
window.__cd.clickAt = performance.now();
window.dash_clientside.set_props(id, {value: value});
"""


def _cpu_ms(pid: int) -> float:
    """User + system CPU milliseconds of process ``pid`` so far (``/proc/PID/stat``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) * 1000.0 / os.sysconf("SC_CLK_TCK")


class _Server:
    """``python -m app FLAGS`` on a free port, until closed; ``pid`` for its CPU time."""

    def __init__(self, flags: list[str], work: Path) -> None:
        from tests.e2e.serving import free_port

        port = free_port()
        self.base = f"http://127.0.0.1:{port}"
        env = {**os.environ, "PYTHONUNBUFFERED": "1", "CANDOR_CACHE_DIR": str(work / "cache"),
               "CANDOR_STATE_DIR": str(work / "state")}
        self._log = open(work / "server.log", "w")
        self.proc = subprocess.Popen([sys.executable, "-m", "app", *flags, "--port", str(port)], cwd=ROOT, env=env,
                                     stdout=self._log, stderr=subprocess.STDOUT)
        deadline = time.time() + 600
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError((work / "server.log").read_text()[-2000:])
            try:
                if requests.get(self.base + "/_candor/ready", timeout=10).status_code == 200:
                    return
            except requests.RequestException:  # not listening yet, or too busy warming up to answer in time
                pass
            time.sleep(0.5)
        raise TimeoutError("the server did not finish its warm-up")

    def close(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=30)
        self._log.close()


_DRAWN = """return [...document.querySelectorAll('[id*="whatif-value"]')]
  .filter(e => e.id.includes('"page":"' + arguments[0] + '"')).length;"""
"""How many what-if controls ``arguments[0]``'s editor has drawn (they are drawn when it is first opened)."""

def _edit_values(spec: list[dict], start: list, features, n: int, seed: int = 0) -> list[tuple[int, object]]:
    """``n`` edits (control index, browser value) of the controls showing ``start``, cycling through ``features``,
    each a value the control does not hold at that moment (else the page has nothing to do)."""
    rng = np.random.default_rng(seed)
    at = {s["name"]: i for i, s in enumerate(spec)}
    now, out = list(start), []
    for e in range(n):
        i = at[features[e % len(features)]]
        s = spec[i]
        if s["kind"] == "number":
            v = s["lo"] + (s["hi"] - s["lo"]) * float(rng.uniform(0.05, 0.95))
            v = int(round(v)) if s["whole"] else round(v, 4)
            v = v if v != now[i] else (v + 1 if v + 1 <= s["hi"] else v - 1)
        else:
            v = int(rng.integers(len(s["options"])))
            v = v if v != now[i] else (v + 1) % len(s["options"])
        now[i] = v
        out.append((i, v))
    return out


def _page_edits(driver, server: _Server, path: str, row: int, features, n: int) -> dict:
    """Open ``path`` at ``row``, then ``n`` edits, each timed to the page settled; wall and server CPU ms."""
    from benchmarks import browser_timing as bt

    page = path.strip("/")
    driver.get(f"{server.base}{path}?row={row}")
    bt.wait_settled(driver, bt.VISIBLE_PLOTS.replace("return", "return 2 <=", 1), timeout=600)
    data = "return window.dash_component_api.getLayout(arguments[0]).props.data;"
    spec, base = driver.execute_script(data, f"{page}-whatif-spec"), driver.execute_script(data, f"{page}-whatif-base")
    driver.execute_script("document.getElementById(arguments[0]).click();", f"{page}-whatif-open")  # draws them
    deadline = time.time() + 120
    while driver.execute_script(_DRAWN, page) < len(spec):
        if time.time() > deadline:
            raise TimeoutError(f"{path}: the what-if editor drew no controls")
        time.sleep(0.1)
    bt.wait_settled(driver, "return true", timeout=120)
    wall, cpu, requests_per_edit = [], [], []
    for i, value in _edit_values(spec, base["values"], features, n):
        before = bt.state(driver)["started"]
        bt.reset_click(driver)
        c0 = _cpu_ms(server.proc.pid)
        driver.execute_script(_SET, {"type": "whatif-value", "page": page, "index": i}, value)
        st = bt.wait_settled(driver, "return true", since_started=before, timeout=120)
        cpu.append(_cpu_ms(server.proc.pid) - c0)
        wall.append(st["settled_ms"] - st["clickAt"])
        requests_per_edit.append(st["started"] - before)
    note = driver.find_element("id", f"{page}-whatif-note").text
    if "Edited row" not in note:
        raise RuntimeError(f"{path}: the edits were not applied: {note!r}")
    return {"edits": n, "p50_ms": round(statistics.median(wall)), "p95_ms": round(float(np.percentile(wall, 95))),
            "max_ms": round(max(wall)), "cpu_p50_ms": round(statistics.median(cpu)),
            "cpu_p95_ms": round(float(np.percentile(cpu, 95))), "requests": max(requests_per_edit),
            "settled_ms": [round(w) for w in wall]}


def _whatif(case: str, work: Path, edits: int = 20, quick: bool = False) -> dict:
    """The what-if part for ``case`` ("breast cancer", "adult"): per page, the edits' settle times and CPU."""
    from benchmarks.build_store import prepare_adult
    from tests.e2e.browser import chromium_driver
    from benchmarks import browser_timing as bt

    flags = [] if case == "breast cancer" else prepare_adult(work, rows=(2000, 400) if quick else None)
    server = _Server(flags, work)
    try:
        with chromium_driver(1400, 1000) as driver:
            bt.install_probe(driver)
            return {path: _page_edits(driver, server, path, ROWS[case], WHATIF_FEATURES[case], edits)
                    for path in ("/descriptive", "/persuasive")}
    finally:
        server.close()


def part(quick: bool):
    """``(rows, figures)`` of the what-if editor on both cases (see the module's text)."""
    edits = 4 if quick else 20
    figures, rows = {"target_p95_ms": WHATIF_TARGET_MS, "load": os.getloadavg()[0]}, []
    for case in WHATIF_FEATURES:
        with tempfile.TemporaryDirectory(prefix="candor-tablestakes-") as tmp:
            figures[case] = _whatif(case, Path(tmp), edits, quick)
        for path, r in figures[case].items():
            ok = "" if r["p95_ms"] <= WHATIF_TARGET_MS else f"  (over the {WHATIF_TARGET_MS} ms target)"
            rows += [(f"{case} {path}: edit -> settled, p50 / p95 / max", f"{r['p50_ms']} / {r['p95_ms']} / "
                      f"{r['max_ms']}{ok}", "ms"),
                     ("  server CPU per edit, p50 / p95", f"{r['cpu_p50_ms']} / {r['cpu_p95_ms']}", "ms")]
    return rows, figures
