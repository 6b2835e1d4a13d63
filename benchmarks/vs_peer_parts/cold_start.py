"""One cold start of :mod:`benchmarks.vs_peer`: start a tool (Candor from a store, Candor live, or the peer) with
empty caches, measure it in a fresh Chromium (landing page, per-row page, random-row clicks, the same clicks after a
reload) and the peak memory of its process tree, then stop it. Also the store build (``python -m app build``)."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import psutil
import requests

from benchmarks import browser_timing as bt
from benchmarks.vs_peer_parts import ROOT
from benchmarks.startup_env import server_env
from benchmarks.vs_peer_parts.peer_env import PEER_SCRIPT
from tests.e2e.browser import chromium_driver
from tests.e2e.serving import free_port

# How each tool is driven: the per-row page's link, the random-row button, and what "drawn" means.
PLOTS = bt.VISIBLE_PLOTS.strip().removeprefix("return ").rstrip(";")
TOOLS = {
    "candor": {
        "landing_drawn": "return document.querySelectorAll('#overview-table tbody tr').length > 1 "
                         "&& document.getElementById('overview-summary').innerText.length > 0;",
        "row_page_link": "document.querySelector('a.nav-link[href=\"/descriptive\"]')",
        # every figure drawn, and no panel still waiting for the warm-up (its note polls once a second)
        "row_page_drawn": f"return location.pathname === '/descriptive' && ({PLOTS}) >= 4 "
                          "&& !document.querySelector('#descriptive-global-note .spinner-border');",
        "random_button": "document.getElementById('row-random')",
        "reload_keeps_row_page": True,  # the page is its address (/descriptive?row=N)
        "row_box": "document.getElementById('row-input')",  # a row typed in (then Enter: the box's debounce)
    },
    "peer": {
        "landing_drawn": f"return ({PLOTS}) >= 1;",
        "row_page_link": "[...document.querySelectorAll('div.tab > span')]"
                         ".find(s => s.textContent.trim() === 'Individual Predictions')",
        "row_page_drawn": "return !!document.querySelector('div.tab--selected') "
                          "&& document.querySelector('div.tab--selected').textContent.trim() === "
                          f"'Individual Predictions' && ({PLOTS}) >= 1;",
        "random_button": "[...document.querySelectorAll('button[id^=\"random-index-clas-button-\"]')]"
                         ".find(b => b.getClientRects().length > 0)",
        "reload_keeps_row_page": False,
    },
}


class TreeMemory:
    """Peak resident memory (MB) of a process and all its descendants, sampled on a thread: the largest sum of RSS
    seen (``peak``), and the sum over every process seen of its own peak (``VmHWM`` in ``/proc/<pid>/status``,
    last read while it lived: ``hwm``), which no sampling interval misses."""

    def __init__(self, pid: int, every: float = 0.2):
        self.proc, self.every, self.peak = psutil.Process(pid), every, 0.0
        self._hwm: dict[int, int] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                procs = [self.proc, *self.proc.children(recursive=True)]
                total = 0
                for p in procs:
                    try:
                        total += p.memory_info().rss
                        self._hwm[p.pid] = max(self._hwm.get(p.pid, 0), _vm_hwm_kb(p.pid))
                    except (psutil.Error, OSError):
                        pass
                self.peak = max(self.peak, total / 2**20)
            except psutil.Error:
                return
            self._stop.wait(self.every)

    def stop(self) -> float:
        self._stop.set()
        self._thread.join(timeout=2)
        return self.peak

    @property
    def hwm(self) -> float:
        return sum(self._hwm.values()) / 1024


def _vm_hwm_kb(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return 0


def _pair(folder: Path) -> list[str]:
    target = json.loads((folder / "meta.json").read_text())["target"]
    return ["--model", str(folder / "model.skops"), "--data", str(folder / "table.csv"), "--target", target]


def build_store(folder: Path, rows: int | None) -> float:
    """``python -m app build`` of the dataset in ``folder`` into ``folder/store``; its wall time in seconds."""
    cmd = [sys.executable, "-m", "app", "build", *_pair(folder), "--out", str(folder / "store")]
    if rows:
        cmd += ["--rows", str(rows)]
    t0 = time.perf_counter()
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"python -m app build failed: {done.stderr[-2000:]}")
    return round(time.perf_counter() - t0, 1)


def _command(tool: str, folder: Path, port: int, peer_python: Path) -> list[str]:
    if tool == "candor":  # from the store, copied fresh for each start (rows added on demand stay out of it)
        fresh = Path(tempfile.mkdtemp(prefix="vs-peer-store-")) / "store"
        shutil.copytree(folder / "store", fresh)
        return [sys.executable, "-m", "app", *_pair(folder), "--store", str(fresh), "--port", str(port)]
    if tool == "candor_live":
        return [sys.executable, "-m", "app", *_pair(folder), "--port", str(port)]
    return [str(peer_python), str(PEER_SCRIPT), "serve", str(folder), str(port)]


def _stop_tree(proc: subprocess.Popen) -> None:
    try:
        kids = psutil.Process(proc.pid).children(recursive=True)
    except psutil.Error:
        kids = []
    proc.terminate()
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    for k in kids:
        try:
            k.kill()
        except psutil.Error:
            pass


def one_start(tool: str, folder: Path, peer_python: Path, clicks: int, timeout: float, typed_rows: int = 5) -> dict:
    """Start ``tool`` cold, measure it in a fresh Chromium, stop it; the figures of this start."""
    spec, port = TOOLS["candor" if tool.startswith("candor") else tool], free_port()
    scratch = Path(tempfile.mkdtemp(prefix=f"vs-peer-{tool}-"))
    env = server_env(PYTHONUNBUFFERED="1", CANDOR_CACHE_DIR=str(scratch / "cache"), CANDOR_STATE_DIR=str(scratch / "state"),
                     CANDOR_TEXT_DIR=str(scratch / "text"))
    base = f"http://127.0.0.1:{port}"
    log = open(scratch / "server.log", "w")
    t0 = time.perf_counter()
    proc = subprocess.Popen(_command(tool, folder, port, peer_python), cwd=ROOT, env=env, stdout=log,
                            stderr=subprocess.STDOUT)
    memory = TreeMemory(proc.pid)
    out: dict = {"landing_s": None, "landing_from_start_s": None, "row_page_s": None, "row_click_ms": [],
                 "row_click_local_ms": [], "row_again_ms": [], "requests_per_click": [], "kb_per_click": [],
                 "row_lacking_ms": []}
    try:
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"{tool} exited: {(scratch / 'server.log').read_text()[-3000:]}")
            if time.perf_counter() - t0 > timeout:
                raise TimeoutError(f"{tool} gave no HTTP 200 within {timeout} s")
            try:
                if requests.get(base + "/", timeout=5).status_code == 200:
                    break
            except requests.RequestException:
                pass
            time.sleep(0.1)
        out["first_200_s"] = time.perf_counter() - t0
        with chromium_driver(width=1400, height=1000) as driver:
            driver.set_page_load_timeout(timeout)
            bt.install_probe(driver)
            try:  # a stage that does not settle in time is recorded as missing (with a note), never fatal
                driver.get(base + "/")
                st = bt.wait_settled(driver, spec["landing_drawn"], timeout=timeout)
                out["landing_s"] = st["settled_ms"] / 1000
                out["landing_from_start_s"] = out["first_200_s"] + out["landing_s"]
                bt.click(driver, spec["row_page_link"])
                st = bt.wait_settled(driver, spec["row_page_drawn"], timeout=timeout)
                out["row_page_s"] = max(st["settled_ms"] - st["clickAt"], 0.0) / 1000
                key, only_new = "row_click_ms", False
            except TimeoutError as err:
                out["note"] = f"timed out after {timeout:.0f} s: {str(err)[:300]}"
                # the page is still busy with an earlier request (a global panel): measure only what each
                # click starts, and keep those figures apart ("local"), never mixed with settled clicks
                key, only_new = "row_click_local_ms", True
            try:
                for _ in range(clicks):
                    bt.reset_click(driver)
                    before = bt.click(driver, spec["random_button"])
                    at = bt.state(driver)["clickAt"] if only_new else None
                    st = bt.wait_settled(driver, "return true;" if only_new else spec["row_page_drawn"],
                                         since_started=before, timeout=timeout, ignore_before=at)
                    out[key].append(max(st["settled_ms"] - st["clickAt"], 0.0))
                    sent = bt.requests_since(driver, before)
                    out["requests_per_click"].append(len(sent))
                    out["kb_per_click"].append(round(sum(r["received"] + r["sent"] for r in sent) / 1024, 1))
                if not only_new and clicks:
                    _again(driver, spec, clicks, timeout, out)
                if not only_new and spec.get("row_box") and tool == "candor":
                    _typed_rows(driver, spec, folder, typed_rows, timeout, out)
            except (TimeoutError, RuntimeError) as err:
                out["note"] = out.get("note", "") + f"; clicks stopped: {str(err)[:200]}"
    finally:
        _stop_tree(proc)
        out["rss_mb"] = memory.stop()
        out["hwm_mb"] = memory.hwm
        log.close()
    return out


def _again(driver, spec: dict, clicks: int, timeout: float, out: dict) -> None:
    """Reload the per-row page and click the random-row button ``clicks`` times again: each tool's rows
    now come from its own caches (Candor's "Random row" is seeded by the click count, so these are the
    very rows of the first round; explainerdashboard's picks are unseeded), what a row costs once computed."""
    driver.refresh()
    if not spec["reload_keeps_row_page"]:  # explainerdashboard reloads on its first tab
        bt.wait_settled(driver, "return true;", timeout=timeout)
        bt.click(driver, spec["row_page_link"])
    bt.wait_settled(driver, spec["row_page_drawn"], timeout=timeout)
    for _ in range(clicks):
        bt.reset_click(driver)
        before = bt.click(driver, spec["random_button"])
        st = bt.wait_settled(driver, spec["row_page_drawn"], since_started=before, timeout=timeout)
        out["row_again_ms"].append(max(st["settled_ms"] - st["clickAt"], 0.0))


TYPE_ROW = """
const el = (%s);
if (!el) return false;
el.focus();
Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value').set.call(el, String(arguments[0]));
el.dispatchEvent(new Event('input', {bubbles: true}));
setTimeout(() => {
  window.__cd.clickAt = performance.now();
  for (const type of ['keydown', 'keypress', 'keyup'])
    el.dispatchEvent(new KeyboardEvent(type, {key: 'Enter', code: 'Enter', keyCode: 13, which: 13, charCode: 13,
                                              bubbles: true}));
  el.blur();
}, 0);
return true;
"""


def lacking_rows(folder: Path, n: int) -> list[int]:
    """``n`` rows the store lacks: training rows (the store holds held-out rows), spread over the table, seeded."""
    import numpy as np
    import pandas as pd

    train = pd.read_csv(folder / "train.csv", usecols=[0]).iloc[:, 0].to_numpy()
    return [int(r) for r in np.random.default_rng(1).choice(train, min(n, len(train)), replace=False)]


def _typed_rows(driver, spec: dict, folder: Path, n: int, timeout: float, out: dict) -> None:
    """Type ``n`` rows the store lacks into the row box (Enter), each to every panel settled: what a row costs
    that nothing has computed yet (explained live, then added to the store)."""
    for row in lacking_rows(folder, n):
        bt.reset_click(driver)
        before = bt.state(driver)["started"]
        if not driver.execute_script(TYPE_ROW % spec["row_box"], row):
            raise RuntimeError(f"no row box: {spec['row_box']}")
        st = bt.wait_settled(driver, spec["row_page_drawn"] + "", since_started=before, timeout=timeout)
        if not driver.execute_script(f"return location.search.includes('row={row}');"):
            raise RuntimeError(f"typing row {row} did not show it ({driver.current_url})")
        out["row_lacking_ms"].append(max(st["settled_ms"] - st["clickAt"], 0.0))
