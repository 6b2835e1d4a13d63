"""Turn :mod:`explainers` dataclasses into Plotly figures. Imports plotly, never dash.

Colour convention: attributions pushing toward the explained class are red,
against it blue (as SHAP's plots); attention is a sequential scale.

Plotly draws a subset of HTML in every text it shows (``<br>``, ``<b>``, ``<sub>``, ``<span style>``,
``<a href>``). Every string that comes from the user (feature names, levels, class labels, rule text,
words, file names) goes through :func:`esc` where a figure is built, before our own markup is added
around it; user strings never go into a ``hovertemplate`` (``%{...}`` would be read as a variable).
"""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio
from plotly.subplots import make_subplots

from explainers import Explanation, GlobalImportance
from explainers.metrics import top_k
from explainers.types import AgreementReport

POS, NEG, GREY = "#d62728", "#1f77b4", "#9aa0a6"
# A small template with the look of "plotly_white": assigning the full built-in template deep-copies
# definitions for every trace type on each figure (~25 ms a figure, measured on the Persuasive page).
pio.templates["candor"] = go.layout.Template(layout=dict(
    paper_bgcolor="white", plot_bgcolor="white", font=dict(color="#2a3f5f"), hoverlabel=dict(align="left"),
    xaxis=dict(gridcolor="#EBF0F8", linecolor="#EBF0F8", zerolinecolor="#EBF0F8", automargin=True,
               ticks="", zerolinewidth=2),
    yaxis=dict(gridcolor="#EBF0F8", linecolor="#EBF0F8", zerolinecolor="#EBF0F8", automargin=True,
               ticks="", zerolinewidth=2),
    colorway=["#636efa", "#EF553B", "#00cc96", "#ab63fa", "#FFA15A", "#19d3f3", "#FF6692", "#B6E880"]))
TEMPLATE = "candor"
_BASE = dict(template=TEMPLATE, margin=dict(l=10, r=10, t=40, b=40), font=dict(size=12))


def esc(text) -> str:
    """User text as Plotly must draw it literally: ``&``, ``<`` and ``>`` as HTML entities.

    Parameters
    ----------
    text : object
        Any value; it is shown as ``str(text)``.

    Returns
    -------
    str
        ``'<a href="x">y</a>'`` becomes ``'&lt;a href="x"&gt;y&lt;/a&gt;'``, which Plotly draws as typed
        (no link, no line break, no style). Distinct inputs stay distinct.
    """
    return str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def esc_all(texts) -> list[str]:
    """:func:`esc` of every item of ``texts``, as a list."""
    return [esc(t) for t in texts]


def _layout(fig: go.Figure, title: str, **kw) -> go.Figure:
    fig.update_layout(title=dict(text=title, x=0.01, font=dict(size=14)), **_BASE, **kw)
    return fig


def importance_bar(g: GlobalImportance, max_display: int = 15) -> go.Figure:
    """Mean |SHAP| per feature, largest on top."""
    imp = g.importance
    order = top_k(imp, max_display)[::-1]
    fig = go.Figure(go.Bar(x=imp[order], y=[esc(g.feature_names[j]) for j in order], orientation="h",
                           marker_color=GREY, hovertemplate="%{y}: %{x:.4f}<extra></extra>"))
    return _layout(fig, f"Global importance: mean |SHAP| ({g.output_space} of {esc(g.target)})",
                   xaxis_title=f"mean |attribution| ({esc(g.output_space)})")


def beeswarm(g: GlobalImportance, max_display: int = 12, seed: int = 0) -> go.Figure:
    """One dot per row and feature: x = SHAP value, colour = feature value percentile."""
    order = top_k(g.importance, max_display)[::-1]
    rng = np.random.default_rng(seed)
    fig = go.Figure()
    for pos, j in enumerate(order):
        col = g.feature_values[:, j]
        pct = (np.argsort(np.argsort(col)) / max(len(col) - 1, 1))
        fig.add_trace(go.Scatter(
            x=g.values[:, j], y=pos + rng.uniform(-0.3, 0.3, len(col)), mode="markers",
            marker=dict(size=4, color=pct, colorscale="RdBu_r", cmin=0, cmax=1, showscale=pos == 0,
                        colorbar=dict(title="value<br>pct", thickness=10)),
            name=esc(g.feature_names[j]), showlegend=False,
            hovertemplate="%{fullData.name}<br>SHAP %{x:.4f}<extra></extra>"))
    fig.update_yaxes(tickvals=list(range(len(order))), ticktext=[esc(g.feature_names[j]) for j in order])
    return _layout(fig, f"SHAP values of {len(g.values)} rows (beeswarm)", xaxis_title=f"SHAP value ({esc(g.output_space)})")


def waterfall(e: Explanation, max_display: int = 10, value_labels=None) -> go.Figure:
    """base_value → largest attributions → prediction, the rest summed in one bar.

    ``value_labels`` (one display text per feature, from the services: the user's levels and dates)
    replaces the numbers ``feature_values`` printed with 4 significant digits.
    """
    order = top_k(e.values, max_display)
    rest = np.setdiff1d(np.arange(e.values.size), order)
    shown = value_labels if value_labels is not None else [f"{v:.4g}" for v in e.feature_values]
    labels = [f"{esc(e.feature_names[j])} = {esc(shown[j])}" for j in order]
    vals = list(e.values[order])
    if rest.size:
        labels.append(f"{rest.size} other features")
        vals.append(float(e.values[rest].sum()))
    fig = go.Figure(go.Waterfall(
        orientation="h", measure=["absolute"] + ["relative"] * len(vals) + ["total"],
        y=["base_value (E[f])"] + labels + ["prediction f(x)"], x=[e.base_value] + vals + [e.prediction],
        increasing=dict(marker_color=POS), decreasing=dict(marker_color=NEG), totals=dict(marker_color=GREY),
        connector=dict(line=dict(color="#ccc")), hovertemplate="%{y}: %{x:.4f}<extra></extra>"))
    fig.update_yaxes(autorange="reversed")
    return _layout(fig, f"SHAP: from base_value {e.base_value:.3f} to prediction {e.prediction:.3f} "
                        f"(additivity gap {e.additivity_gap:.1e})",
                   xaxis_title=f"{esc(e.output_space)} of {esc(e.target)}")


def attribution_bar(e: Explanation, max_display: int = 10, title: str | None = None,
                    values: np.ndarray | None = None) -> go.Figure:
    """Signed attributions of the largest features, largest on top."""
    v = e.values if values is None else np.asarray(values)
    order = [j for j in top_k(v, max_display) if v[j] != 0][::-1]
    fig = go.Figure(go.Bar(x=v[order], y=[esc(e.feature_names[j]) for j in order], orientation="h",
                           marker_color=[POS if v[j] > 0 else NEG for j in order],
                           hovertemplate="%{y}: %{x:.4f}<extra></extra>"))
    return _layout(fig, title or f"{e.method.upper()} attributions", xaxis_title=f"attribution ({esc(e.output_space)})",
                   height=max(260, 26 * len(order) + 90))


def attention_heatmaps(cls: np.ndarray, feature_names: tuple[str, ...]) -> go.Figure:
    """CLS-to-feature attention: one heatmap per layer, heads as rows."""
    n_layers, n_heads, _ = cls.shape
    fig = make_subplots(rows=n_layers, cols=1, shared_xaxes=True, vertical_spacing=0.08,
                        subplot_titles=[f"layer {l}" for l in range(n_layers)])
    for l in range(n_layers):
        fig.add_trace(go.Heatmap(z=cls[l], x=esc_all(feature_names), y=[f"head {h}" for h in range(n_heads)],
                                 coloraxis="coloraxis",
                                 hovertemplate="%{y}, %{x}: %{z:.3f}<extra></extra>"), row=l + 1, col=1)
    fig.update_layout(coloraxis=dict(colorscale="Viridis", colorbar=dict(title="attention")))
    fig.update_xaxes(tickangle=45)
    return _layout(fig, "Attention from CLS to each feature token", height=170 * n_layers + 160)


def head_agreement(report: AgreementReport) -> go.Figure:
    """Spearman ρ of each head's attention with |attribution|, layers x heads."""
    rho = report.per_head
    fig = go.Figure(go.Heatmap(z=rho, x=[f"head {h}" for h in range(rho.shape[1])],
                               y=[f"layer {l}" for l in range(rho.shape[0])], zmin=-1, zmax=1,
                               colorscale="RdBu_r", text=np.round(rho, 2), texttemplate="%{text}",
                               colorbar=dict(title="ρ"), hovertemplate="%{y}, %{x}: ρ = %{z:.3f}<extra></extra>"))
    fig.update_yaxes(autorange="reversed")
    return _layout(fig, f"Spearman ρ: {report.query} attention vs |{report.attribution_method}|", height=260)


_METHOD_COLOURS = {"muse": POS, "cart": GREY, "flat": NEG}


def frontier(f, selected: str | None = None) -> go.Figure:
    """Held-out agreement against rules, predicates and neighborhoods for MUSE, CART and the flat set.

    Each point carries ``customdata = (method, budget)`` so that a click can show it.
    """
    fig = make_subplots(rows=1, cols=3, shared_yaxes=True, horizontal_spacing=0.04,
                        subplot_titles=("vs rules", "vs predicates", "vs neighborhoods"))
    for method in ("muse", "cart", "flat"):
        pts = f.curve(method)
        if not pts:
            continue
        for col, attr in enumerate(("n_rules", "n_predicates", "n_neighborhoods"), start=1):
            fig.add_trace(go.Scatter(
                x=[getattr(p, attr) for p in pts], y=[p.agreement for p in pts], mode="lines+markers",
                name=method.upper(), legendgroup=method, showlegend=col == 1,
                marker=dict(color=_METHOD_COLOURS[method], size=9), line=dict(color=_METHOD_COLOURS[method]),
                customdata=[(p.method, p.budget, p.fit_seconds) for p in pts],
                hovertemplate=(f"{method.upper()} budget %{{customdata[1]}}<br>agreement %{{y:.3f}}<br>"
                               "fit %{customdata[2]:.1f} s<extra>click to show</extra>")), row=1, col=col)
    if selected and "|" in selected:
        _, method, budget = selected.split("|")
        p = next((p for p in f.points if p.method == method and p.budget == int(budget)), None)
        if p is not None:
            for col, attr in enumerate(("n_rules", "n_predicates", "n_neighborhoods"), start=1):
                fig.add_trace(go.Scatter(x=[getattr(p, attr)], y=[p.agreement], mode="markers", showlegend=False,
                                         marker=dict(size=16, symbol="diamond-open", color="black"),
                                         hoverinfo="skip"), row=1, col=col)
    fig.update_yaxes(title_text="agreement (held-out)", row=1, col=1)
    fig = _layout(fig, f"Fidelity vs complexity ({f.n_eval} held-out rows); click a point to show its rules",
                  legend=dict(orientation="h", y=-0.2))
    fig.update_layout(margin=dict(t=80))
    return fig


def confusion(detail) -> go.Figure:
    """Surrogate-vs-model confusion matrix on held-out rows (rows: model's label)."""
    labels = esc_all(detail.classes)
    fig = go.Figure(go.Heatmap(z=detail.confusion, x=[f"surrogate: {c}" for c in labels],
                               y=[f"model: {c}" for c in labels], colorscale="Greys", showscale=False,
                               text=detail.confusion, texttemplate="%{text}",
                               hovertemplate="%{y}, %{x}: %{z} rows<extra></extra>"))
    fig.update_yaxes(autorange="reversed")
    return _layout(fig, f"Surrogate vs model on {detail.n_rows} held-out rows (agreement {detail.agreement:.3f})")
