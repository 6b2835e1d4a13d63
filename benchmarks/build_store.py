"""Build, then serve: build time and store size, and time to a first page and to fully warm, live vs from a store.

``python -m benchmarks.build_store [--cases sample,adult_hgb] [--adult-rows 200] [--starts 1] [--timeout 900]
[--modes live,store|rows] [--whole-pipeline] [--dask local:2] [--quick]``

``--quick`` (for CI; its figures are not the measured ones): the ``sample`` case, 10 rows stored, one start per mode.

Cases:

- ``sample``: the bundled breast-cancer gradient-boosting model (569 rows, 143 held out; every held-out row stored).
- ``adult_hgb``: a scikit-learn Pipeline (one-hot of Adult's 8 string columns, numbers passed through,
  ``HistGradientBoostingClassifier(random_state=0)``) fitted on UCI ``adult.data`` and served on
  ``adult.test`` (16,281 rows; Candor holds out 25 %), from ``shared/data`` (tests/shared_data.py). The
  model-agnostic SHAP this model needs costs about a second a row here, so the store holds the first
  ``--adult-rows`` held-out rows (stated); the rest are explained when chosen and added to the store.
- ``adult_all`` (issue 23): the same Pipeline fitted on the training rows of Candor's own split of UCI
  ``adult.data`` (stratified, 25 % held out, seed 0) and served on all of it (32,561 rows): every one of its 8,141
  held-out rows is stored (run it with ``--dask local:2``; the load average before and after is
  printed, the 2 cores being shared), or its first ``--adult-rows`` if given (the build's parts timed on fewer rows).

``--modes rows`` (issue 23: what a store's rows cost) builds nothing: in this process, the case's workspace is loaded
as ``build`` loads it, with the build's stopping rules and one thread, and each per-row stored method (SHAP, LIME)
explains the first ``--adult-rows`` held-out rows in 256-row chunks as the build's workers do (``live_rows``); printed:
CPU ms a row per method (``time.process_time``) and the global SHAP view's CPU seconds. ``--whole-pipeline`` calls a
one-hot Pipeline whole on every call, as before ``explainers._one_hot_input`` (the figures before and after).

For each case: ``python -m app build`` (wall time, store size; its process tree watched meanwhile,
``benchmarks/build_store_parts/timeline.py``: for each part of the build, start-up, rows, after the rows, row panels
and the end, its wall seconds, the seconds the same CPU work would take on a quiet 2-core machine, and the CPU seconds
and runnable share of the build's process and of each Dask worker), then the server started cold ``--starts``
times in each mode, alternating: live (``python -m app --model ...``, a fresh cache folder) and from the
store (``--store``); medians. Measured:
process start to the first HTTP 200 on ``/`` (``first_200_s``), to ``/_candor/ready`` answering 200
(``ready_s``: every warm-up step done), the CPU seconds of the server's process tree by then (``cpu_s``:
the machine is shared, so wall time alone says little), each warm-up step's wall and process CPU seconds
(``steps``, from the server's ``candor.warmup`` log lines) and the peak RSS of the server's process tree
(psutil, sampled every 0.2 s). ``--modes live`` skips the build. The last line is one JSON object.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import numpy as np
import pandas as pd
import psutil

from benchmarks.build_store_parts import timeline
from benchmarks.startup_env import server_env
from tests.e2e.serving import free_port
from tests.shared_data import shared_data_dir

ROOT = Path(__file__).resolve().parent.parent
ADULT_COLS = ["age", "workclass", "fnlwgt", "education", "education-num", "marital-status", "occupation",
              "relationship", "race", "sex", "capital-gain", "capital-loss", "hours-per-week", "native-country",
              "income"]


def _adult_frame(name: str) -> pd.DataFrame:
    folder = shared_data_dir()
    if folder is None or not (folder / "adult" / name).exists():
        raise FileNotFoundError(f"adult_hgb needs shared/data/adult/{name} (see tests/shared_data.py)")
    df = pd.read_csv(folder / "adult" / name, header=None, names=ADULT_COLS, skipinitialspace=True,
                     na_values=["?"], comment="|").dropna(how="all")
    df["income"] = df["income"].str.rstrip(".")
    return df.reset_index(drop=True)


def prepare_adult(folder: Path, *, all_rows: bool = False, rows: tuple[int, int] | None = None) -> list[str]:
    """Fit the Pipeline on adult.data, write ``model.skops`` and ``table.csv`` (adult.test); return the model flags.

    ``all_rows``: fit on the training rows of Candor's split of adult.data and serve adult.data itself.
    ``rows``: ``(fit, served)``: fit on the first ``fit`` rows of adult.data and serve the first ``served`` rows of
    adult.test (quick runs)."""
    import skops.io as sio
    from sklearn.compose import ColumnTransformer
    from sklearn.ensemble import HistGradientBoostingClassifier
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import OneHotEncoder

    train, test = _adult_frame("adult.data"), _adult_frame("adult.test")
    if rows is not None:
        train, test = train.iloc[:rows[0]], test.iloc[:rows[1]]
    if all_rows:  # the split workspace.load_pair makes: stratified, 25 % held out, seed 0
        from sklearn.model_selection import train_test_split

        test = train
        fit_rows, _ = train_test_split(np.arange(len(test)), test_size=0.25, random_state=0, stratify=test["income"])
        train = test.iloc[np.sort(fit_rows)]
    strings = [c for c in ADULT_COLS[:-1] if train[c].dtype == object or pd.api.types.is_string_dtype(train[c])]
    prep = ColumnTransformer([("str", OneHotEncoder(handle_unknown="ignore", sparse_output=False), strings)], remainder="passthrough")
    model = Pipeline([("prep", prep), ("hgb", HistGradientBoostingClassifier(random_state=0))])
    model.fit(train.drop(columns=["income"]), train["income"])
    sio.dump(model, folder / "model.skops")
    test.to_csv(folder / "table.csv", index=False)
    return ["--model", str(folder / "model.skops"), "--data", str(folder / "table.csv"), "--target", "income"]


_SERVE = ("import logging, runpy, sys; logging.basicConfig(level=logging.WARNING); "
          "logging.getLogger('candor.warmup').setLevel(logging.INFO); sys.argv[0] = 'app'; "
          "runpy.run_module('app', run_name='__main__', alter_sys=True)")
"""``python -m app`` with the warm-up's per-step timings logged (``candor.warmup`` at INFO)."""
_STEP = re.compile(r"warm-up step (\S+): ([0-9.]+) s wall, ([0-9.]+) s process CPU")


def _get(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=30) as r:
            return r.status
    except urllib.error.HTTPError as e:
        return e.code
    except (urllib.error.URLError, OSError):
        return 0


def _tree_rss(pid: int) -> float:
    try:
        p = psutil.Process(pid)
        return sum(q.memory_info().rss for q in [p, *p.children(recursive=True)]) / 2**20
    except psutil.Error:
        return 0.0


def serve_once(flags: list[str], work: Path, timeout: float) -> dict:
    """Start ``python -m app FLAGS`` cold; seconds to the first 200 on ``/`` and on ``/_candor/ready``, peak RSS."""
    port = free_port()
    cache = Path(tempfile.mkdtemp(dir=work, prefix="cache-"))
    env = server_env(CANDOR_CACHE_DIR=str(cache), CANDOR_STATE_DIR=str(cache / "state"))
    t0 = time.perf_counter()
    err_path = cache / "server.err"
    err_file = open(err_path, "w")  # a file, not a pipe: a full pipe would stall the server
    proc = subprocess.Popen([sys.executable, "-c", _SERVE, *flags, "--port", str(port)], cwd=ROOT, env=env,
                            stdout=subprocess.DEVNULL, stderr=err_file, text=True)
    peak, stop = [0.0], threading.Event()

    def sample():
        while not stop.is_set():
            peak[0] = max(peak[0], _tree_rss(proc.pid))
            time.sleep(0.2)

    threading.Thread(target=sample, daemon=True).start()
    out = {"first_200_s": None, "ready_s": None}
    base = f"http://127.0.0.1:{port}"
    try:
        while time.perf_counter() - t0 < timeout and proc.poll() is None:
            if out["first_200_s"] is None and _get(base + "/") == 200:
                out["first_200_s"] = round(time.perf_counter() - t0, 2)
            if out["first_200_s"] is not None and _get(base + "/_candor/ready") == 200:
                out["ready_s"] = round(time.perf_counter() - t0, 2)
                break
            time.sleep(0.25)
        try:
            out["cpu_s"] = round(sum(sum(q.cpu_times()[:2]) for q in [psutil.Process(proc.pid),
                                                                     *psutil.Process(proc.pid).children(recursive=True)]), 1)
        except psutil.Error:
            out["cpu_s"] = None
    finally:
        stop.set()
        proc.kill()  # nothing to save: its cache folder is thrown away
        proc.wait()
        err_file.close()
    text = err_path.read_text(errors="replace")
    if out["ready_s"] is None and "Traceback" in text:
        out["error"] = text[-500:]
    out["steps"] = {m.group(1): [float(m.group(2)), float(m.group(3))] for m in _STEP.finditer(text)}
    out["peak_rss_mb"] = round(peak[0], 1)
    return out


def _median(starts: list[dict]) -> dict:
    """Per figure, the median over the starts (None if any start did not get there)."""
    out = {}
    for k in ("first_200_s", "ready_s", "cpu_s", "peak_rss_mb"):
        values = [s.get(k) for s in starts]
        out[k] = None if None in values else float(sorted(values)[len(values) // 2]) if len(values) % 2 else \
            round(sum(sorted(values)[len(values) // 2 - 1:len(values) // 2 + 1]) / 2, 2)
    errors = [s["error"] for s in starts if s.get("error")]
    if errors:
        out["error"] = errors[0]
    out["starts"] = len(starts)
    out["steps"] = starts[len(starts) // 2].get("steps", {})  # one start's per-step [wall s, process CPU s]
    return out


def rows_cpu(flags: list[str], n_rows: int, chunk_rows: int = 256) -> dict:
    """CPU ms a row of each per-row stored method on the first ``n_rows`` held-out rows, as the build computes them."""
    from threadpoolctl import threadpool_limits

    from app import services
    from app.cli.build import _parser
    from app.services import methods, tabular
    from app.services.selection import Selection
    from workspace.settings import Settings

    args = _parser().parse_args([*flags, "--out", "unused"])
    args.text_model = None
    ws = Selection.from_settings(Settings.from_args(args)).load()
    services.init(ws, warm=False, opened_store=None)
    tabular.reproducible_lime()
    out = {"rows": 0, "cpu_ms_a_row": {}, "load_before": Path("/proc/loadavg").read_text().split()[:3]}
    with threadpool_limits(1):
        t = time.process_time()
        tabular._shap_all()
        out["global_shap_cpu_s"] = round(time.process_time() - t, 2)
        rows = np.sort(np.asarray(ws.test_idx, dtype=np.int64)[:n_rows])
        stored = methods.stored_per_row()
        for m in stored:  # each explainer made (its background, LIME's statistics) before the clock starts
            m.live_rows([int(rows[0])])
        cpu = dict.fromkeys((m.name for m in stored), 0.0)
        for start in range(0, len(rows), chunk_rows):
            chunk = [int(r) for r in rows[start:start + chunk_rows]]
            for m in stored:
                t = time.process_time()
                m.live_rows(chunk)
                cpu[m.name] += time.process_time() - t
    out.update(rows=int(len(rows)), cpu_ms_a_row={k: round(1000 * v / max(len(rows), 1), 1) for k, v in cpu.items()},
               load_after=Path("/proc/loadavg").read_text().split()[:3])
    return out


def run_case(name: str, work: Path, adult_rows: int, timeout: float, starts: int, modes=("live", "store"),
             dask: str | None = None, quick: bool = False) -> dict:
    folder = work / name
    folder.mkdir(parents=True, exist_ok=True)
    flags = prepare_adult(folder, all_rows=name == "adult_all") if name.startswith("adult") else []
    # adult_all stores every held-out row unless --adult-rows is given (its first chunks, timed as the whole build is)
    limit = adult_rows if quick or name.startswith("adult") else None
    limit = 200 if limit is None and name == "adult_hgb" else limit
    rows = ["--rows", str(limit)] if limit is not None else []
    rows += ["--dask", dask] if dask else []
    if modes == ("rows",):
        return {"rows_mode": rows_cpu(flags, 200 if adult_rows is None else adult_rows)}
    store = folder / "store"
    out = {"build_s": None, "store_mb": None, "rows_stored": None, "held_out": None, "build_parts_s": None}
    if "store" in modes:
        t0, out["load_before"] = time.perf_counter(), Path("/proc/loadavg").read_text().split()[:3]
        # the build's progress lines (with their seconds) in build.log, its processes' CPU sampled meanwhile
        out["timeline"] = timeline.run(
            [sys.executable, "-m", "app", "build", *flags, *rows, "--chunk-rows", "256" if name == "adult_all" else "25",
             "--out", str(store)], cwd=ROOT, log_path=folder / "build.log",
            env={**os.environ, "PYTHONPATH": str(ROOT), "CANDOR_CACHE_DIR": str(folder / "build-cache")})
        build_s, out["load_after"] = time.perf_counter() - t0, Path("/proc/loadavg").read_text().split()[:3]
        manifest = json.loads((store / "manifest.json").read_text())
        out.update(build_s=round(build_s, 1), store_mb=round(sum(f["bytes"] for f in manifest["files"].values()) / 2**20, 2),
                   rows_stored=manifest["rows"]["stored"], held_out=manifest["rows"]["held_out"],
                   build_parts_s=manifest["timings_s"], rows_per_s=round(manifest["rows"]["stored"] / build_s, 1))
    runs = {m: [] for m in modes}
    for _ in range(starts):  # alternating, so both see the same machine load
        for m in modes:
            runs[m].append(serve_once(flags if m == "live" else [*flags, "--store", str(store)], work, timeout))
    for m in modes:
        out[m] = _median(runs[m])
    return out


def table(results: dict) -> str:
    lines = [f"{name}: {r['rows_mode']['rows']} held-out rows, CPU ms a row: "
             + ", ".join(f"{k} {v}" for k, v in r["rows_mode"]["cpu_ms_a_row"].items())
             + f"; global SHAP view {r['rows_mode']['global_shap_cpu_s']} CPU s" for name, r in results.items()
             if "rows_mode" in r]
    if any("live" in r or "store" in r for r in results.values()):
        lines.append(f"{'case':<10} {'build s':>8} {'store MiB':>9} {'rows':>10} | {'mode':<6} {'first 200 s':>11} "
                     f"{'ready s':>8} {'CPU s':>7} {'peak RSS MiB':>12}")
    steps = [f"{name}:\n{timeline.table(r['timeline'])}" for name, r in results.items() if r.get("timeline")]
    for name, r in results.items():
        for mode in ("live", "store"):
            if mode not in r:
                continue
            m = r[mode]
            lines.append(f"{name:<10} {str(r['build_s']):>8} {str(r['store_mb']):>9} "
                         f"{str(r['rows_stored']) + '/' + str(r['held_out']):>10} | {mode:<6} {str(m['first_200_s']):>11} "
                         f"{str(m['ready_s']):>8} {str(m['cpu_s']):>7} {m['peak_rss_mb']:>12}")
            steps += [f"  {name} {mode}: warm-up step {k}: {w:.1f} s wall, {c:.1f} s process CPU"
                      for k, (w, c) in m.get("steps", {}).items()]
    return "\n".join(lines + steps)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.build_store", description=__doc__.splitlines()[0])
    p.add_argument("--cases", default="sample,adult_hgb")
    p.add_argument("--adult-rows", type=int, default=None,
                   help="held-out Adult rows the store holds (default 200; adult_all: all 8,141 unless given)")
    p.add_argument("--starts", type=int, default=1, help="cold starts per mode, alternating; medians (default 1)")
    p.add_argument("--timeout", type=float, default=900.0, help="seconds to wait for a server to be ready")
    p.add_argument("--modes", default="live,store", help="live, store or both (store builds one first)")
    p.add_argument("--dask", default=None, help="the build's --dask (e.g. local:2); default one process")
    p.add_argument("--whole-pipeline", action="store_true",
                   help="with --modes rows: call a one-hot Pipeline whole every time (the path before the shortcut)")
    p.add_argument("--quick", action="store_true", help="sample, 10 rows stored, one start: for CI (figures not asserted)")
    args = p.parse_args(argv)
    if args.quick:
        args.cases, args.adult_rows, args.starts = "sample", 10, 1
    from explainers.model_adapter import whole_pipeline

    work = Path(tempfile.mkdtemp(prefix="candor-build-store-"))
    results = {}
    for name in [c.strip() for c in args.cases.split(",") if c.strip()]:
        with whole_pipeline() if args.whole_pipeline else contextlib.nullcontext():  # no call takes the shortcut
            results[name] = run_case(name, work, args.adult_rows, args.timeout, args.starts,
                                     tuple(m.strip() for m in args.modes.split(",") if m.strip()), args.dask, args.quick)
        print(f"{name}: {json.dumps(results[name])}", file=sys.stderr, flush=True)
    print(table(results))
    print(f"(load average at the end: {', '.join(f'{x:.1f}' for x in os.getloadavg())}; machine shared)")
    print(json.dumps(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
