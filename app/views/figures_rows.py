"""Figures that draw one mark per row (SVG, or WebGL past :data:`~app.views.figures.SVG_MAX_POINTS` dots), from the
rows the services chose.

Which rows are drawn (all, or a seeded uniform sample beyond a cap) is decided in
:mod:`app.services.row_plots`, never here; this module draws what it is given and states the sample on the plot.
Imports plotly, never dash.
"""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from app.views.figures import DIVERGING, _label_lines, _layout, esc, plain, points_trace, tick_labels

JITTER_SEED = 0
"""Seed of the vertical jitter of the beeswarm's dots (presentation only)."""


def beeswarm(b) -> go.Figure:
    """One dot per drawn row and feature: x = SHAP value, colour = the feature value's percentile among every row.

    Parameters
    ----------
    b : app.services.row_plots.Beeswarm
        The drawn rows (all, or a stated sample), the features' order from mean |SHAP| of every row.

    Returns
    -------
    plotly.graph_objects.Figure
        One scatter trace per feature (:func:`~app.views.figures.points_trace` of the dots drawn); the title says
        how many rows the view has and, when sampled, how many are drawn, how they were chosen and that mean |SHAP|
        is from all rows.
    """
    rng = np.random.default_rng(JITTER_SEED)
    m, k = b.values.shape
    fig = go.Figure()
    trace = points_trace(m * k)
    for pos, name in enumerate(b.feature_names):
        fig.add_trace(trace(
            x=b.values[:, pos], y=(pos + rng.uniform(-0.3, 0.3, m)).astype(np.float32), mode="markers",
            marker=dict(size=4, color=b.percentiles[:, pos].astype(np.float32), colorscale=DIVERGING, cmin=0, cmax=1,
                        showscale=pos == 0, colorbar=dict(title="value<br>pct", thickness=10)),
            name=esc(name), showlegend=False, hovertemplate="%{fullData.name}<br>SHAP %{x:.4f}<extra></extra>"))
    ticks = tick_labels(b.feature_names)
    fig.update_yaxes(tickvals=list(range(k)), ticktext=ticks)
    se = b.median_standard_error
    note = "" if se is None else f"<br><sup>sampled values: median standard error {plain(se)}</sup>"
    shown = b.sample.statement()
    if shown:
        note += f"<br><sup>{shown}</sup>"
    n = b.sample.n_rows
    dots = (f"one dot per row for the {k} most important features" if not b.sample.sampled else
            f"one dot per shown row ({plain(m)} of {plain(n)}, a uniform random sample, seed {b.sample.seed}) "
            f"for the {k} most important features by mean |SHAP| of all rows")
    return _layout(fig, f"SHAP values of {plain(n)} rows (beeswarm){note}",
                   xaxis_title=f"SHAP value ({esc(b.output_space)})",
                   alt=f"{dots}; colour: the feature's value percentile, blue low to red high",
                   height=max(300, (12 + 14 * _label_lines(ticks)) * k + 110))
