"""Many viewers at once: the Procfile's gunicorn serving a store to N logged-in, browser-like viewers (issue 27).

Run ``python -m benchmarks.load`` (sample models built). Loopback only, bounded in time. It builds a store of the
bundled sample (``python -m app build``, once per run folder; ``--store-rows`` is its ``--rows``: by default every
row of the sample's 569-row table), writes a users file of viewer accounts, and for
each number of viewers (default 1, 5, 10 and 20) starts ``gunicorn -c gunicorn.conf.py`` as the Procfile does
(2 workers x 16 threads, ``CANDOR_WARM=sync``, ``CANDOR_STORE``) on 127.0.0.1 with a fresh copy of the store.
Every viewer is a thread (:class:`benchmarks.load_parts.viewer.Viewer`) that logs in through ``/login``, opens a
page and then, every ``--think`` seconds (±25 %), changes the row (three times in four) or moves to another page,
sending the very Dash requests the browser sends (read from ``/_dash-dependencies`` and the layouts). Logins and
first pages are not timed; the timed window starts when every viewer has its first page and lasts ``--seconds``.

Request kinds: ``row`` (a row change's callback for a row some viewer already asked for on that page),
``row (first ask)`` (the first ask of a (page, row): a row outside the store is explained live then), ``row
change`` (both), ``page`` (Dash's page callback), ``page callback`` (the callbacks a page fires when it opens),
``job poll`` (the renderer asking a background job for its result: the Surrogate page's frontier), ``static``
(the first page's HTML, layout and callbacks' list). ``cpu_ms_per_request`` is the gunicorn process
tree's user + system CPU over the window divided by the requests answered: the figure that does not depend on
what else the shared machine runs. Memory is the sum of ``VmRSS`` (and of ``VmHWM``, the peaks) over the process
tree at the start and at the end of the window. The load average is printed before and after each run.

``--quick``: 2 viewers for 5 s over a 20-row store, for CI (its figures are not the benchmark's). The last line is
one JSON object: per run, requests/s, p50/p95 per kind, errors, CPU ms a request, memory, load averages.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import tempfile
import threading
import time
from pathlib import Path

from benchmarks.load_parts.server import PASSWORD, Gunicorn, build_store, users_file
from benchmarks.load_parts.tally import Tally
from benchmarks.load_parts.viewer import Viewer, layout_props

PAGES = ("/", "/descriptive", "/persuasive", "/surrogate", "/attention")
KINDS = ("row change", "row", "row (first ask)", "page", "page callback", "job poll", "static", "all")


def _load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def _rows(base: str, name: str, which: str) -> list[int]:
    """The rows viewers pick from: every row of the table (``all``) or the stored held-out rows (``stored``)."""
    probe = Viewer(base, name, PASSWORD, ["/"], [0], lambda *_: None, seed=0)
    probe.login()  # an anonymous visitor's shell has no row picker
    shell = layout_props(probe.http.get(base + "/_dash-layout", timeout=30).json())
    if which == "stored":
        return list(shell["row-pool"]["data"]["rows"])
    return list(range(int(shell["row-input"]["min"]), int(shell["row-input"]["max"]) + 1))


def run(n: int, seconds: float, *, folder: Path, store: Path, pages: list[str], rows: str, think: float,
        config: str = "gunicorn.conf.py", seed: int = 0) -> dict:
    """One run: gunicorn over a fresh copy of ``store``, ``n`` viewers for ``seconds``; returns its figures."""
    users, names = users_file(folder, n)
    server = Gunicorn(folder, store, users, config=config)
    load_before = _load()
    start_s = server.start()
    tally, seen, lock = Tally(), set(), threading.Lock()
    try:
        pick = _rows(server.base, names[0], rows)
        rng = random.Random(seed)
        viewers = [Viewer(server.base, name, PASSWORD, [rng.choice(pages)] + pages, pick, tally.record,
                          seed=seed * 1000 + i, think=think, seen=seen, lock=lock) for i, name in enumerate(names)]
        for v in viewers:
            v.pages = list(dict.fromkeys(v.pages))  # its first page first, then the others
            v.page, v.row = v.pages[0], rng.choice(pick)
        start, stop = threading.Barrier(n + 1), threading.Event()
        failed: list[str] = []

        def body(v: Viewer):
            try:
                v.run(start, stop)
            except (SystemExit, Exception) as err:  # noqa: BLE001 - named in the output, never silent
                failed.append(f"{v.name}: {err}")

        threads = [threading.Thread(target=body, args=(v,), daemon=True) for v in viewers]
        for t in threads:
            t.start()
        start.wait(timeout=600)
        mem_start, cpu0, t0, load_start = server.memory_mb(), server.cpu_s(), time.perf_counter(), _load()
        tally.counting = True
        stop.wait(seconds)
        stop.set()
        for t in threads:
            t.join(timeout=150)
        wall = time.perf_counter() - t0
        tally.counting = False
        cpu, mem_end = server.cpu_s() - cpu0, server.memory_mb()
    finally:
        server.stop()
    answered = tally.count()
    return {"viewers": n, "seconds": round(wall, 1), "requests": answered,
            "requests_per_s": round(answered / wall, 2), "kinds": tally.summary(),
            "errors": sum(tally.errors.values()), "errors_by_kind": dict(tally.errors),
            "error_examples": tally.examples + failed, "viewer_failures": len(failed),
            "resends": sum(v.resends for v in viewers),
            "cpu_ms_per_request": round(1000 * cpu / max(answered, 1), 1), "cpu_s": round(cpu, 1),
            "memory_start": mem_start, "memory_end": mem_end, "server_start_s": round(start_s, 1),
            "load_before": load_before, "load_start": load_start, "load_after": _load()}


def table(results: list[dict]) -> str:
    head = f"{'viewers':>7} {'req/s':>6} {'CPU ms/req':>10}  " + "  ".join(f"{k:>22}" for k in KINDS)
    lines = [head, f"{'':>27}" + "  ".join(f"{'p50 / p95 ms (n)':>22}" for _ in KINDS)]
    for r in results:
        cells = []
        for k in KINDS:
            s = r["kinds"].get(k)
            cells.append(f"{s['p50_ms']:>7,.0f} / {s['p95_ms']:>6,.0f} ({s['n']:>4})" if s else f"{'-':>22}")
        lines.append(f"{r['viewers']:>7} {r['requests_per_s']:>6.1f} {r['cpu_ms_per_request']:>10.1f}  "
                     + "  ".join(f"{c:>22}" for c in cells))
    pages = sorted({k for r in results for k in r["kinds"] if k.startswith("row change /")})
    lines += ["", "row change p50 / p95 ms by page", f"{'viewers':>7}  " + "  ".join(
        f"{p.removeprefix('row change '):>16}" for p in pages)]
    for r in results:
        lines.append(f"{r['viewers']:>7}  " + "  ".join(
            f"{r['kinds'][p]['p50_ms']:>7,.0f} / {r['kinds'][p]['p95_ms']:>6,.0f}" if p in r["kinds"] else f"{'-':>16}"
            for p in pages))
    lines.append("")
    for r in results:
        m0, m1 = r["memory_start"], r["memory_end"]
        lines.append(f"{r['viewers']:>3} viewers: {r['errors']} errors {r['errors_by_kind'] or ''}({r['resends']} resent on a new connection), memory RSS "
                     f"{m0['rss_mb']:,.0f} -> {m1['rss_mb']:,.0f} MB, peak (VmHWM) {m0['hwm_mb']:,.0f} -> "
                     f"{m1['hwm_mb']:,.0f} MB over {m1['processes']} processes; load average before {r['load_before']}, "
                     f"at start {r['load_start']}, after {r['load_after']}; server ready in {r['server_start_s']} s")
        lines.extend(f"      {e}" for e in r["error_examples"])
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> dict:
    p = argparse.ArgumentParser(prog="python -m benchmarks.load", description=__doc__.split("\n\n")[0])
    p.add_argument("--clients", default="1,5,10,20", help="numbers of viewers, one run each (default 1,5,10,20)")
    p.add_argument("--seconds", type=float, default=30, help="timed window of each run (default 30)")
    p.add_argument("--think", type=float, default=2.0, help="seconds between a viewer's actions (default 2)")
    p.add_argument("--pages", default=",".join(PAGES), help="pages viewers move between")
    p.add_argument("--rows", choices=("stored", "all"), default="stored",
                   help="rows viewers pick: the stored held-out rows, as Random row (default), or any row of the "
                        "table (a row outside the store is explained live on its first ask)")
    p.add_argument("--store-rows", default=None,
                   help="the build's --rows: 'table', 'held-out' or N held-out rows (default the build's: the sample's "
                        "whole table, 569 rows)")
    p.add_argument("--folder", type=Path, default=None,
                   help="where the store, users and runs go (kept; default a temporary folder, deleted)")
    p.add_argument("--config", default="gunicorn.conf.py",
                   help="gunicorn's settings file (default the Procfile's gunicorn.conf.py)")
    p.add_argument("--quick", action="store_true", help="2 viewers for 5 s over a 20-row store (CI)")
    args = p.parse_args(argv)
    if args.quick:
        args.clients, args.seconds, args.store_rows = "2", 5.0, args.store_rows or "20"
    counts = [int(c) for c in args.clients.split(",")]
    folder = args.folder or Path(tempfile.mkdtemp(prefix="candor-load-"))
    folder.mkdir(parents=True, exist_ok=True)
    try:
        store = build_store(folder, args.store_rows)
        stored = json.loads((store / "manifest.json").read_text())["rows"]
        results = [run(n, args.seconds, folder=folder, store=store, pages=args.pages.split(","), rows=args.rows,
                       think=args.think, config=args.config) for n in counts]
    finally:
        if args.folder is None:
            shutil.rmtree(folder, ignore_errors=True)
    print(table(results))
    print(f"({os.cpu_count()} CPU cores; gunicorn as the Procfile: gunicorn.conf.py; think {args.think} s; "
          f"rows: {args.rows}; store: {stored['stored']} of {stored.get('table', '?')} rows "
          f"({stored.get('which', 'held-out')}); pages: {args.pages})")
    out = {"runs": [{k: v for k, v in r.items() if k not in ("error_examples",)} for r in results],
           "quick": args.quick, "store_rows": stored}
    print(json.dumps(out))
    return out


if __name__ == "__main__":
    main()
