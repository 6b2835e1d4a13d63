"""The Attention page's figures: CLS attention per layer and head, and each head's agreement with an attribution.
Imports plotly, never dash."""
from __future__ import annotations

import functools
import json

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from explainers.types import AgreementReport

from app.views.figures import DIVERGING, _layout, layout_dict, tick_labels, unvalidated_figure


def attention_heatmaps(cls: np.ndarray, feature_names: tuple[str, ...]) -> go.Figure:
    """CLS-to-feature attention: one heatmap per layer, heads as rows.

    The layers' stacked axes come from :func:`_layer_grid` (kept per number of layers) and the figure is built
    unvalidated (:func:`unvalidated_figure`): a row change redraws it, and ``make_subplots`` with Plotly's
    validation cost about 45 ms of a 250 ms Attention row on the sample (cProfile, 11 rows).
    """
    n_layers, n_heads, _ = cls.shape
    x, y = tick_labels(feature_names, 20), [f"head {h}" for h in range(n_heads)]
    data = [dict(type="heatmap", z=cls[l], x=x, y=y, coloraxis="coloraxis", xaxis=f"x{l + 1 if l else ''}",
                 yaxis=f"y{l + 1 if l else ''}", hovertemplate="%{y}, %{x}: %{z:.3f}<extra></extra>")
            for l in range(n_layers)]
    grid = json.loads(_layer_grid(n_layers))  # a fresh copy: the figure owns its layout
    return unvalidated_figure(data, {**grid, **layout_dict("Attention from CLS to each feature token",
                                                           height=170 * n_layers + 160),
                                     "annotations": grid.get("annotations", [])})


@functools.lru_cache(maxsize=8)
def _layer_grid(n_layers: int) -> str:
    """The layout (JSON) of ``n_layers`` heatmaps stacked on shared x axes, titled ``layer l``, one colour axis."""
    fig = make_subplots(rows=n_layers, cols=1, shared_xaxes=True, vertical_spacing=0.08,
                        subplot_titles=[f"layer {l}" for l in range(n_layers)])
    fig.update_layout(coloraxis=dict(colorscale="Viridis", colorbar=dict(title=dict(text="attention"))))
    fig.update_xaxes(tickangle=45)
    layout = fig.to_plotly_json()["layout"]
    layout.pop("template", None)
    return json.dumps(layout)


def head_agreement(report: AgreementReport) -> go.Figure:
    """Spearman ρ of each head's attention with |attribution|, layers x heads."""
    rho = report.per_head
    fig = go.Figure(go.Heatmap(z=rho, x=[f"head {h}" for h in range(rho.shape[1])],
                               y=[f"layer {l}" for l in range(rho.shape[0])], zmin=-1, zmax=1,
                               colorscale=DIVERGING, text=np.round(rho, 2), texttemplate="%{text}",
                               colorbar=dict(title="ρ"), hovertemplate="%{y}, %{x}: ρ = %{z:.3f}<extra></extra>"))
    fig.update_yaxes(autorange="reversed")
    return _layout(fig, f"Spearman ρ: {report.query} attention vs |{report.attribution_method}|", height=260)
