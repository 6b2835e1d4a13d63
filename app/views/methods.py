"""Views of the table's global methods, each beside global SHAP (the Descriptive page's global panel, the report).

One figure per method (:data:`FIGURES`, by method name: a new global method adds its figure here) and, for every
method alike, the rank agreement with mean |SHAP| in words (:func:`agreement_text`) and the Dash panel
(:func:`panel`). The numbers come from :func:`app.services.methods.global_method_views`; nothing is computed here.
"""
from __future__ import annotations

from typing import Callable

import numpy as np
import plotly.graph_objects as go
from dash import dcc, html
from plotly.subplots import make_subplots

from app import services
from app.views.components import fmt, gilpin_badge, method_note
from app.views.figures import CATEGORICAL, GREY, _layout, bars_alt, esc, label_margin, tick_labels
from explainers.persuasive import gilpin_label

MAX_DISPLAY = 15
"""Features drawn (the largest importances); the agreement is over every feature."""
SCORING_WORDS = {"roc_auc": "ROC AUC", "r2": "R²", "accuracy": "accuracy"}
"""How the figure names each scoring (:data:`explainers.permutation_importance.SCORINGS`)."""


def permutation_importance_figure(v, max_display: int = MAX_DISPLAY) -> go.Figure:
    """Permutation importance ± its standard error over the shuffles, beside mean |SHAP| of the same features.

    The features with the largest permutation importance, largest on top; the left panel is mean |SHAP| of the
    same features (the global view's numbers), so that a feature one method ranks high and the other low shows.
    """
    r = v.result
    imp, se = np.asarray(r.importances, dtype=float), np.asarray(r.standard_error, dtype=float)
    order = np.argsort(-imp, kind="stable")[:max_display][::-1]
    labels = tick_labels([r.feature_names[j] for j in order])
    fig = make_subplots(rows=1, cols=2, shared_yaxes=True, horizontal_spacing=0.04,
                        subplot_titles=("mean |SHAP|", f"drop of {esc(SCORING_WORDS.get(r.scoring, r.scoring))} "
                                                        "when shuffled"))
    fig.add_trace(go.Bar(x=v.shap_importance[order], y=labels, orientation="h", marker_color=GREY, name="mean |SHAP|",
                         hovertemplate="%{y}: mean |SHAP| %{x:.4f}<extra></extra>"), row=1, col=1)
    fig.add_trace(go.Bar(x=imp[order], y=labels, orientation="h", marker_color=CATEGORICAL[0],
                         name="permutation importance", customdata=se[order],
                         error_x=dict(type="data", array=se[order], visible=bool(np.max(se, initial=0) > 0),
                                      color="#444", thickness=1.2, width=3),
                         hovertemplate="%{y}: %{x:.4f} ± %{customdata:.4f}<extra></extra>"), row=1, col=2)
    title = (f"Permutation importance ± standard error ({r.n_repeats} shuffles, {r.n_rows:,} held-out rows) "
             f"beside mean |SHAP|")
    return _layout(fig, title, alt=bars_alt(r.feature_names, imp, f"permutation importance ({r.scoring} drop)"),
                   showlegend=False, height=max(300, 22 * len(order) + 130),
                   margin=dict(l=label_margin(labels), t=90))


FIGURES: dict[str, Callable] = {"permutation_importance": permutation_importance_figure}
"""Each global method's figure, by method name (the table of methods, ``app/services/methods.py``)."""


def figure(v) -> go.Figure:
    """The figure of the global method view ``v`` (:class:`app.services.methods.GlobalMethodView`)."""
    return FIGURES[v.name](v)


def agreement_text(v) -> str:
    """How the method's ranking agrees with mean |SHAP|: Spearman, Kendall τ-b, top-k overlap, and the features
    in one top-k only."""
    a = v.agreement
    text = (f"Rank agreement with mean |SHAP| over every feature ({v.title}'s negative values counted as 0): "
            f"Spearman ρ {fmt(a.spearman)}, Kendall τ-b {fmt(a.kendall_tau_b)}, top-{a.k} overlap "
            f"{fmt(a.top_k_overlap, 2)}.")
    if v.disagree:
        text += f" In one top-{a.k} but not the other: {', '.join(v.disagree)}."
    return text


def panel(v) -> html.Div:
    """The Descriptive page's panel of one global method: its figure, Gilpin label, method line and agreement."""
    if v.result is None:
        return html.Div(method_note(f"{v.title} not shown: {v.why_not}"), className="mb-2")
    return html.Div([dcc.Graph(figure=figure(v), config={"displaylogo": False}), gilpin_badge(gilpin_label(v.name)),
                     method_note(v.result.source), html.P(agreement_text(v), className="small mb-2")])


def draw_panels() -> list:
    """The panel of every global method of the table of methods (:func:`app.services.methods.global_method_views`;
    raises CandorError as it does)."""
    return [panel(v) for v in services.methods.global_method_views()]
