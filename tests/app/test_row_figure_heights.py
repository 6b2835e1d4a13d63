"""A row change keeps the Descriptive figures' heights and costs no model call (issue 14, the browser's fast path).

A figure whose height changes with the row resizes its container, and Dash's graph draws it once more after a
100 ms debounce: that was the slowest tenth of row clicks in Chromium. Oracles: the heights the builders give for
every real row of the bundled sample (one value), and, for the status line, the model's own output of the row.
"""
from __future__ import annotations

import numpy as np

from app.views import figures
from app import services
from app.services import row_view, tabular
from explainers import Explanation
from explainers._codec import value_labels

NAMES = tuple(f"feature {j}" for j in range(11)) + ("mean fractal dimension",)


def _row(values, shown, conditions=None):
    values = np.asarray(values, dtype=float)
    params = {"standard_error": tuple(np.full(values.size, 0.01))}
    if conditions is not None:
        params["conditions"] = tuple(conditions)
    return Explanation("lime" if conditions else "shap", NAMES, values, 0.3, 0.3 + values.sum(), np.asarray(shown),
                       "probability", "yes", "test", params=params)


def test_waterfall_and_lime_bars_keep_one_height_whatever_the_row():
    rng = np.random.default_rng(0)
    v = rng.normal(size=len(NAMES)) / np.arange(1, len(NAMES) + 1)
    v[-1] = 0.5  # the long-named feature is shown in both rows
    short = [f"{j}" for j in range(len(NAMES))]
    long = short[:-1] + ["1,234,567.891"]  # "mean fractal dimension = 1,234,567.891" takes two lines
    widest = tuple(long)
    a, b = _row(v, np.zeros(len(NAMES))), _row(v, np.zeros(len(NAMES)))
    free = [figures.waterfall(e, value_labels=lab).layout.height for e, lab in ((a, short), (b, long))]
    assert free[0] != free[1]  # the premise: sized by the row's own labels, the two rows differ
    kept = [figures.waterfall(e, value_labels=lab, widest_labels=widest).layout.height for e, lab in ((a, short), (b, long))]
    assert kept[0] == kept[1] == free[1]

    few = v.copy()
    few[:4] = 0.0  # LIME gave 4 features no weight: fewer bars
    cond_short = [f"{n} = 1" for n in NAMES]
    cond_long = [f"0.05 < {n} <= 1,234,567.891" for n in NAMES]
    bars = [figures.attribution_bar(_row(x, np.zeros(len(NAMES)), c), widest_labels=widest).layout.height
            for x, c in ((v, cond_short), (few, cond_long))]
    assert bars[0] == bars[1]


def test_sample_rows_all_get_the_same_waterfall_height(sample_workspace):
    """Every row of the bundled sample, with its real values as the page shows them."""
    ws = sample_workspace
    X = ws.X.to_numpy(dtype=float)
    widest = row_view.widest_value_labels()
    codec = tabular.display_codec()
    rng = np.random.default_rng(0)
    heights, free = set(), set()
    for r in range(0, len(X), 3):
        v = rng.normal(size=X.shape[1]) * 0.05  # each row shows its own ten largest
        e = Explanation("shap", tuple(map(str, ws.X.columns)), v, 0.4, 0.4 + v.sum(), X[r], "probability", "yes",
                        "test", params={})
        labels = value_labels(X[r], codec)
        heights.add(figures.waterfall(e, value_labels=labels, widest_labels=widest).layout.height)
        free.add(figures.waterfall(e, value_labels=labels).layout.height)
    assert len(free) > 1  # the premise: the sample's own labels wrap differently from row to row
    assert len(heights) == 1


def test_row_status_table_and_summary_read_the_warm_outputs_instead_of_calling_the_model(sample_workspace, monkeypatch):
    ws = sample_workspace
    rows = [int(r) for r in ws.test_idx[:5]]
    expected = [float(ws.output(ws.X.iloc[[r]])[0]) for r in rows]  # the model's own output, row by row
    tabular.model_outputs()  # what the warm-up computes
    calls = []
    real = type(ws).output
    monkeypatch.setattr(type(ws), "output", lambda self, X: calls.append(len(X)) or real(self, X))
    texts = [services.row_status(r) for r in rows]
    records, _ = services.data_page(0, 12)  # the landing page's table and model card read the same outputs
    summary = services.model_summary()
    assert calls == []
    assert [rec["_output"] for rec in records] == [round(float(v), 3) for v in ws.output(ws.X.iloc[:12])]
    assert summary.metrics["accuracy"] == float(((ws.output(ws.X.iloc[ws.test_idx]) >= 0.5) == ws.y[ws.test_idx]).mean())
    assert [t.rsplit(" ", 1)[1] for t in texts] == [f"{p:.3f}" for p in expected]
    assert all(t.startswith("held-out · ") for t in texts)


def test_row_figures_built_unvalidated_pass_plotly_validation_unchanged(sample_workspace):
    """The row figures skip Plotly's validation for speed (``figures.unvalidated_figure``); built again from
    their own JSON with validation on, every property is accepted and the JSON is the same (a misspelt
    property, or a value Plotly would coerce, fails here). Oracle: plotly's validators."""
    import json

    import plotly.graph_objects as go

    rows = [int(r) for r in sample_workspace.test_idx[:3]]
    checked = 0
    for r in rows:
        view = services.local_view(r, k=5)
        for fig in (figures.waterfall(view.shap, value_labels=view.labels, widest_labels=view.widest),
                    figures.attribution_bar(view.lime, title="LIME", widest_labels=view.widest)):
            mine = json.loads(fig.to_json())
            assert isinstance(mine["layout"]["template"], dict)  # resolved: Plotly.js knows no template names
            again = json.loads(go.Figure(mine).to_json())  # raises ValueError on any invalid property
            assert again == mine
            checked += 1
    assert checked == 2 * len(rows)


def test_persuasive_and_attention_figures_built_unvalidated_pass_plotly_validation(sample_workspace):
    """The Persuasive page's shown items and row trade-off, and the Attention page's heatmaps, are built
    unvalidated too (a row change redraws them): their JSON passes Plotly's validators unchanged, and the heatmaps
    equal what ``make_subplots`` and ``update_*`` build with validation on (the oracle)."""
    import json

    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    from app.views import figures_attention, figures_persuasive

    def same_after_validation(fig):
        mine = json.loads(fig.to_json())
        assert isinstance(mine["layout"]["template"], dict)
        assert json.loads(go.Figure(mine).to_json()) == mine  # raises ValueError on any invalid property
        return mine

    row = int(sample_workspace.test_idx[0])
    view = services.persuasive_view(row, 5, "exact", None, [])
    items = same_after_validation(figures_persuasive.persuasive_items(view.simplification, "shown"))
    assert len(items["data"][0]["y"]) == len(view.simplification.items)
    curve = same_after_validation(figures_persuasive.row_tradeoff(view.curve, view.simplification))
    assert curve["layout"]["shapes"][0]["x0"] == view.simplification.complexity_after["n_chunks"]

    rng = np.random.default_rng(0)
    cls, names = rng.dirichlet(np.ones(6), size=(3, 4)), tuple(f"f{j}" for j in range(6))
    mine = same_after_validation(figures_attention.attention_heatmaps(cls, names))
    old = make_subplots(rows=3, cols=1, shared_xaxes=True, vertical_spacing=0.08,
                        subplot_titles=[f"layer {l}" for l in range(3)])
    for l in range(3):
        old.add_trace(go.Heatmap(z=cls[l], x=figures.tick_labels(names, 20), y=[f"head {h}" for h in range(4)],
                                 coloraxis="coloraxis", hovertemplate="%{y}, %{x}: %{z:.3f}<extra></extra>"),
                      row=l + 1, col=1)
    old.update_layout(coloraxis=dict(colorscale="Viridis", colorbar=dict(title="attention")))
    old.update_xaxes(tickangle=45)
    old = json.loads(figures._layout(old, "Attention from CLS to each feature token", height=170 * 3 + 160).to_json())
    assert mine["data"] == old["data"]
    for key in ("xaxis", "xaxis2", "xaxis3", "yaxis", "yaxis3", "annotations", "coloraxis", "height", "title"):
        assert mine["layout"][key] == old["layout"][key], key
