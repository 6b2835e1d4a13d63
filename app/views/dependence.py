"""The Dependence page's figures: one feature's SHAP dependence scatter beside its partial dependence and ICE curves.

Drawn from :class:`app.services.dependence.DependenceView`; nothing is computed here. A numeric feature's PDP is a
line with its 95 % band over the ICE curves (thin grey lines); a categorical one's is a point per level with its
95 % interval over the rows' values at that level (grey dots). Every user string goes through ``esc``.
"""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from dash import html

from app.views.components import gilpin_badge, method_note
from app.views.figures import CATEGORICAL, DIVERGING, GREY, _layout, esc, plain, points_trace
from app.views.figures_rows import JITTER_SEED
from explainers.persuasive import gilpin_label

Z95 = 1.959964
"""Two-sided 95 % normal quantile (the PDP's band: ± this many standard errors)."""
MAX_LEVEL_COLOURS = len(CATEGORICAL)
"""A categorical colour feature with at most this many levels gets one colour per level; else a scale of codes."""


def _percentiles(values: np.ndarray) -> np.ndarray:
    """Each value's mid-rank percentile among ``values``, in [0, 1] (NaN last)."""
    v = np.asarray(values, dtype=float)
    s = np.sort(v)
    lo, hi = np.searchsorted(s, v, "left"), np.searchsorted(s, v, "right")
    return (lo + hi - 1) / 2 / max(len(v) - 1, 1)


def _x(values: np.ndarray, levels: dict, rng) -> tuple[np.ndarray, dict]:
    """x positions (a categorical feature's codes, jittered) and the axis's ticks (its levels' names)."""
    if not levels:
        return np.asarray(values, dtype=float), {}
    return (np.asarray(values, float) + rng.uniform(-0.25, 0.25, len(values)),
            dict(tickvals=list(levels), ticktext=[esc(t) for t in levels.values()]))


def shap_figure(v) -> go.Figure:
    """SHAP value of the feature against its value, one dot per drawn row, coloured by its interaction pick
    (a categorical colour feature of few levels: a colour per level; else its value's percentile)."""
    s = v.shap
    x, ticks = _x(s.values, v.feature_levels, np.random.default_rng(JITTER_SEED))
    fig = go.Figure()
    trace = points_trace(len(s.shap_values))
    colour = s.color_feature
    if colour is not None and 0 < len(v.color_levels) <= MAX_LEVEL_COLOURS:
        for i, (level, name) in enumerate(v.color_levels.items()):
            at = s.color_values == level
            fig.add_trace(trace(x=x[at], y=s.shap_values[at], mode="markers", name=esc(name),
                                 marker=dict(size=5, color=CATEGORICAL[i], opacity=0.8),
                                 hovertemplate="SHAP %{y:.4f}<extra>%{fullData.name}</extra>"))
        legend = dict(showlegend=True, legend=dict(title=dict(text=esc(colour))))
    else:
        marker = dict(size=5, color=GREY, opacity=0.8)
        if colour is not None:
            marker = dict(size=5, opacity=0.85, color=_percentiles(s.color_values).astype(np.float32),
                          colorscale=DIVERGING, cmin=0, cmax=1,
                          colorbar=dict(title=dict(text=f"{esc(colour)}<br>pct"), thickness=10))
        fig.add_trace(trace(x=x, y=s.shap_values, mode="markers", marker=marker, showlegend=False,
                             hovertemplate="SHAP %{y:.4f}<extra></extra>"))
        legend = dict(showlegend=False)
    by = f"coloured by {esc(colour)}" if colour else "no other feature"
    title = (f"SHAP dependence of {esc(s.feature)} ({plain(len(s.rows))} of {plain(s.n_rows)} explained rows, "
             f"{by})")
    alt = (f"Scatter of {s.feature}'s SHAP value ({s.units}) against its value, one dot per row, "
           f"{len(s.rows)} rows; {'colour: ' + colour if colour else 'one colour'}")
    return _layout(fig, title, alt=alt, height=420, xaxis=dict(title=dict(text=esc(s.feature)), **ticks),
                   yaxis=dict(title=dict(text=f"SHAP value ({esc(s.units)})")), **legend)


def pdp_figure(v) -> go.Figure:
    """The PDP with its 95 % band (or intervals, by level) over the drawn ICE curves."""
    p = v.partial
    ice = p.individual[v.shown_curves]
    fig = go.Figure()
    lo, hi = p.average - Z95 * p.average_se, p.average + Z95 * p.average_se
    if p.categorical:
        rng = np.random.default_rng(JITTER_SEED)
        k = np.arange(len(p.grid), dtype=float)
        xs = (k[None, :] + rng.uniform(-0.2, 0.2, ice.shape)).ravel()
        fig.add_trace(go.Scatter(x=xs, y=ice.ravel(), mode="markers", name="ICE (one row at each level)",
                                 marker=dict(size=4, color=GREY, opacity=0.35), hoverinfo="skip"))
        fig.add_trace(go.Scatter(x=k, y=p.average, mode="markers", name="PDP ± 95 % CI",
                                 marker=dict(size=11, color=CATEGORICAL[0], symbol="diamond"),
                                 error_y=dict(type="data", array=Z95 * p.average_se, color=CATEGORICAL[0]),
                                 hovertemplate="PDP %{y:.4f}<extra></extra>"))
        axis = dict(tickvals=k.tolist(), ticktext=[esc(t) for t in p.grid_labels], title=dict(text=esc(p.feature)))
    else:
        xs = np.concatenate([np.append(p.grid, np.nan) for _ in range(len(ice))])
        ys = np.concatenate([np.append(c, np.nan) for c in ice])
        fig.add_trace(go.Scatter(x=xs, y=ys, mode="lines", name=f"ICE ({len(ice)} rows)",
                                 line=dict(color=GREY, width=0.8), opacity=0.35, hoverinfo="skip"))
        fig.add_trace(go.Scatter(x=np.concatenate([p.grid, p.grid[::-1]]), y=np.concatenate([hi, lo[::-1]]),
                                 fill="toself", fillcolor="rgba(0,114,178,0.2)", line=dict(width=0),
                                 name="PDP 95 % CI", hoverinfo="skip"))
        fig.add_trace(go.Scatter(x=p.grid, y=p.average, mode="lines+markers", name="PDP (average)",
                                 line=dict(color=CATEGORICAL[0], width=3), marker=dict(size=5),
                                 hovertemplate="%{x}: PDP %{y:.4f}<extra></extra>"))
        axis = dict(title=dict(text=esc(p.feature)))
    n = len(p.individual)
    title = (f"Partial dependence and ICE of {esc(p.feature)} ({plain(len(ice))} of {plain(n)} curves drawn, "
             f"{plain(n)} of {plain(p.n_rows)} held-out rows)")
    f = p.fidelity
    alt = (f"Partial dependence of {p.feature} over {len(p.grid)} grid values, from {plain(p.average.min(), 3)} to "
           f"{plain(p.average.max(), 3)} {p.units}; {plain(100 * f.opposite_share, 2, trim=True)} % of {n} ICE "
           f"curves run against it")
    return _layout(fig, title, alt=alt, height=420, xaxis=axis, yaxis=dict(title=dict(text=esc(p.units))),
                   legend=dict(orientation="h", y=-0.2))


def notes(v, colour_text: str) -> html.Div:
    """The words under the figures: what the average hides, the colour pick, the rows and the methods."""
    return html.Div([
        html.P(v.hidden, className="mb-1 fw-semibold", id="dependence-hidden"),
        html.P(colour_text, className="small mb-1"),
        html.P(f"Scatter: {v.rows_statement}; SHAP as the Descriptive page's global view "
               f"({v.shap.units}). Partial dependence: {v.partial.units}.", className="small mb-1"),
        gilpin_badge(gilpin_label("shap_global")), gilpin_badge(gilpin_label("partial_dependence")),
        method_note(v.partial.source), method_note(v.shap.method), method_note(v.shap_source),
    ])


def draw(feature: str) -> tuple[go.Figure, go.Figure, html.Div]:
    """The Dependence page's figures and notes for ``feature`` (raises CandorError as the service does)."""
    from app import services

    v = services.dependence.dependence(feature)
    return shap_figure(v), pdp_figure(v), notes(v, services.dependence.colour_text(v))
