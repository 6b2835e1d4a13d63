"""Persuasive page figures: the shown items, the row's and the global fidelity-vs-complexity tradeoffs.

Imports plotly, never dash. Colours follow :mod:`app.views.figures` (red towards the
explained class, blue against).
"""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from app.views.figures import (CATEGORICAL, NEG, POS, _label_lines, _layout, bars_alt, esc, layout_dict, plain,
                                tick_labels, unvalidated_figure)

_TALL = dict(l=10, r=10, t=75, b=40)
ROW_TRADEOFF_HEIGHT, GLOBAL_TRADEOFF_HEIGHT = 520, 420
"""Heights (px) the row's and the global tradeoff are drawn at, on the Persuasive page and in the report: their
legends sit 0.3 of the plot's height below it (``legend.y=-0.3``), clear of the x-axis title only in a figure this
tall (the report drew them at its 260 px minimum, the title over the legend)."""
ROW_MEASURES = (("sufficiency", "sufficiency (0 is best)", CATEGORICAL[1]),
                ("comprehensiveness", "comprehensiveness", CATEGORICAL[5]),
                ("spearman", "Spearman ρ with the full ranking", CATEGORICAL[2]),
                ("mass_retained", "share of |attribution| shown", CATEGORICAL[0]),
                ("r2_restricted", "local R² of a fit on the shown features", CATEGORICAL[3]))
"""The row's measures and their Okabe-Ito colours (:data:`app.views.figures.CATEGORICAL`), shared with the global tradeoff."""
COST_ROWS = (("mass_retained", "Share of |attribution| shown", "{:.1%}"), ("sufficiency", "Sufficiency", None),
             ("comprehensiveness", "Comprehensiveness", None), ("aopc_comprehensiveness", "AOPC comprehensiveness", None),
             ("deletion_auc_norm", "Deletion AUC (share of the gap)", None),
             ("insertion_auc_norm", "Insertion AUC (share of the gap)", None),
             ("spearman", "Spearman ρ", None), ("top_k_overlap", "Top-k overlap", None),
             ("r2_restricted", "Local R², shown features", None), ("additivity_gap", "Additivity gap", None))
"""What a simplification costs, as the Persuasive page and the report show it: (key of ``fidelity_after``,
label, format or None for :func:`app.views.components.fmt`)."""


def operator_text(operators) -> str:
    """The rule operators applied, in words: ``"O5 keep the top 3 rules → O2 round thresholds to 2 significant
    digits"`` (never a dict or a numpy repr such as ``prune {'max_rules': np.int64(3)}``).

    ``operators`` is :attr:`explainers.persuasive.RuleSimplification.operators`: (name, params) pairs.
    """
    def one(name, p) -> str:
        if name == "prune" and "max_rules" in p:
            m = int(p["max_rules"])
            return f"O5 keep the top {m} rule{'' if m == 1 else 's'} by coverage, then precision"
        if name == "prune":
            return f"O5 keep the rules covering at least {plain(p.get('min_coverage', 0))} of rows"
        if name == "round_thresholds":
            kept = p.get("not_rounded") or ()
            return (f"O2 round thresholds to {int(p['sig'])} significant digit{'' if int(p['sig']) == 1 else 's'}"
                    + (f" (not {', '.join(map(str, kept))}: levels and dates stay as they are)" if kept else ""))
        if name == "plain_language":
            return "O8 phrase predicates in words" + (f" ({int(p['lexicon'])} phrases)" if p.get("lexicon") else "")
        return str(name).replace("_", " ")
    return " → ".join(one(name, dict(params or {})) for name, params in operators) or "no operator"


def persuasive_items(s, title: str) -> go.Figure:
    """One bar per shown item (feature or group), with the number or word the reader is shown.

    ``title`` is Plotly markup written by the caller (user text in it escaped with :func:`app.views.figures.esc`);
    item names are escaped here. Built unvalidated (:func:`app.views.figures.unvalidated_figure`): a row change
    redraws it.
    """
    items = list(s.items)[::-1]
    vmax = max((abs(it.value) for it in items), default=1.0) or 1.0
    m = len(items)
    x, text = [], []
    for r, it in enumerate(items):
        rank = m - r
        if it.shown is not None:
            x.append(float(it.shown))
            text.append(plain(it.shown, 3, signed=True, trim=True))
        else:
            x.append(float(np.sign(it.value) * vmax * (m - rank + 1) / m))
            text.append(it.strength or ("up" if it.value > 0 else "down"))
    y = tick_labels([it.name for it in items])
    bar = dict(type="bar", x=x, y=y, orientation="h", text=text, textposition="auto",
               marker=dict(color=[POS if it.value > 0 else NEG for it in items]),
               customdata=[float(it.value) for it in items],
               hovertemplate="%{y}: shown %{text}<br>exact %{customdata:.4f}<extra></extra>")
    axis = f"attribution ({esc(s.parent.output_space)})" if all(it.shown is not None for it in items) \
        else "direction and rank only (bar length = rank)"
    return unvalidated_figure([bar], layout_dict(
        title, margin=_TALL, alt=bars_alt([it.name for it in items], [it.value for it in items],
                                          f"{m} items a reader is shown, red towards and blue against the explained class"),
        xaxis=dict(title=dict(text=axis)),
        yaxis=dict(tickmode="array", tickvals=y, ticktext=y,  # every label
                   tickfont=dict(size=12 if m <= 18 else 10 if m <= 30 else 9)),
        height=max(260, (12 + 14 * _label_lines(y)) * m + 110)))


def row_tradeoff(curve, current) -> go.Figure:
    """Fidelity measures against complexity (concepts named) for every k; the current choice marked.

    ``curve`` holds one point per k with ``fidelity_after`` and ``complexity_after``
    (:class:`explainers.persuasive.CurvePoint`); ``current`` is the chosen simplification. Built unvalidated
    (:func:`app.views.figures.unvalidated_figure`): a row change redraws it.
    """
    x = [s.complexity_after["n_chunks"] for s in curve]
    now = current.complexity_after["n_chunks"]
    data = []
    for key, name, colour in ROW_MEASURES:
        y = [float(s.fidelity_after.get(key, np.nan)) for s in curve]
        data.append(dict(type="scatter", x=x, y=y, name=name, mode="lines+markers", marker=dict(size=4),
                         line=dict(color=colour), hovertemplate=f"{name}<br>%{{x}} chunks: %{{y:.3f}}<extra></extra>"))
        data.append(dict(type="scatter", x=[now], y=[float(current.fidelity_after.get(key, np.nan))], mode="markers",
                         showlegend=False, hoverinfo="skip",
                         marker=dict(color=colour, size=11, symbol="diamond", line=dict(color="black", width=1))))
    return unvalidated_figure(data, layout_dict(
        "This row: fidelity vs complexity<br><sup>one point per k, same operators; ◆ = shown</sup>", margin=_TALL,
        xaxis=dict(title=dict(text="complexity: concepts named (n_chunks)")),
        yaxis=dict(title=dict(text="fidelity measure")), legend=dict(orientation="h", y=-0.3),
        shapes=[dict(type="line", x0=now, x1=now, xref="x", y0=0, y1=1, yref="y domain",
                     line=dict(color="#666", dash="dash"))]))


def global_tradeoff(g, k: int) -> go.Figure:
    """Top-k sufficiency, comprehensiveness, Spearman ρ and mass averaged over held-out rows."""
    fig = make_subplots(rows=1, cols=1)
    for key, name, colour in [m for m in ROW_MEASURES if m[0] != "r2_restricted"]:
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
    best = int(np.nanargmax(view.agreement_curve)) if len(view.agreement_curve) else 0
    return _layout(fig, "Agreement as rules are dropped", xaxis_title="rules shown",
                   yaxis_title="agreement with the model (held-out)", showlegend=False,
                   alt=f"{kept} rules shown; agreement from {plain(view.agreement_curve[0])} with "
                       f"{view.kept_counts[0]} rules to {plain(view.agreement_curve[-1])} with {view.kept_counts[-1]}; "
                       f"highest with {view.kept_counts[best]}" if len(view.agreement_curve) else None)
