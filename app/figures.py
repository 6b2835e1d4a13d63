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


def plain(value: float, digits: int = 3) -> str:
    """A number as people read it, never in scientific notation: ``digits`` significant digits, at most 8 decimals.

    ``0.000123456`` -> ``"0.000123"``; ``1234.5`` -> ``"1234"`` (``digits`` only adds decimals); values
    below 0.00000001 in magnitude read ``"0"``; NaN reads ``"n/a"``.
    """
    v = float(value)
    if v != v:
        return "n/a"
    if abs(v) < 1e-8:
        return "0"
    decimals = int(min(8, max(0, digits - 1 - np.floor(np.log10(abs(v))))))
    return f"{v:.{decimals}f}"


def gap_text(gap: float) -> str:
    """An additivity gap for display: ``"< 0.000001"`` when below a millionth, else :func:`plain`."""
    return "< 0.000001" if gap < 1e-6 else plain(gap)


ROUGH = "≈ "
"""Prefix of a feature whose standard error is larger than the gap to a neighbour in the ranking."""
ROUGH_NOTE = "≈: its standard error is larger than the gap to a neighbour in the ranking (their order is not resolved)"


def standard_errors(e: Explanation) -> np.ndarray | None:
    """``e.params["standard_error"]`` as an array of shape (n_features,), or None if absent or malformed."""
    se = e.params.get("standard_error") if isinstance(e.params, dict) else None
    if se is None:
        return None
    se = np.asarray(se, dtype=float).ravel()
    return se if se.shape == e.values.shape else None


def rank_unresolved(scores: np.ndarray, se: np.ndarray | None) -> np.ndarray:
    """True where a feature's standard error exceeds the gap in ``|score|`` to its neighbour above or below.

    Features are ranked by ``|score|`` (ties by index, as :meth:`Explanation.ranking`); NaN or missing
    standard errors flag nothing. Returns a bool array of shape (n_features,).
    """
    scores = np.abs(np.asarray(scores, dtype=float))
    flags = np.zeros(scores.size, bool)
    if se is None or scores.size < 2:
        return flags
    order = np.lexsort((np.arange(scores.size), -scores))
    ranked, err = scores[order], np.asarray(se, dtype=float)[order]
    gaps = np.abs(np.diff(ranked))
    nearest = np.minimum(np.r_[np.inf, gaps], np.r_[gaps, np.inf])
    flags[order] = np.isfinite(err) & (err > nearest)
    return flags


def _error_note(se: np.ndarray | None, flags: np.ndarray, shown, say_exact: bool = False) -> str:
    """A title line saying what the error bars are and what ≈ means (for exact values only if ``say_exact``)."""
    if se is None or not np.isfinite(se).any():
        return "" if se is None else "<br><sup>no standard error reported</sup>"
    if not np.nanmax(se) > 0:
        return "<br><sup>exact values (standard error 0)</sup>" if say_exact else ""
    n = int(flags[list(shown)].sum())
    return (f"<br><sup>bars: ± 1 standard error (largest {plain(np.nanmax(se))})"
            + (f"; {n} shown {'feature' if n == 1 else 'features'} marked {ROUGH_NOTE}" if n else "") + "</sup>")


def importance_bar(g: GlobalImportance, max_display: int = 15) -> go.Figure:
    """Mean |SHAP| per feature, largest on top, with ± its standard error from the rows' sampling errors."""
    imp = g.importance
    se = g.importance_standard_error if g.standard_error is not None else None
    flags = rank_unresolved(imp, se)
    order = top_k(imp, max_display)[::-1]
    err = se[order] if se is not None else np.zeros(len(order))
    fig = go.Figure(go.Bar(x=imp[order], y=[(ROUGH if flags[j] else "") + esc(g.feature_names[j]) for j in order],
                           orientation="h", marker_color=GREY, customdata=err,
                           error_x=dict(type="data", array=err, visible=bool(np.nanmax(err, initial=0) > 0),
                                        color="#444", thickness=1.2, width=3),
                           hovertemplate="%{y}: %{x:.4f} ± %{customdata:.4f}<extra></extra>"))
    return _layout(fig, f"Global importance: mean |SHAP| ({g.output_space} of {esc(g.target)})"
                        + _error_note(se, flags, order), xaxis_title=f"mean |attribution| ({esc(g.output_space)})")


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
    se = g.standard_error
    note = "" if se is None or not np.nanmax(se, initial=0) > 0 else \
        f"<br><sup>sampled values: median standard error {plain(float(np.nanmedian(se)))}</sup>"
    return _layout(fig, f"SHAP values of {len(g.values)} rows (beeswarm){note}",
                   xaxis_title=f"SHAP value ({esc(g.output_space)})")


def waterfall(e: Explanation, max_display: int = 10, value_labels=None) -> go.Figure:
    """base_value → largest attributions → prediction, the rest summed in one bar.

    ``value_labels`` (one display text per feature, from the services: the user's levels and dates)
    replaces the numbers ``feature_values`` printed with 4 significant digits.
    """
    order = top_k(e.values, max_display)
    rest = np.setdiff1d(np.arange(e.values.size), order)
    se = standard_errors(e)
    flags = rank_unresolved(e.values, se)
    shown = value_labels if value_labels is not None else [plain(v, 4) for v in e.feature_values]
    labels = [f"{ROUGH if flags[j] else ''}{esc(e.feature_names[j])} = {esc(shown[j])}" for j in order]
    vals = list(e.values[order])
    err = list(se[order]) if se is not None else [0.0] * len(order)
    if rest.size:
        labels.append(f"{rest.size} other features")
        vals.append(float(e.values[rest].sum()))
        err.append(float("nan"))  # the errors of a sum of sampled values are correlated: not shown
    text = [plain(v) + (f" ± {plain(s)}" if s == s and s > 0 else "") for v, s in zip(vals, err)]
    y = ["base_value (E[f])"] + labels + ["prediction f(x)"]
    fig = go.Figure(go.Waterfall(
        orientation="h", measure=["absolute"] + ["relative"] * len(vals) + ["total"],
        y=y, x=[e.base_value] + vals + [e.prediction], text=[plain(e.base_value)] + text + [plain(e.prediction)],
        textposition="outside", increasing=dict(marker_color=POS), decreasing=dict(marker_color=NEG),
        totals=dict(marker_color=GREY), connector=dict(line=dict(color="#ccc")),
        hovertemplate="%{y}: %{text}<extra></extra>"))
    bars = np.nan_to_num(np.asarray(err, dtype=float))
    if bars.max(initial=0) > 0:  # error bars at the end of each step
        ends = e.base_value + np.cumsum(vals)
        fig.add_trace(go.Scatter(x=ends, y=labels, mode="markers", marker=dict(size=1, color="rgba(0,0,0,0)"),
                                 error_x=dict(type="data", array=bars, color="#444", thickness=1.2, width=4),
                                 hoverinfo="skip", showlegend=False))
    fig.update_yaxes(autorange="reversed")
    return _layout(fig, f"SHAP: from base_value {plain(e.base_value)} to prediction {plain(e.prediction)} "
                        f"(additivity gap {gap_text(e.additivity_gap)})" + _error_note(se, flags, order, True),
                   xaxis_title=f"{esc(e.output_space)} of {esc(e.target)}")


def attribution_bar(e: Explanation, max_display: int = 10, title: str | None = None,
                    values: np.ndarray | None = None) -> go.Figure:
    """Signed attributions of the largest features, largest on top."""
    v = e.values if values is None else np.asarray(values)
    order = [j for j in top_k(v, max_display) if v[j] != 0][::-1]
    se = standard_errors(e)
    flags = rank_unresolved(v, se)
    err = np.nan_to_num(se[order]) if se is not None else np.zeros(len(order))
    fig = go.Figure(go.Bar(x=v[order], y=[(ROUGH if flags[j] else "") + esc(e.feature_names[j]) for j in order],
                           orientation="h", marker_color=[POS if v[j] > 0 else NEG for j in order], customdata=err,
                           error_x=dict(type="data", array=err, visible=bool(err.max(initial=0) > 0), color="#444",
                                        thickness=1.2, width=3),
                           hovertemplate="%{y}: %{x:.4f} ± %{customdata:.4f}<extra></extra>"))
    note = _error_note(se, flags, order)
    return _layout(fig, (title or f"{e.method.upper()} attributions") + note,
                   xaxis_title=f"attribution ({esc(e.output_space)})",
                   height=max(260, 26 * len(order) + 90) + (20 if note else 0))


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

    CART appears twice: leaf by leaf ("CART") and drawn as a decision set with a default rule
    ("CART AS DECISION SET", the fair comparison with MUSE). Every point has its Wilson 95 %
    interval as an error bar; the trivial surrogate (always the training majority label) is a
    dotted line, and the title names the points that do not beat it.
    Each point carries ``customdata = (method, budget)`` so that a click can show it.
    """
    colours = {**_METHOD_COLOURS, "cart_dl": "#2ca02c"}
    names = {"muse": "MUSE", "cart": "CART", "cart_dl": "CART AS DECISION SET", "flat": "FLAT"}
    fig = make_subplots(rows=1, cols=3, shared_yaxes=True, horizontal_spacing=0.04,
                        subplot_titles=("vs rules", "vs predicates", "vs neighborhoods"))
    for method in ("muse", "cart", "cart_dl", "flat"):
        pts = f.curve(method)
        if not pts:
            continue
        lo = [p.agreement - getattr(p, "agreement_low", float("nan")) for p in pts]
        hi = [getattr(p, "agreement_high", float("nan")) - p.agreement for p in pts]
        for col, attr in enumerate(("n_rules", "n_predicates", "n_neighborhoods"), start=1):
            fig.add_trace(go.Scatter(
                x=[getattr(p, attr) for p in pts], y=[p.agreement for p in pts], mode="lines+markers",
                name=names.get(method, method.upper()), legendgroup=method, showlegend=col == 1,
                marker=dict(color=colours.get(method, GREY), size=9),
                line=dict(color=colours.get(method, GREY), dash="dash" if method == "cart_dl" else "solid"),
                error_y=dict(type="data", array=hi, arrayminus=lo, thickness=1, width=3),
                customdata=[(p.method, p.budget, p.fit_seconds, getattr(p, "agreement_low", float("nan")),
                             getattr(p, "agreement_high", float("nan"))) for p in pts],
                hovertemplate=(f"{names.get(method, method.upper())} budget %{{customdata[1]}}<br>"
                               "agreement %{y:.3f} (95% CI %{customdata[3]:.3f} to %{customdata[4]:.3f})<br>"
                               "fit %{customdata[2]:.1f} s<extra>click to show</extra>")), row=1, col=col)
    triv = getattr(f, "trivial_agreement", float("nan"))
    title = f"Fidelity vs complexity ({f.n_eval} held-out rows); click a point to show its rules"
    if triv == triv:
        for col in (1, 2, 3):
            fig.add_hline(y=triv, line=dict(color="black", dash="dot", width=1), row=1, col=col)
        fig.add_trace(go.Scatter(x=[None], y=[None], mode="lines", line=dict(color="black", dash="dot", width=1),
                                 name=esc(f"trivial: always {f.trivial_label} ({triv:.3f})"), hoverinfo="skip"))
        weak = [f"{names.get(p.method, p.method)} {p.budget}" for p in f.points if not p.agreement > triv]
        if weak:
            title += f"<br>⚠ not better than always {esc(f.trivial_label)}: {esc(', '.join(weak))}"
    if selected and "|" in selected:
        _, method, budget = selected.split("|")
        p = next((p for p in f.points if p.method == method and p.budget == int(budget)), None)
        if p is not None:
            for col, attr in enumerate(("n_rules", "n_predicates", "n_neighborhoods"), start=1):
                fig.add_trace(go.Scatter(x=[getattr(p, attr)], y=[p.agreement], mode="markers", showlegend=False,
                                         marker=dict(size=16, symbol="diamond-open", color="black"),
                                         hoverinfo="skip"), row=1, col=col)
    fig.update_yaxes(title_text="agreement (held-out, 95% CI)", row=1, col=1)
    fig = _layout(fig, title, legend=dict(orientation="h", y=-0.2))
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
