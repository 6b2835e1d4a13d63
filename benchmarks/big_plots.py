"""Per-row plots at 10k, 100k and 1M rows: the beeswarm before (one SVG dot per row) and after (WebGL, a stated sample).

Run ``python -m benchmarks.big_plots`` (``--sizes 10000 100000`` to choose; ``nice -n 10`` on a shared machine;
``--quick``: 3,000 rows, one repeat, for CI, its figures not the measured ones).

The SHAP values are **synthetic** (seeded normal values times a per-feature scale, ``N_FEATURES`` columns, a
third of the feature columns category codes): the figure's cost depends on the rows drawn, not on where the
values came from. They are written as ``.npy`` and memory-mapped read-only, as a store serves them
(:mod:`store.read`), and read into a :class:`~explainers.GlobalImportance` as the store's codec does.

Per size:

- **before**: the beeswarm builder as it was at commit b040d2b (``_old_beeswarm``, copied here verbatim but
  for mean |SHAP|, computed as it then was): one ``go.Scatter`` (SVG) trace per feature with every row.
  ``build_ms`` is the figure plus its JSON, per request; the global view's arrays were also copied once per
  worker (``copy_mb``).
- **after**: ``service_ms`` is :func:`app.services.row_plots.beeswarm_of` (once per worker: mean |SHAP| of every
  row, the sample, the colour percentiles among every row), ``build_ms`` :func:`app.views.figures_rows.beeswarm` plus
  its JSON (per request); nothing copied.
- ``json_kb``: the figure as Dash sends it (``dash._utils.to_json``, numpy arrays as base64).
- ``draw_ms``: headless Chromium (Debian's, through :mod:`tests.e2e.browser`) with the plotly.js bundle Dash
  serves (``plotly/package_data/plotly.min.js``): ``JSON.parse`` of the served figure, then ``Plotly.newPlot`` in
  an 800-pixel-wide div until two animation frames later (median of ``REPEATS`` fresh page loads; one for a
  figure over ``SLOW_MB``); server-side times are medians of ``REPEATS`` runs too (one for the old builder at 1M).
  A figure over ``MAX_BROWSER_MB`` of JSON is not sent to the browser, and one that does not draw within
  ``BROWSER_TIMEOUT_S`` seconds is given up: both reported ``"draw_ms": null`` with ``"not_drawn"`` saying why.

The last line is one JSON object: ``{"rows": {n: {"before": {...}, "after": {...}}}, ...}``.
"""
from __future__ import annotations

import argparse
import functools
import http.server
import json
import shutil
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np
import plotly
import plotly.graph_objects as go

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from app.views.figures import DIVERGING, _label_lines, _layout, esc, plain, tick_labels  # noqa: E402
from app.views import figures_rows  # noqa: E402
from app.services import row_plots  # noqa: E402
from explainers import GlobalImportance  # noqa: E402
from explainers.metrics import top_k  # noqa: E402

SIZES = (10_000, 100_000, 1_000_000)
N_FEATURES = 20
REPEATS = 3
SLOW_MB = 20
MAX_BROWSER_MB = 200
BROWSER_TIMEOUT_S = 110
"""Below selenium's own 120 s command timeout, so that a figure too slow to draw ends as a script timeout."""
CHUNK = 100_000


def _old_beeswarm(g: GlobalImportance, max_display: int = 12, seed: int = 0) -> go.Figure:
    """The builder of ``app/views/figures.py::beeswarm`` at b040d2b (before issue 14's change), for comparison."""
    order = top_k(np.abs(g.values).mean(axis=0), max_display)[::-1]
    rng = np.random.default_rng(seed)
    fig = go.Figure()
    for pos, j in enumerate(order):
        col = g.feature_values[:, j]
        pct = (np.argsort(np.argsort(col)) / max(len(col) - 1, 1))
        fig.add_trace(go.Scatter(
            x=g.values[:, j], y=pos + rng.uniform(-0.3, 0.3, len(col)), mode="markers",
            marker=dict(size=4, color=pct, colorscale=DIVERGING, cmin=0, cmax=1, showscale=pos == 0,
                        colorbar=dict(title="value<br>pct", thickness=10)),
            name=esc(g.feature_names[j]), showlegend=False,
            hovertemplate="%{fullData.name}<br>SHAP %{x:.4f}<extra></extra>"))
    fig.update_yaxes(tickvals=list(range(len(order))), ticktext=tick_labels([g.feature_names[j] for j in order]))
    se = g.standard_error
    note = "" if se is None or not np.nanmax(se, initial=0) > 0 else \
        f"<br><sup>sampled values: median standard error {plain(float(np.nanmedian(se)))}</sup>"
    return _layout(fig, f"SHAP values of {len(g.values)} rows (beeswarm){note}",
                   xaxis_title=f"SHAP value ({esc(g.output_space)})",
                   alt=f"one dot per row for the {len(order)} most important features; colour: the feature's value "
                       "percentile, blue low to red high",
                   height=max(300, (12 + 14 * _label_lines(fig.layout.yaxis.ticktext)) * len(order) + 110))


def _write_arrays(n: int, folder: Path) -> dict:
    """Synthetic global SHAP arrays of ``n`` rows as ``.npy`` files (written in chunks), memory-mapped back."""
    rng = np.random.default_rng(n)
    scale = np.linspace(0.05, 2.0, N_FEATURES)[rng.permutation(N_FEATURES)]
    out = {}
    for name in ("values", "feature_values", "se"):
        path = folder / f"global_{name}.npy"
        mm = np.lib.format.open_memmap(path, mode="w+", dtype=np.float64, shape=(n, N_FEATURES))
        for start in range(0, n, CHUNK):
            m = min(CHUNK, n - start)
            if name == "values":
                mm[start:start + m] = rng.normal(size=(m, N_FEATURES)) * scale
            elif name == "feature_values":
                block = rng.normal(size=(m, N_FEATURES))
                block[:, : N_FEATURES // 3] = rng.integers(0, 5, size=(m, N_FEATURES // 3))
                mm[start:start + m] = block
            else:
                mm[start:start + m] = 0.0  # an exact (tree) backend: standard errors 0, as the store writes them
        mm.flush()
        del mm
        out[name] = np.load(path, mmap_mode="r", allow_pickle=False)
    return out


def _global(arrays: dict, copy: bool) -> GlobalImportance:
    """The store's codec construction; ``copy=True`` as the global view was held before (a copy per worker)."""
    get = (lambda a: np.array(a, dtype=float)) if copy else (lambda a: a)
    return GlobalImportance(tuple(f"feature {j}" for j in range(N_FEATURES)), get(arrays["values"]),
                            np.asarray(arrays["feature_values"]), 0.0, "probability", "bad", "synthetic",
                            standard_error=np.asarray(arrays["se"]))


def _fresh_beeswarm(arrays: dict):
    """:func:`row_plots.beeswarm_of` of a new global view (mean |SHAP| not yet cached: the once-per-worker cost)."""
    return row_plots.beeswarm_of(_global(arrays, copy=False))


def _served_json(fig: go.Figure) -> str:
    from dash._utils import to_json

    return to_json(fig)


PAGE = """<!doctype html><html><head><meta charset="utf-8"><script src="plotly.min.js"></script></head>
<body><div id="g" style="width:800px"></div><script>
window.drawFig = async (url) => {
  const t0 = performance.now();
  const text = await (await fetch(url)).text();
  const t1 = performance.now();
  const fig = JSON.parse(text);
  const t2 = performance.now();
  await Plotly.newPlot(document.getElementById('g'), fig.data, fig.layout);
  await new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
  const t3 = performance.now();
  const gl = document.querySelectorAll('#g canvas').length, svg = document.querySelectorAll('#g .point').length;
  return {fetch_ms: t1 - t0, parse_ms: t2 - t1, plot_ms: t3 - t2, draw_ms: t3 - t1, canvases: gl, svg_points: svg};
};
</script></body></html>"""


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):  # noqa: D401  no request log on the table
        pass


class Browser:
    """Headless Chromium and a local HTTP server of ``folder`` (the page, plotly.js, the figures)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "index.html").write_text(PAGE)
        shutil.copy(Path(plotly.__file__).parent / "package_data" / "plotly.min.js", folder / "plotly.min.js")
        handler = functools.partial(_Quiet, directory=str(folder))
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        self.base = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self._ctx = self.driver = None
        self._start()

    def _start(self) -> None:
        from tests.e2e.browser import chromium_driver

        self._ctx = chromium_driver(1000, 1000)
        self.driver = self._ctx.__enter__()
        self.driver.set_script_timeout(BROWSER_TIMEOUT_S)

    def _restart(self) -> None:
        try:
            self._ctx.__exit__(None, None, None)
        except Exception:  # noqa: BLE001  a hung or crashed tab: start again
            pass
        self._start()

    def draw(self, text: str, name: str, repeats: int) -> dict:
        """Median timings of drawing the figure JSON ``text`` ``repeats`` times, each on a fresh page; ``{"not_drawn":
        why}`` on a timeout or a crashed tab."""
        (self.folder / f"{name}.json").write_text(text)
        runs = []
        try:
            for _ in range(repeats):
                self.driver.get(self.base + "/index.html")
                runs.append(self.driver.execute_async_script(
                    "window.drawFig(arguments[0]).then(arguments[1], e => arguments[1]({error: String(e)}));",
                    f"{name}.json"))
                if "error" in runs[-1]:
                    raise RuntimeError(runs[-1]["error"])
        except Exception as exc:  # noqa: BLE001  timeout, out of memory: reported as not drawn
            why = (f"not done within {BROWSER_TIMEOUT_S}-120 s ({type(exc).__name__}: the tab was still busy)"
                   if "imeout" in type(exc).__name__ else f"{type(exc).__name__}: {str(exc).splitlines()[0][:100]}")
            print(f"  {name}: not drawn ({why})", flush=True)
            self._restart()
            return {"not_drawn": why}
        finally:
            (self.folder / f"{name}.json").unlink(missing_ok=True)
        return {k: statistics.median(r[k] for r in runs) for k in runs[0]}

    def close(self) -> None:
        self._ctx.__exit__(None, None, None)
        self.httpd.shutdown()


def _timed(fn, repeats: int = 1):
    """``fn()`` and the median of ``repeats`` timings of it, ms (a shared machine's load varies)."""
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        out = fn()
        times.append((time.perf_counter() - t) * 1000)
    return out, statistics.median(times)


def measure(n: int, browser: Browser | None, work: Path) -> dict:
    """Before and after figures of ``n`` synthetic rows (module docstring)."""
    folder = work / f"n{n}"
    folder.mkdir()
    arrays = _write_arrays(n, folder)
    result = {}

    reps = 1 if n >= 1_000_000 else REPEATS
    g_old, copy_ms = _timed(functools.partial(_global, arrays, copy=True), reps)
    fig, fig_ms = _timed(functools.partial(_old_beeswarm, g_old), reps)
    text, json_ms = _timed(functools.partial(_served_json, fig), reps)
    old = {"build_ms": fig_ms + json_ms, "json_kb": len(text.encode()) / 1024, "points": sum(len(t.x) for t in fig.data),
           "trace": fig.data[0].type, "copy_mb": g_old.values.nbytes / 2**20, "copy_ms": copy_ms}
    del fig, g_old
    mb = old["json_kb"] / 1024
    old["draw"] = {"not_drawn": "no browser"} if browser is None else \
        {"not_drawn": f"JSON over {MAX_BROWSER_MB} MB, not sent"} if mb > MAX_BROWSER_MB else \
        browser.draw(text, f"old{n}", 1 if mb > SLOW_MB else REPEATS)
    del text
    result["before"] = old

    g = _global(arrays, copy=False)
    assert np.shares_memory(g.values, arrays["values"])
    b, service_ms = _timed(functools.partial(_fresh_beeswarm, arrays), REPEATS)
    fig, fig_ms = _timed(functools.partial(figures_rows.beeswarm, b), REPEATS)
    text, json_ms = _timed(functools.partial(_served_json, fig), REPEATS)
    new = {"service_ms": service_ms, "build_ms": fig_ms + json_ms, "json_kb": len(text.encode()) / 1024,
           "points": sum(len(t.x) for t in fig.data), "trace": fig.data[0].type, "copy_mb": 0.0,
           "statement": b.sample.statement()}
    new["draw"] = {"not_drawn": "no browser"} if browser is None else browser.draw(text, f"new{n}", REPEATS)
    result["after"] = new
    del arrays, g, b
    shutil.rmtree(folder, ignore_errors=True)
    return result


def _ms(d: dict, key: str = "draw_ms") -> str:
    return "-" if "not_drawn" in d else f"{d[key]:,.0f}"


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    ap.add_argument("--no-browser", action="store_true", help="server-side figures only")
    ap.add_argument("--quick", action="store_true", help="3,000 rows, one repeat: for CI (figures not asserted)")
    args = ap.parse_args(argv)
    if args.quick:  # over row_plots.MAX_DOTS, so the sample is drawn
        global REPEATS
        args.sizes, REPEATS = [3_000], 1
    work = Path(tempfile.mkdtemp(prefix="candor-big-plots-"))
    browser = None if args.no_browser else Browser(work / "www")
    rows = {}
    try:
        for n in args.sizes:
            print(f"{n:,} rows ...", flush=True)
            rows[str(n)] = measure(n, browser, work)
    finally:
        if browser is not None:
            browser.close()
        shutil.rmtree(work, ignore_errors=True)
    print(f"\nbeeswarm, {N_FEATURES} synthetic features (12 drawn), before = b040d2b's builder, after = "
          f"{row_plots.MAX_DOTS:,} rows at most (seed {row_plots.SEED})")
    head = f"{'rows':>10} {'':6} {'trace':>9} {'points':>11} {'JSON kB':>11} {'service ms':>11} {'figure+JSON ms':>15} " \
           f"{'parse ms':>9} {'draw ms':>10} {'copied MB':>10}"
    print(head)
    print("-" * len(head))
    for n, r in rows.items():
        for when in ("before", "after"):
            d = r[when]
            service = f"{d['service_ms']:,.0f}" if "service_ms" in d else "-"
            print(f"{int(n):>10,} {when:6} {d['trace']:>9} {d['points']:>11,} {d['json_kb']:>11,.0f} {service:>11} "
                  f"{d['build_ms']:>15,.0f} {_ms(d['draw'], 'parse_ms'):>9} {_ms(d['draw']):>10} {d['copy_mb']:>10,.0f}"
                  + (f"  not drawn: {d['draw']['not_drawn']}" if "not_drawn" in d["draw"] else ""))
    print("draw ms = JSON.parse + Plotly.newPlot + 2 frames in headless Chromium (software WebGL, no GPU); "
          "service ms once per worker, figure+JSON ms per request")
    summary = {"synthetic": True, "n_features": N_FEATURES, "max_dots": row_plots.MAX_DOTS, "rows": {
        n: {when: {k: (round(v, 1) if isinstance(v, float) else v) for k, v in r[when].items() if k != "draw"}
            | ({"draw_ms": None, "not_drawn": r[when]["draw"]["not_drawn"]} if "not_drawn" in r[when]["draw"]
               else {"draw_ms": round(r[when]["draw"]["draw_ms"], 1)})
            for when in ("before", "after")} for n, r in rows.items()}}
    print(json.dumps(summary, sort_keys=True))


if __name__ == "__main__":
    main()
