"""Build time and peak memory of per-row Tree SHAP at 10k, 100k and 1M rows: one process vs Dask.

``python -m benchmarks.scale [--sizes 10000,100000,1000000] [--engines single,dask1,dask2] [--chunk-rows 5000]``

Data: UCI Adult (``adult.data``, 32,561 rows, 14 columns, from ``shared/data``, tests/shared_data.py), its
8 string columns coded as integers (category codes, one column each). The model,
``GradientBoostingClassifier(random_state=0)`` (100 trees of depth 3; Candor's exact Tree SHAP path does
not take HistGradientBoosting), is fitted once on the original rows (not timed as build). Each size is a seeded resample of the original rows with replacement, with noise on the six
numeric columns: Gaussian with a standard deviation of 5 % of the column's own, rounded and clipped at
0 (the coded string columns are resampled without noise), so no two large tables repeat rows exactly.

The build: Candor's own Tree SHAP (``explainers.ShapExplainer``: TreeExplainer, interventional, 100
background rows, probability output) of every row, computed through ``store.engine.run_chunks`` in
chunks of ``--chunk-rows`` rows, on one of three engines: ``single`` (this process), ``dask1`` and
``dask2`` (a Dask LocalCluster of 1 or 2 single-threaded worker processes, started inside the timed
build, as ``python -m app build --dask local:N`` does). The table is written once as ``.npy`` and
each chunk memory-maps it for its own rows only (the map is closed after the chunk, so no process's
resident memory accumulates the table), so workers never receive the table through the scheduler.

Measured per size and engine: build wall time (``build_s``, from before the cluster starts to the last
chunk written and concatenated; the cluster's start and shutdown are also printed apart), its cost per row
(microseconds; it must not grow with rows), and the peak resident memory of the whole process tree
(this process and every Dask process, psutil, sampled every 0.1 s; ``peak_rss_mb``) and the CPU seconds
of that tree (``cpu_s``: the work, apart from other users' load on a shared machine). Dask results are
checked byte-identical to the first engine's (SHA-256 of the float64 values: no reference array is held
in memory during the next build, which would add to its peak). The last line is one JSON object.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np
import pandas as pd
import psutil

from benchmarks.build_store import _adult_frame

NOISE_SD = 0.05
NUMERIC = ("age", "fnlwgt", "education-num", "capital-gain", "capital-loss", "hours-per-week")


def adult_coded() -> tuple[pd.DataFrame, np.ndarray]:
    """Adult's 14 columns as floats (string columns as category codes) and the target (1 = >50K)."""
    df = _adult_frame("adult.data")
    y = (df.pop("income") == ">50K").to_numpy(dtype=int)
    for c in df.columns:
        if not pd.api.types.is_numeric_dtype(df[c]):
            df[c] = df[c].astype("category").cat.codes
    return df.astype(float), y


def resample(X: pd.DataFrame, n: int, seed: int) -> np.ndarray:
    """``n`` rows drawn with replacement, numeric columns plus N(0, (NOISE_SD * sd)^2) noise, rounded, >= 0."""
    rng = np.random.default_rng(seed)
    out = X.to_numpy()[rng.integers(0, len(X), n)].copy()
    for j, c in enumerate(X.columns):
        if c in NUMERIC:
            out[:, j] = np.clip(np.round(out[:, j] + rng.normal(0, NOISE_SD * X[c].std(), n)), 0, None)
    return out


class TreeShapChunk:
    """``task(start, stop)`` of :func:`store.engine.run_chunks`: Candor's Tree SHAP of rows ``start:stop``.

    Picklable: carries the model, the background and the table's ``.npy`` path; each process builds its
    ``ShapExplainer`` once (on first call); each call memory-maps the table and copies its own rows.
    """

    def __init__(self, model, background: pd.DataFrame, table: Path):
        self.model, self.background, self.table = model, background, str(table)
        self._explainer = None

    def __getstate__(self):
        return {**self.__dict__, "_explainer": None}

    def __call__(self, start: int, stop: int) -> dict[str, np.ndarray]:
        from explainers.model_adapter import ModelAdapter
        from explainers.shap_explainer import ShapExplainer

        if self._explainer is None:
            adapter = ModelAdapter.for_table(self.model, self.background)
            self._explainer = ShapExplainer(adapter, background=self.background)
        table = np.load(self.table, mmap_mode="r", allow_pickle=False)
        rows = pd.DataFrame(np.array(table[start:stop]), columns=self.background.columns)
        del table  # unmapped: the pages read are not kept in this process's resident memory
        attributions = self._explainer.explain_outputs(rows)
        return {"shap": np.asarray(attributions.values, dtype=np.float64)}


class PeakRss:
    """Peak summed RSS (MiB) of this process and all its descendants, sampled in a thread; and their CPU seconds.

    ``cpu_s`` sums, over every process seen, its user + system CPU time at the last sample minus at the
    first (this process from the start): on a shared machine it shows the work done, whatever the
    other users' load does to the wall time. A process's last 0.1 s before it exits is not counted.
    """

    def __init__(self, every_s: float = 0.1):
        self.every_s, self.peak, self._stop = every_s, 0.0, threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._cpu: dict[int, list[float]] = {}

    @property
    def cpu_s(self) -> float:
        return sum(last - first for first, last in self._cpu.values())

    def _sample(self) -> float:
        me = psutil.Process()
        total = 0
        for p in [me] + me.children(recursive=True):
            try:
                total += p.memory_info().rss
                t = p.cpu_times()
                self._cpu.setdefault(p.pid, [t.user + t.system] * 2)[1] = t.user + t.system
            except (psutil.NoSuchProcess, psutil.AccessDenied):
                pass
        return total / 2**20

    def _run(self):
        while not self._stop.is_set():
            self.peak = max(self.peak, self._sample())
            self._stop.wait(self.every_s)

    def __enter__(self):
        self._sample()
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, self._sample())


def build(engine: str, task: TreeShapChunk, n: int, chunk_rows: int, out_dir: Path):
    """One timed build; returns (seconds, cluster start s, cluster shutdown s, peak RSS MiB, CPU s, values).

    ``seconds`` runs from before the cluster starts to the last chunk written and concatenated; the
    cluster's shutdown after it is timed apart (``closed``), as it delays no result."""
    from store.cluster import client_from_address
    from store.engine import run_chunks

    with PeakRss() as rss:
        t0 = time.perf_counter()
        client = None if engine == "single" else client_from_address(f"local:{int(engine.removeprefix('dask'))}")
        started = time.perf_counter() - t0
        try:
            out = run_chunks(task, n, chunk_rows=chunk_rows, out_dir=out_dir, client=client)
            seconds = time.perf_counter() - t0
        finally:
            if client is not None:
                client.close()
        closed = time.perf_counter() - t0 - seconds
    return seconds, started, closed, rss.peak, rss.cpu_s, out["shap"]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.scale", description=__doc__.split("\n")[0])
    p.add_argument("--sizes", default="10000,100000,1000000", help="comma-separated row counts")
    p.add_argument("--engines", default="single,dask1,dask2", help="comma-separated: single, dask1, dask2")
    p.add_argument("--chunk-rows", type=int, default=5000, help="rows per chunk (default 5000)")
    args = p.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    engines = [e.strip() for e in args.engines.split(",") if e.strip()]
    if any(e not in ("single", "dask1", "dask2") for e in engines) or any(s < 1 for s in sizes):
        p.exit(2, "candor: error: --engines are single, dask1, dask2 and --sizes positive row counts\n")

    from sklearn.ensemble import GradientBoostingClassifier

    X, y = adult_coded()
    t = time.perf_counter()
    model = GradientBoostingClassifier(random_state=0).fit(X, y)
    fit_s = time.perf_counter() - t
    from explainers.model_adapter import ModelAdapter
    from explainers.shap_explainer import ShapExplainer

    probe = ShapExplainer(ModelAdapter.for_table(model, X), background=X)
    if probe.algorithm != "tree":
        p.exit(2, f"candor: error: expected Candor's Tree SHAP path, got {probe.algorithm}\n")
    task_kind = probe.source
    print(f"Adult {X.shape[0]} x {X.shape[1]} (string columns as codes); GradientBoostingClassifier fitted "
          f"in {fit_s:.1f} s (not part of the build). Rows: resampled with replacement, noise N(0, ({NOISE_SD:g} "
          f"x column sd)^2) on {', '.join(NUMERIC)}, rounded, clipped at 0. Tree SHAP: explainers.ShapExplainer "
          f"({task_kind}). Chunks of {args.chunk_rows} rows. "
          f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} at start.", flush=True)
    build_s: dict = {}
    peak: dict = {}
    cpu_s: dict = {}
    header = f"{'rows':>9} {'engine':>7} {'build s':>9} {'start s':>8} {'close s':>8} {'us/row':>8} {'cpu us/row':>10} {'peak MiB':>9} {'= single':>8}"
    print(header + "\n" + "-" * len(header), flush=True)
    with tempfile.TemporaryDirectory(prefix="candor-scale-") as tmp:
        for n in sizes:
            table = Path(tmp) / f"adult-{n}.npy"
            np.save(table, resample(X, n, seed=n), allow_pickle=False)
            task = TreeShapChunk(model, X, table)
            reference = None
            for engine in engines:
                seconds, started, closed, mb, cpu, values = build(engine, task, n, args.chunk_rows, Path(tmp) / f"{n}-{engine}")
                digest = hashlib.sha256(np.ascontiguousarray(values, dtype=np.float64).tobytes()).hexdigest()
                same = "" if reference is None else str(digest == reference)
                reference = digest if reference is None else reference
                build_s.setdefault(str(n), {})[engine] = round(seconds, 2)
                peak.setdefault(str(n), {})[engine] = round(mb, 1)
                cpu_s.setdefault(str(n), {})[engine] = round(cpu, 2)
                print(f"{n:>9} {engine:>7} {seconds:>9.1f} {started:>8.1f} {closed:>8.1f} {seconds / n * 1e6:>8.0f} {cpu / n * 1e6:>10.0f} {mb:>9.0f} "
                      f"{same:>8}", flush=True)
                del values
    print("\ncost per row by size, per engine (wall us; CPU us of the process tree):")
    for engine in engines:
        cost = {n: (build_s[n][engine] / int(n) * 1e6, cpu_s[n][engine] / int(n) * 1e6) for n in build_s}
        print(f"  {engine:>7}: " + ", ".join(f"{int(n):,}: {w:.0f} wall, {c:.0f} CPU" for n, (w, c) in cost.items()))
    print(f"load average at the end: {os.getloadavg()[0]:.1f}")
    print(json.dumps({"build_s": build_s, "peak_rss_mb": peak, "cpu_s": cpu_s}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
