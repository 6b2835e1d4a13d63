"""Persuasive page figures: the shown items, the row's and the global fidelity-vs-complexity tradeoffs.

Imports plotly, never dash. Colours follow :mod:`app.figures` (red towards the
explained class, blue against).
"""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from app.figures import GREY, NEG, POS, _layout, esc

_TALL = dict(l=10, r=10, t=75, b=40)
ROW_MEASURES = (("sufficiency", "sufficiency (0 is best)", "#ff7f0e"),
                ("comprehensiveness", "comprehensiveness", POS),
                ("spearman", "Spearman ρ with the full ranking", "#2ca02c"),
                ("mass_retained", "share of |attribution| shown", GREY),
                ("r2_restricted", "local R² of a fit on the shown features", "#9467bd"))
COST_ROWS = (("mass_retained", "Share of |attribution| shown", "{:.1%}"), ("sufficiency", "Sufficiency", None),
             ("comprehensiveness", "Comprehensiveness", None), ("aopc_comprehensiveness", "AOPC comprehensiveness", None),
             ("deletion_auc_norm", "Deletion AUC (share of the gap)", None),
             ("insertion_auc_norm", "Insertion AUC (share of the gap)", None),
             ("spearman", "Spearman ρ", None), ("top_k_overlap", "Top-k overlap", None),
             ("r2_restricted", "Local R², shown features", None), ("additivity_gap", "Additivity gap", None))
"""What a simplification costs, as the Persuasive page and the report show it: (key of ``fidelity_after``,
label, format or None for :func:`app.components.fmt`)."""


def persuasive_items(s, title: str) -> go.Figure:
    """One bar per shown item (feature or group), with the number or word the reader is shown.

    ``title`` is Plotly markup written by the caller (user text in it escaped with :func:`app.figures.esc`);
    item names are escaped here.
    """
    items = list(s.items)[::-1]
    vmax = max((abs(it.value) for it in items), default=1.0) or 1.0
    m = len(items)
    x, text = [], []
    for r, it in enumerate(items):
        rank = m - r
        if it.shown is not None:
            x.append(it.shown)
            text.append(f"{it.shown:+.3g}")
        else:
            x.append(np.sign(it.value) * vmax * (m - rank + 1) / m)
            text.append(it.strength or ("up" if it.value > 0 else "down"))
    fig = go.Figure(go.Bar(x=x, y=[esc(it.name) for it in items], orientation="h", text=text, textposition="auto",
                           marker_color=[POS if it.value > 0 else NEG for it in items],
                           customdata=[it.value for it in items],
                           hovertemplate="%{y}: shown %{text}<br>exact %{customdata:.4f}<extra></extra>"))
    fig = _layout(fig, title, xaxis_title=f"attribution ({esc(s.parent.output_space)})" if all(
        it.shown is not None for it in items) else "direction and rank only (bar length = rank)",
                  height=max(260, 26 * m + 110))
    return fig.update_layout(margin=_TALL)


def row_tradeoff(curve, current) -> go.Figure:
    """Fidelity measures against complexity (concepts named) for every k; the current choice marked.

    ``curve`` holds one point per k with ``fidelity_after`` and ``complexity_after``
    (:class:`explainers.persuasive.CurvePoint`); ``current`` is the chosen simplification.
    """
    x = [s.complexity_after["n_chunks"] for s in curve]
    fig = go.Figure()
    for key, name, colour in ROW_MEASURES:
        y = [s.fidelity_after.get(key, np.nan) for s in curve]
        fig.add_trace(go.Scatter(x=x, y=y, name=name, mode="lines+markers", marker=dict(size=4), line_color=colour,
                                 hovertemplate=f"{name}<br>%{{x}} chunks: %{{y:.3f}}<extra></extra>"))
        y_now = current.fidelity_after.get(key, np.nan)
        fig.add_trace(go.Scatter(x=[current.complexity_after["n_chunks"]], y=[y_now], mode="markers",
                                 showlegend=False, marker=dict(color=colour, size=11, symbol="diamond",
                                                               line=dict(color="black", width=1)),
                                 hoverinfo="skip"))
    fig.add_vline(x=current.complexity_after["n_chunks"], line_color="#666", line_dash="dash")
    fig = _layout(fig, "This row: fidelity vs complexity<br><sup>one point per k, same operators; ◆ = shown</sup>",
                  xaxis_title="complexity: concepts named (n_chunks)", yaxis_title="fidelity measure",
                  legend=dict(orientation="h", y=-0.3))
    return fig.update_layout(margin=_TALL)


def global_tradeoff(g, k: int) -> go.Figure:
    """Top-k sufficiency, comprehensiveness, Spearman ρ and mass averaged over held-out rows."""
    fig = make_subplots(rows=1, cols=1)
    for key, name, colour in (("sufficiency", "sufficiency (0 is best)", "#ff7f0e"),
                              ("comprehensiveness", "comprehensiveness", POS),
                              ("spearman", "Spearman ρ", "#2ca02c"),
                              ("mass_retained", "share of |attribution| shown", GREY)):
        se = g.std_error[key]
        fig.add_trace(go.Scatter(x=g.k, y=getattr(g, key), name=name, mode="lines", line_color=colour,
                                 error_y=dict(type="data", array=se, thickness=1, width=0, color=colour),
                                 customdata=se,
                                 hovertemplate=f"{name}<br>k = %{{x}}: %{{y:.3f}} ± %{{customdata:.3f}} "
                                               "(standard error over rows)<extra></extra>"))
    fig.add_vline(x=k, line_color="#666", line_dash="dash")
    return _layout(fig, f"All rows: top-k fidelity averaged over {g.n_rows} held-out rows<br><sup>{esc(g.source)}; "
                        "bars = ± 1 standard error over rows; dashed = current k</sup>",
                   xaxis_title="k (features shown = concepts named)", yaxis_title="mean fidelity measure",
                   legend=dict(orientation="h", y=-0.3)).update_layout(margin=_TALL)


def rule_tradeoff(view, kept: int) -> go.Figure:
    """Held-out agreement of the pruned surrogate against the number of rules kept (O5), current choice marked."""
    fig = go.Figure([
        go.Scatter(x=list(view.kept_counts), y=list(view.agreement_curve), mode="lines+markers", name="agreement",
                   customdata=list(view.predicates_curve),
                   hovertemplate="%{x} rules, %{customdata} predicates: agreement %{y:.3f}<extra></extra>"),
    ])
    fig.add_vline(x=kept, line_dash="dash", line_color="#666")
    fig.update_layout(template="candor", title=dict(text="Agreement as rules are dropped", x=0.01,
                                                          font=dict(size=14)),
                      xaxis_title="rules shown", yaxis_title="agreement with the model (held-out)",
                      margin=dict(l=10, r=10, t=40, b=40))
    return fig
