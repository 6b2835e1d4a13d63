"""Candor against explainerdashboard 0.5.8, as a user sees them: cold start, pages and clicks in Chromium.

``python -m benchmarks.vs_peer [--datasets breast_cancer,adult] [--starts 2] [--clicks 10] [--quick] [--work DIR]``

What it does, for each dataset:

* **Same model, same rows.** The table is split the way Candor splits a user's table (a stratified
  random 25 % held out, seed 0). The same estimator with the same seed is fitted on the training
  rows in both environments: here (written as a ``.skops`` file, which Candor loads as a user's
  model) and in explainerdashboard's own virtual environment (``benchmarks/peer_explainerdashboard.py``).
  Breast cancer: ``RandomForestClassifier(200)``. Adult (UCI ``adult.data``, 32,561 rows, one-hot
  with ``pandas.get_dummies``; explainerdashboard is given ``cats=`` to group the one-hot columns):
  ``GradientBoostingClassifier()``. explainerdashboard explains the held-out rows; Candor is started
  as a user starts it, ``python -m app --model M.skops --data TABLE.csv --target T``, and holds out the
  same rows itself.
* **Cold starts, alternating.** Each tool is started ``--starts`` times (Candor, peer, peer, Candor,
  ...), each time with empty caches (fresh ``CANDOR_CACHE_DIR``/``CANDOR_STATE_DIR``/``CANDOR_TEXT_DIR``)
  and a fresh Chromium profile.
* **Measured** (see :mod:`benchmarks.browser_timing` for "settled"): process start to the first HTTP
  200 on ``/``; opening ``/`` to the landing page settled (Candor's landing page has no plot: its
  summary and data table filled; explainerdashboard's first tab: a plot drawn); a click on the
  per-row page's link (Candor's "Descriptive", explainerdashboard's "Individual Predictions" tab) to
  that page settled; ``--clicks`` clicks on each tool's own random-row button ("Random row",
  "Random Index") to every panel settled (p50, p95 over all starts), with the Dash requests each click
  costs and the kilobytes they carry (median); the same clicks again after a reload (``row_again_*``:
  rows each tool has computed once, what a click costs once its explanations are cached); and the
  peak resident memory of the server's whole process tree (psutil, sampled every 0.2 s).

Candor is measured in two modes (``--modes store,live``): **from a store** (``python -m app build`` once per
dataset, timed and reported as ``build_s``, every held-out row unless ``--store-rows``; then
``python -m app --store STORE`` cold) and **live** (computing on start, as before). The last line is one
JSON object ``{dataset: {"candor": {...}, "candor_live": {...}, "peer": {...}, "ratio": {...},
"ratio_live": {...}, "build_s": s}}`` with ratio = Candor from the store / peer and ratio_live = live / peer.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np
import pandas as pd
import psutil
import requests

from benchmarks import browser_timing as bt
from tests.e2e.browser import chromium_driver
from tests.e2e.serving import free_port
from tests.shared_data import shared_data_dir

ROOT = Path(__file__).resolve().parents[1]
PEER_SCRIPT = Path(__file__).resolve().parent / "peer_explainerdashboard.py"
PEER_PACKAGE = "explainerdashboard==0.5.8"
ADULT_COLS = ["age", "workclass", "fnlwgt", "education", "education-num", "marital-status", "occupation",
              "relationship", "race", "sex", "capital-gain", "capital-loss", "hours-per-week",
              "native-country", "income"]
ADULT_CATS = ["workclass", "education", "marital-status", "occupation", "relationship", "race", "sex",
              "native-country"]

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


# ---------------------------------------------------------------- the peer's environment

def default_peer_venv() -> Path:
    return Path(os.environ.get("CANDOR_PEER_VENV", ROOT / ".cache" / "peer-venv"))


def ensure_peer_venv(venv: Path) -> Path:
    """explainerdashboard's own virtual environment (created from PyPI if missing); returns its python."""
    py = venv / "bin" / "python"
    if py.exists() and subprocess.run([py, "-c", "import explainerdashboard"], capture_output=True).returncode == 0:
        return py
    print(f"installing {PEER_PACKAGE} into {venv} (about a minute) ...", file=sys.stderr)
    base = getattr(sys, "_base_executable", sys.executable)
    subprocess.run([base, "-m", "venv", str(venv)], check=True)
    subprocess.run([py, "-m", "pip", "install", "-q", "--disable-pip-version-check", PEER_PACKAGE], check=True)
    return py


# ---------------------------------------------------------------- data and models

def _breast_cancer() -> tuple[pd.DataFrame, str, str, dict, list]:
    from sklearn.datasets import load_breast_cancer

    frame = load_breast_cancer(as_frame=True).frame
    return frame, "target", "RandomForestClassifier", {"n_estimators": 200, "random_state": 0}, []


def _adult() -> tuple[pd.DataFrame, str, str, dict, list]:
    folder = shared_data_dir()
    if folder is None or not (folder / "adult" / "adult.data").exists():
        raise FileNotFoundError("Adult needs shared/data/adult/adult.data (see tests/shared_data.py)")
    df = pd.read_csv(folder / "adult" / "adult.data", header=None, names=ADULT_COLS, skipinitialspace=True,
                     na_values=["?"]).dropna(how="all")
    y = (df.pop("income").str.rstrip(".") == ">50K").astype(int)
    for c in ADULT_CATS:
        df[c] = df[c].fillna("Unknown")
    onehot = pd.get_dummies(df, columns=ADULT_CATS, dtype=int)
    onehot["income"] = y.to_numpy()
    return onehot.reset_index(drop=True), "income", "GradientBoostingClassifier", {"random_state": 0}, ADULT_CATS


DATASETS = {"breast_cancer": _breast_cancer, "adult": _adult}


def prepare(name: str, folder: Path, peer_python: Path) -> dict:
    """Write the table, the split, Candor's .skops model and the peer's pickled model into ``folder``.

    The split is the one Candor makes of a user's table (``workspace.load_pair``: stratified,
    25 % held out, seed 0), recomputed here so explainerdashboard explains the very same rows.
    """
    import skops.io as sio
    from sklearn.ensemble import GradientBoostingClassifier, RandomForestClassifier
    from sklearn.model_selection import train_test_split

    frame, target, estimator, params, cats = DATASETS[name]()
    folder.mkdir(parents=True, exist_ok=True)
    y = frame[target].to_numpy()
    train, test = train_test_split(np.arange(len(frame)), test_size=0.25, random_state=0, stratify=y)
    train, test = np.sort(train), np.sort(test)
    frame.to_csv(folder / "table.csv", index=False)
    frame.iloc[train].to_csv(folder / "train.csv")
    frame.iloc[test].to_csv(folder / "test.csv")
    meta = {"target": target, "estimator": estimator, "params": params, "cats": cats}
    (folder / "meta.json").write_text(json.dumps(meta))
    kind = {"RandomForestClassifier": RandomForestClassifier, "GradientBoostingClassifier": GradientBoostingClassifier}
    X_train = frame.iloc[train].drop(columns=[target])
    model = kind[estimator](**params).fit(X_train, y[train])
    sio.dump(model, folder / "model.skops")
    subprocess.run([peer_python, PEER_SCRIPT, "train", folder], check=True)
    return {"rows": len(frame), "held_out": len(test), "features": X_train.shape[1], "target": target,
            "model": f"{estimator}({params})"}


# ---------------------------------------------------------------- one cold start

class TreeMemory:
    """Peak resident memory (MB) of a process and all its descendants, sampled on a thread."""

    def __init__(self, pid: int, every: float = 0.2):
        self.proc, self.every, self.peak = psutil.Process(pid), every, 0.0
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
                    except psutil.Error:
                        pass
                self.peak = max(self.peak, total / 2**20)
            except psutil.Error:
                return
            self._stop.wait(self.every)

    def stop(self) -> float:
        self._stop.set()
        self._thread.join(timeout=2)
        return self.peak


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


def one_start(tool: str, folder: Path, peer_python: Path, clicks: int, timeout: float) -> dict:
    """Start ``tool`` cold, measure it in a fresh Chromium, stop it; the figures of this start."""
    spec, port = TOOLS["candor" if tool.startswith("candor") else tool], free_port()
    scratch = Path(tempfile.mkdtemp(prefix=f"vs-peer-{tool}-"))
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "CANDOR_CACHE_DIR": str(scratch / "cache"),
           "CANDOR_STATE_DIR": str(scratch / "state"), "CANDOR_TEXT_DIR": str(scratch / "text")}
    base = f"http://127.0.0.1:{port}"
    log = open(scratch / "server.log", "w")
    t0 = time.perf_counter()
    proc = subprocess.Popen(_command(tool, folder, port, peer_python), cwd=ROOT, env=env, stdout=log,
                            stderr=subprocess.STDOUT)
    memory = TreeMemory(proc.pid)
    out: dict = {"landing_s": None, "landing_from_start_s": None, "row_page_s": None, "row_click_ms": [],
                 "row_click_local_ms": [], "row_again_ms": [], "requests_per_click": [], "kb_per_click": []}
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
            except (TimeoutError, RuntimeError) as err:
                out["note"] = out.get("note", "") + f"; clicks stopped: {str(err)[:200]}"
    finally:
        _stop_tree(proc)
        out["rss_mb"] = memory.stop()
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


# ---------------------------------------------------------------- the run

def summarise(starts: list[dict]) -> dict:
    """Medians over cold starts; click percentiles over every click of every start; the largest peak RSS.

    A figure no start reached in time is ``None``; ``timeouts`` counts the starts with a stage that timed out.
    """
    clicks = np.concatenate([np.asarray(s["row_click_ms"], float) for s in starts])

    def med(k):
        vals = [s[k] for s in starts if s.get(k) is not None]
        return round(float(np.median(vals)), 2) if vals else None

    local = np.concatenate([np.asarray(s.get("row_click_local_ms", []), float) for s in starts])
    again = np.concatenate([np.asarray(s.get("row_again_ms", []), float) for s in starts])
    per_click = np.concatenate([np.asarray(s.get("requests_per_click", []), float) for s in starts])
    kb = np.concatenate([np.asarray(s.get("kb_per_click", []), float) for s in starts])

    def pct(values, q):
        return round(float(np.percentile(values, q)), 1) if values.size else None
    return {"first_200_s": med("first_200_s"), "landing_s": med("landing_s"),
            "landing_from_start_s": med("landing_from_start_s"), "row_page_s": med("row_page_s"),
            "row_p50_ms": pct(clicks, 50), "row_p95_ms": pct(clicks, 95),
            "rss_mb": round(max(s["rss_mb"] for s in starts), 1), "starts": len(starts), "clicks": int(clicks.size),
            "timeouts": sum("note" in s for s in starts),
            "row_local_p50_ms": pct(local, 50), "row_local_p95_ms": pct(local, 95), "local_clicks": int(local.size),
            "row_again_p50_ms": pct(again, 50), "row_again_p95_ms": pct(again, 95),
            "requests_per_click": pct(per_click, 50), "kb_per_click": pct(kb, 50)}


RATIO_KEYS = ("first_200_s", "landing_s", "landing_from_start_s", "row_page_s", "row_p50_ms", "row_p95_ms",
              "row_again_p50_ms", "row_again_p95_ms", "requests_per_click", "kb_per_click", "rss_mb")


def run_dataset(name: str, peer_python: Path, starts: int, clicks: int, timeout: float, work: Path,
                modes: tuple[str, ...] = ("store", "live"), store_rows: int | None = None) -> dict:
    folder = work / name
    done = folder / "prepared.json"  # a kept --work folder: the same files, model and store as last time
    if done.exists():
        info = json.loads(done.read_text())
    else:
        info = prepare(name, folder, peer_python)
        done.write_text(json.dumps(info))
    print(f"\n{name}: {info['rows']} rows, {info['held_out']} held out, {info['features']} features, "
          f"{info['model']}", flush=True)
    build_s, built = None, folder / "build_s.json"
    if "store" in modes:
        if built.exists() and (folder / "store").is_dir() and json.loads(built.read_text())["rows"] == store_rows:
            kept = json.loads(built.read_text())
            build_s = kept["build_s"]
            print(f"  python -m app build: {build_s} s ({store_rows or 'every'} held-out rows, "
                  f"{kept.get('engine', 'one process')}; kept from an earlier run in {folder})", flush=True)
        else:
            build_s = build_store(folder, store_rows)
            built.write_text(json.dumps({"build_s": build_s, "rows": store_rows}))
            print(f"  python -m app build: {build_s} s ({store_rows or 'every'} held-out rows)", flush=True)
    tools = [t for t, m in (("candor", "store"), ("candor_live", "live")) if m in modes] + ["peer"]
    runs: dict[str, list[dict]] = {t: [] for t in tools}
    for i in range(starts):
        for tool in (tools if i % 2 == 0 else tools[::-1]):
            r = one_start(tool, folder, peer_python, clicks, timeout)
            runs[tool].append(r)
            print(f"  start {i + 1} {tool:<11} {json.dumps(r)}", flush=True)
    res = {tool: summarise(v) for tool, v in runs.items()}
    for tool, key in (("candor", "ratio"), ("candor_live", "ratio_live")):
        if tool in res:
            res[key] = {k: round(res[tool][k] / res["peer"][k], 2) if res[tool][k] is not None and res["peer"][k]
                        else None for k in RATIO_KEYS}
    res["data"], res["build_s"], res["store_rows"] = info, build_s, store_rows
    return res


def table(results: dict) -> str:
    units = {"first_200_s": "s", "landing_s": "s", "landing_from_start_s": "s", "row_page_s": "s",
             "row_p50_ms": "ms", "row_p95_ms": "ms", "row_again_p50_ms": "ms", "row_again_p95_ms": "ms",
             "requests_per_click": "median", "kb_per_click": "median", "rss_mb": "MB"}
    lines = [f"{'dataset':<14}{'figure':<26}{'store':>10}{'live':>10}{'peer':>10}{'r store':>9}{'r live':>8}"]
    for ds, r in results.items():
        for k in RATIO_KEYS:
            cells = [("-" if t not in r or r[t][k] is None else str(r[t][k])) for t in ("candor", "candor_live", "peer")]
            ratios = [("-" if rk not in r or r[rk][k] is None else str(r[rk][k])) for rk in ("ratio", "ratio_live")]
            lines.append(f"{ds:<14}{k + ' (' + units[k] + ')':<26}{cells[0]:>10}{cells[1]:>10}{cells[2]:>10}"
                         f"{ratios[0]:>9}{ratios[1]:>8}")
        timeouts = [str(r[t]["timeouts"]) if t in r else "-" for t in ("candor", "candor_live", "peer")]
        lines.append(f"{ds:<14}{'starts timed out':<26}{timeouts[0]:>10}{timeouts[1]:>10}{timeouts[2]:>10}")
        for k in ("row_local_p50_ms", "row_local_p95_ms"):  # clicks measured while a global panel still computed
            if any(r[t].get(k) is not None for t in ("candor", "candor_live", "peer") if t in r):
                cells = [("-" if t not in r or r[t].get(k) is None else str(r[t][k]))
                         for t in ("candor", "candor_live", "peer")]
                lines.append(f"{ds:<14}{k + ' (ms)':<26}{cells[0]:>10}{cells[1]:>10}{cells[2]:>10}")
    return "\n".join(lines)


def parse_store_rows(text: str | None, datasets: list[str]) -> dict:
    """``--store-rows``: ``None`` (every held-out row), ``"N"`` (each dataset) or ``"adult=120,breast_cancer=50"``."""
    if not text:
        return {}
    if text.strip().isdigit():
        return {d: int(text) for d in datasets}
    out = {}
    for part in text.split(","):
        name, _, n = part.partition("=")
        if name.strip() not in DATASETS or not n.strip().isdigit():
            raise ValueError(f"--store-rows: expected N or dataset=N, got {part!r}")
        out[name.strip()] = int(n)
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.vs_peer", description=__doc__.split("\n")[0])
    p.add_argument("--datasets", default="breast_cancer,adult", help="comma-separated: breast_cancer, adult")
    p.add_argument("--starts", type=int, default=2, help="cold starts per tool (alternating)")
    p.add_argument("--clicks", type=int, default=10, help="random-row clicks per start")
    p.add_argument("--quick", action="store_true", help="breast cancer only, one start, 3 clicks")
    p.add_argument("--timeout", type=float, default=600, help="seconds allowed for any one wait (then recorded "
                                                               "as missing, with a note)")
    p.add_argument("--peer-venv", type=Path, default=default_peer_venv())
    p.add_argument("--modes", default="store,live", help="Candor's modes: store (python -m app build first), live")
    p.add_argument("--store-rows", default=None,
                   help="held-out rows the store holds (default all): N for every dataset, or per dataset, "
                        "e.g. adult=120 (LIME to its tolerance costs about 5 s of CPU a row on Adult's 108 columns)")
    p.add_argument("--work", type=Path, default=None,
                   help="keep the tables, models and stores in this folder and reuse them on the next run "
                        "(the store's build time is the one measured when it was built); default a temporary folder")
    args = p.parse_args(argv)
    datasets = [d.strip() for d in args.datasets.split(",") if d.strip()]
    if args.quick:
        datasets = ["breast_cancer"] if args.datasets == p.get_default("datasets") else datasets
        args.starts, args.clicks = 1, 3
    unknown = [d for d in datasets if d not in DATASETS]
    if unknown:
        p.error(f"unknown dataset(s) {', '.join(unknown)}; choose from {', '.join(DATASETS)}")
    peer_python = ensure_peer_venv(args.peer_venv)
    load_before = os.getloadavg()[0]
    modes = tuple(m.strip() for m in args.modes.split(",") if m.strip())
    try:
        store_rows = parse_store_rows(args.store_rows, datasets)
    except ValueError as err:
        p.error(str(err))
    if not modes or set(modes) - {"store", "live"}:
        p.error("--modes takes store, live or both")
    with tempfile.TemporaryDirectory(prefix="vs-peer-") as scratch:
        work = args.work or Path(scratch)
        results = {d: run_dataset(d, peer_python, args.starts, args.clicks, args.timeout, work, modes,
                                  store_rows.get(d)) for d in datasets}
    print()
    print(table(results))
    print(f"load average (1 min) before {load_before:.1f}, after {os.getloadavg()[0]:.1f}; "
          f"{os.cpu_count()} cores; r store = Candor from a store / peer, r live = Candor computing live / peer")
    headline = {d: {k: r[k] for k in ("candor", "candor_live", "peer", "ratio", "ratio_live", "build_s", "store_rows")
                    if k in r} for d, r in results.items()}
    print(json.dumps(headline))
    return 0


if __name__ == "__main__":
    sys.exit(main())
