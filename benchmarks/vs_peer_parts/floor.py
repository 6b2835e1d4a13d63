"""The floor under a row click in :mod:`benchmarks.vs_peer`: a bare Dash app that does nothing but what any Dash
page showing a row must, measured the same way in the same Chromium.

The app has one button and one callback. The callback returns a line of Markdown and ``figures`` horizontal bar
charts of ``bars`` bars (random values, labels ``name = value``, 26 px a bar, as Candor's SHAP waterfall and LIME
bar of a row are drawn), built by plotly, and computes nothing else. It is served by waitress with 16 threads, as
``python -m app`` serves Candor, in a process of its own; each click is timed from the click to the page settled
(:mod:`benchmarks.browser_timing`: no Dash request in flight, no figure changing for 500 ms, not counted).

What it shows: the time a click costs in Dash and Plotly here, whatever the server computes. A target below it
(for example a row click at 0.1x the peer's p95) cannot be met by a Dash page that redraws those figures.

``python -m benchmarks.vs_peer_parts.floor serve PORT BARS FIGURES`` serves the app (used by :func:`measure`).
"""
from __future__ import annotations

import subprocess
import sys
import time

import numpy as np
import requests

from benchmarks import browser_timing as bt
from benchmarks.vs_peer_parts import ROOT

SHOWN_BARS = 11
"""Bars in each of the Descriptive page's two row charts on a table of more columns: the 10 largest attributions
(``app.views.figures.waterfall`` and ``attribution_bar``, ``max_display=10``) and one for the rest."""


def _app(bars: int, figures: int):
    import dash
    import plotly.graph_objects as go
    from dash import Input, Output, dcc, html

    names = [f"feature {i}" for i in range(bars)]
    app = dash.Dash(__name__)
    app.layout = html.Div([html.Button("Random row", id="row-random"), dcc.Markdown(id="floor-md")]
                          + [dcc.Graph(id=f"floor-{i}") for i in range(figures)])

    @app.callback(Output("floor-md", "children"), *[Output(f"floor-{i}", "figure") for i in range(figures)],
                  Input("row-random", "n_clicks"))
    def draw(n):
        rng = np.random.default_rng(n or 0)
        out = []
        for _ in range(figures):
            values = rng.uniform(-1, 1, bars)
            out.append(go.Figure(go.Bar(x=values, y=[f"{k} = {rng.integers(100)}" for k in names], orientation="h",
                                        text=[f"{v:+.2f}" for v in values]),
                                 layout=dict(height=max(300, 26 * bars + 110), margin=dict(l=200, r=20, t=40, b=40))))
        return [f"Row **{n}**: prediction {rng.random():.3f}", *out]

    return app


def measure(bars: int, figures: int = 2, clicks: int = 20, timeout: float = 120) -> dict:
    """Start the bare app cold in its own process and click its button in a fresh Chromium.

    Parameters
    ----------
    bars : int
        Bars in each chart.
    figures : int
        Charts the callback returns.
    clicks : int
        Clicks measured (two more are made first and not counted: the app's first draws).
    timeout : float
        Seconds allowed for the app to answer and for each click to settle.

    Returns
    -------
    dict
        ``floor_p50_ms``, ``floor_p95_ms`` (ms from the click to settled), ``floor_clicks``, ``floor_bars``,
        ``floor_figures``.

    Raises
    ------
    RuntimeError
        If the app gives no HTTP 200 within ``timeout``.
    TimeoutError
        If a click does not settle within ``timeout``.
    """
    from tests.e2e.browser import chromium_driver
    from tests.e2e.serving import free_port

    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "benchmarks.vs_peer_parts.floor", "serve", str(port), str(bars),
                             str(figures)], cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.time() + timeout
        while True:
            try:
                if requests.get(base + "/", timeout=5).status_code == 200:
                    break
            except requests.RequestException:
                if time.time() > deadline or proc.poll() is not None:
                    raise RuntimeError("the floor app did not start") from None
            time.sleep(0.1)
        drawn = f"return document.querySelectorAll('.js-plotly-plot .main-svg').length >= {figures};"
        settled = []
        with chromium_driver(width=1400, height=1000) as driver:
            bt.install_probe(driver)
            driver.get(base + "/")
            bt.wait_settled(driver, drawn, timeout=timeout)
            for _ in range(clicks + 2):
                bt.reset_click(driver)
                before = bt.click(driver, "document.getElementById('row-random')")
                st = bt.wait_settled(driver, drawn, since_started=before, timeout=timeout)
                settled.append(max(st["settled_ms"] - st["clickAt"], 0.0))
        ms = np.asarray(settled[2:])
        return {"floor_p50_ms": round(float(np.percentile(ms, 50)), 1),
                "floor_p95_ms": round(float(np.percentile(ms, 95)), 1), "floor_clicks": int(ms.size),
                "floor_bars": bars, "floor_figures": figures}
    finally:
        proc.terminate()
        proc.wait(timeout=20)


if __name__ == "__main__" and sys.argv[1:2] == ["serve"]:
    import waitress

    port, n_bars, n_figures = (int(a) for a in sys.argv[2:5])
    waitress.serve(_app(n_bars, n_figures).server, host="127.0.0.1", port=port, threads=16, _quiet=True)
