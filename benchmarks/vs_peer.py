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
  rows each tool has computed once, what a click costs once its explanations are cached); from a store, five
  rows the store lacks (training rows, seeded) typed into Candor's row box and Enter, each to every panel settled
  (``row_lacking_*``; its ratio is against the peer's random-row click p50, a row the peer computes on the click);
  and the peak memory of the server's whole process tree: the largest sum of RSS sampled every 0.2 s
  (``rss_mb``) and the sum of each process's own ``VmHWM`` (``hwm_mb``).
* **The floor** (``floor``): a bare Dash app whose one callback returns the two bar charts of a row (as many
  bars as the Descriptive page draws, the 10 largest and the rest) and does nothing else, clicked the same way (:mod:`benchmarks.vs_peer_parts.floor`); its p95
  against the peer's row p95 (``floor.floor_p95_vs_peer``) is the lowest row ratio a Dash page drawing them can reach
  here.

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
import sys
import tempfile
from pathlib import Path

from benchmarks.vs_peer_parts import floor
from benchmarks.vs_peer_parts.cold_start import build_store, one_start
from benchmarks.vs_peer_parts.datasets import DATASETS, prepare
from benchmarks.vs_peer_parts.peer_env import default_peer_venv, ensure_peer_venv
from benchmarks.vs_peer_parts.summary import PEER_KEY, RATIO_KEYS, summarise, table


# ---------------------------------------------------------------- the run

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
            res[key] = {k: round(res[tool][k] / res["peer"][PEER_KEY.get(k, k)], 2)
                        if res[tool][k] is not None and res["peer"][PEER_KEY.get(k, k)] else None for k in RATIO_KEYS}
    columns = len((folder / "table.csv").open().readline().split(",")) - 1  # the table's columns, the target aside
    # as many bars as the Descriptive page draws a row: its waterfall and LIME bar show the 10 largest and the rest
    res["floor"] = floor.measure(min(columns, floor.SHOWN_BARS), figures=2, clicks=clicks * starts)
    peer_p95 = res["peer"]["row_p95_ms"]  # the floor's ratio kept with it: "ratio" holds Candor's (none when live only)
    res["floor"]["floor_p95_vs_peer"] = round(res["floor"]["floor_p95_ms"] / peer_p95, 2) if peer_p95 else None
    print(f"  floor (a bare Dash app, 2 bar charts): {json.dumps(res['floor'])}", flush=True)
    res["data"], res["build_s"], res["store_rows"] = info, build_s, store_rows
    return res


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
    p.add_argument("--quick", action="store_true", help="breast cancer only, one start, 2 clicks, 10 rows stored")
    p.add_argument("--timeout", type=float, default=600, help="seconds allowed for any one wait (then recorded "
                                                               "as missing, with a note)")
    p.add_argument("--peer-venv", type=Path, default=default_peer_venv())
    p.add_argument("--modes", default="store,live", help="Candor's modes: store (python -m app build first), live")
    p.add_argument("--store-rows", default=None,
                   help="held-out rows the store holds (default all): N for every dataset, or per dataset, "
                        "e.g. adult=120 (a build costs about 70 CPU ms a row on Adult's 108 columns, most of it LIME's model calls: a sample keeps a run short)")
    p.add_argument("--work", type=Path, default=None,
                   help="keep the tables, models and stores in this folder and reuse them on the next run "
                        "(the store's build time is the one measured when it was built); default a temporary folder")
    args = p.parse_args(argv)
    datasets = [d.strip() for d in args.datasets.split(",") if d.strip()]
    if args.quick:
        datasets = ["breast_cancer"] if args.datasets == p.get_default("datasets") else datasets
        args.starts, args.clicks = 1, 2
        args.store_rows = args.store_rows or "10"
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
    headline = {d: {k: r[k] for k in ("candor", "candor_live", "peer", "ratio", "ratio_live", "build_s", "store_rows",
                                      "floor")
                    if k in r} for d, r in results.items()}
    print(json.dumps(headline))
    return 0


if __name__ == "__main__":
    sys.exit(main())
