"""Benchmark: ``python -m app check`` on a wide table, step by step, with each step's peak memory (issue 27).

Run ``python -m benchmarks.wide_check [--cols D] [--rows N] [--quick]`` (default 10,000 columns x 200 rows;
``--quick``: 300 x 60, for CI, its figures not the measured ones). The pair is :mod:`benchmarks.wide_persuasive`'s
(seeded Gaussian noise with 30 planted groups of correlated columns, a ``LogisticRegression`` in a ``.skops``
file). ``check`` runs in this process exactly as ``python -m app check`` runs it (:func:`app.cli.check.run_tabular`);
each page's call ``check`` names (SHAP, LIME, permutation importance, partial dependence, Performance, Surrogate,
Persuasive) is timed where ``check`` guards it (``app.cli.check._view``), and ``load`` is everything before the
first of them. Printed per step: wall and CPU seconds (this process: on a shared machine the CPU seconds are
the comparable figure) and the step's own peak resident memory (``VmHWM`` of
``/proc/self/status``, its high-water mark reset through ``/proc/self/clear_refs`` before each step), then
check's own output; the last line is one JSON object of these figures.
"""
from __future__ import annotations

import argparse
import io
import json
import os
import sys
import tempfile
import time
from pathlib import Path


def _hwm_mb() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def _reset_hwm() -> None:
    try:  # Linux: "5" resets the peak resident set size to the current one
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        pass


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cols", type=int, default=10_000)
    p.add_argument("--rows", type=int, default=200)
    p.add_argument("--quick", action="store_true", help="300 columns x 60 rows (CI: it runs; figures not asserted)")
    args = p.parse_args(argv)
    if args.quick:
        args.cols, args.rows = 300, 60
    from app.cli import check
    from benchmarks.wide_persuasive import _pair

    steps: list[dict] = []
    clock = {"t": time.perf_counter(), "cpu": time.process_time()}
    guard = check._view

    def timed(name, fn):
        if not steps:  # everything before the first page's call: loading the pair, fingerprints
            steps.append({"step": "load", "s": round(time.perf_counter() - clock["t"], 2),
                          "cpu_s": round(time.process_time() - clock["cpu"], 2), "peak_mb": round(_hwm_mb())})
        _reset_hwm()
        t, cpu = time.perf_counter(), time.process_time()
        try:
            return guard(name, fn)
        finally:
            steps.append({"step": name.split(" row ")[0], "s": round(time.perf_counter() - t, 2),
                          "cpu_s": round(time.process_time() - cpu, 2), "peak_mb": round(_hwm_mb())})
            print(_line(steps[-1]), file=sys.stderr, flush=True)

    out = io.StringIO()
    with tempfile.TemporaryDirectory(prefix="candor-wide-check-") as tmp:
        model, data = _pair(Path(tmp), args.rows, args.cols)
        check._view = timed
        try:
            _reset_hwm()
            clock["t"], clock["cpu"] = t0, cpu0 = time.perf_counter(), time.process_time()
            check.run_tabular(check._parser().parse_args(["--model", str(model), "--data", str(data),
                                                          "--target", "label"]), out)
            total, total_cpu = time.perf_counter() - t0, time.process_time() - cpu0
        finally:
            check._view = guard
    print(out.getvalue(), end="")
    print(f"{'step':24} {'wall s':>8} {'CPU s':>8} {'peak MB':>8}")
    for s in steps:
        print(_line(s))
    print(_line({"step": "check", "s": round(total, 2), "cpu_s": round(total_cpu, 2),
                 "peak_mb": max(s["peak_mb"] for s in steps)}))
    print(json.dumps({"cols": args.cols, "rows": args.rows, "check_s": round(total, 2), "check_cpu_s": round(total_cpu, 2),
                      "load_avg": os.getloadavg()[0], "steps": steps}))


def _line(s: dict) -> str:
    return f"{s['step']:24} {s['s']:>8} {s['cpu_s']:>8} {s['peak_mb']:>8}"


if __name__ == "__main__":
    main()
