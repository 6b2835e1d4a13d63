"""Speed of the first vertical slice: cold start, warm row and k changes, peak memory.

Run ``python -m benchmarks.slice`` (sample models built). It starts ``python -m app`` as a
real server process and talks to it over HTTP exactly as the browser does
(``POST /_dash-update-component`` with the payloads Dash sends), so every figure is
built and serialised as in use.

- ``first_page_s``: process start to the Model & data page served: ``GET /`` and ``/_dash-layout``
  answered and Dash's page callback (``_pages_content``) answered, which returns the page with its
  summary, first table page and row links filled in (app/pages/overview.py: no other request).
- row change: each page's row callback for 25 rows never requested before (cache misses,
  warm process); median and p95 per page; the headline is the slowest page's p95.
- ``k_change_p95_ms``: the Persuasive callback for one row over k = 1..25.
- ``peak_rss_mb``: the server's peak resident memory (VmHWM).
- row and k changes are measured once ``/_candor/ready`` says the background warm-up is done.

``--quick`` (for CI; its figures are not the measured ones): 2 rows per page and k = 1, 2.

The last line is one JSON object with the headline figures.
"""
from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import requests

ROOT = Path(__file__).resolve().parent.parent
ROW_PAGES = {"Model & data": "overview-explain-links", "Descriptive": "descriptive-shap-waterfall",
             "Persuasive": "persuasive-statement", "Attention": "attention-heatmap"}
"""Each page's row callback, by an output it sets (the navbar's status line is drawn in the browser)."""
PAGE_VALUES = {"persuasive-k.value": 3, "persuasive-rounding.value": "exact", "persuasive-grouping.value": [],
               "persuasive-sensitive.value": [], "descriptive-shap-players.value": "children",
               "url.pathname": "/descriptive"}
"""The controls' values as the pages' layouts set them (app/pages/persuasive.py, descriptive.py)."""


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _callbacks(base: str) -> list[dict]:
    return requests.get(base + "/_dash-dependencies", timeout=30).json()


def _find(deps: list[dict], output_id: str) -> dict:
    """The server callback that sets ``output_id`` (clientside ones have no server side to time).

    Raises
    ------
    SystemExit
        Naming the output when no server callback sets it (the app's callbacks changed: update this file).
    """
    found = [d for d in deps if d.get("clientside_function") is None
             and (f"..{output_id}." in d["output"] or d["output"].startswith(f"{output_id}."))]
    if not found:
        raise SystemExit(f"benchmarks.slice: no server callback outputs {output_id!r}; the app's callbacks changed "
                         "(see /_dash-dependencies), update benchmarks/slice.py")
    return found[0]


def _ids(spec: str) -> list[dict]:
    """``[{"id", "property"}]`` of a dependency's output text (``..a.x...b.y..``; an id may be a JSON dict)."""
    out = []
    for part in (spec.strip(".").split("...") if spec.startswith("..") else [spec]):
        name, prop = part.rsplit(".", 1)
        prop = prop.split("@")[0]  # allow_duplicate outputs carry @hash
        out.append({"id": json.loads(name) if name.startswith("{") else name, "property": prop})
    return out


def _call(base: str, dep: dict, values: dict) -> float:
    """POST one callback the way dash-renderer does; returns seconds; raises on HTTP errors."""
    outputs = _ids(dep["output"])
    inputs = [{"id": i["id"], "property": i["property"], "value": values.get(f"{i['id']}.{i['property']}")}
              for i in dep["inputs"]]
    state = [{"id": i["id"], "property": i["property"], "value": values.get(f"{i['id']}.{i['property']}")}
             for i in dep.get("state", [])]
    body = {"output": dep["output"], "outputs": outputs if len(outputs) > 1 else outputs[0], "inputs": inputs,
            "changedPropIds": [f"{i['id']}.{i['property']}" for i in dep["inputs"]], "state": state}
    t = time.perf_counter()
    r = requests.post(base + "/_dash-update-component", json=body, timeout=120)
    r.raise_for_status()
    return time.perf_counter() - t


def _stats(seconds: list[float]) -> tuple[float, float]:
    ms = np.asarray(seconds) * 1000
    return float(np.median(ms)), float(np.percentile(ms, 95))


def _peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def main(argv: list[str] | None = None) -> dict:
    """Serve the sample, time the first page, row and k changes; print the table and the JSON line."""
    p = argparse.ArgumentParser(prog="python -m benchmarks.slice", description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", help="2 rows per page, k = 1, 2: for CI (figures not asserted)")
    args = p.parse_args(argv)
    n_rows, n_k = (2, 2) if args.quick else (25, 25)
    port = _port()
    base = f"http://127.0.0.1:{port}"
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "app", "--port", str(port)], cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env={**os.environ})
    try:
        while True:
            try:
                if requests.get(base + "/", timeout=2).status_code == 200:
                    break
            except requests.RequestException:  # not up yet, or slow to answer on a loaded machine
                time.sleep(0.05)
            if proc.poll() is not None or time.perf_counter() - t0 > 180:
                raise SystemExit("server did not start")
        requests.get(base + "/_dash-layout", timeout=30).raise_for_status()
        deps = _callbacks(base)  # not timed: the browser has it from the page
        _call(base, _find(deps, "_pages_content"), {"_pages_location.pathname": "/", "_pages_location.search": ""})
        first_page = time.perf_counter() - t0

        while requests.get(base + "/_candor/ready", timeout=5).status_code != 200:  # warm-up: SHAP, surrogates,
            time.sleep(0.5)                                                        # models, in the background
        warm_s = time.perf_counter() - t0
        _call(base, _find(deps, "descriptive-global-bar"), {"url.pathname": "/descriptive"})
        rows = np.random.default_rng(1).choice(np.arange(569), size=n_rows + 1, replace=False).tolist()
        per_page = {}
        for name, out in ROW_PAGES.items():
            dep = _find(deps, out)
            vals = {**PAGE_VALUES, "row-input.value": rows[0], "overview-row-wanted.data": {"row": rows[0]}}
            _call(base, dep, vals)  # first call of each page pays one-off imports; not a row change
            per_page[name] = [_call(base, dep, {**vals, "row-input.value": r, "overview-row-wanted.data": {"row": r}})
                              for r in rows[1:]]
        dep = _find(deps, "persuasive-statement")
        k_times = [_call(base, dep, {**PAGE_VALUES, "row-input.value": rows[1], "persuasive-k.value": k})
                   for k in range(1, n_k + 1)]
        peak = _peak_rss_mb(proc.pid)
    finally:
        proc.terminate()
        proc.wait(timeout=30)

    print(f"{'measure':<34}{'median ms':>12}{'p95 ms':>10}")
    for name, times in per_page.items():
        med, p95 = _stats(times)
        print(f"{'row change: ' + name:<34}{med:>12.1f}{p95:>10.1f}")
    k_med, k_p95 = _stats(k_times)
    print(f"{'k change: Persuasive':<34}{k_med:>12.1f}{k_p95:>10.1f}")
    print(f"first page served: {first_page:.2f} s   warm-up done: {warm_s:.1f} s   peak RSS: {peak:.0f} MB   "
          f"({len(rows) - 1} rows per page, {len(k_times)} k values; CPU cores: {os.cpu_count()})")
    worst = max(_stats(t)[1] for t in per_page.values())
    result = {"first_page_s": round(first_page, 2), "row_change_p95_ms": round(worst, 1),
              "k_change_p95_ms": round(k_p95, 1), "peak_rss_mb": round(peak, 1), "warm_up_s": round(warm_s, 1),
              "row_change_p95_ms_by_page": {k: round(_stats(v)[1], 1) for k, v in per_page.items()}}
    print(json.dumps(result))
    return result


if __name__ == "__main__":
    main()
