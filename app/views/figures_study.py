"""Figures of the researcher page (study mode): reliance by condition, trust against fidelity,
confidence against the advice's correctness and the explanation's fidelity.

Built from :mod:`study.analysis` frames; user strings (condition ids) go through
:func:`app.views.figures.esc` and never into a ``hovertemplate``.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from app.views.figures import TEMPLATE, esc

__all__ = ["reliance_bars", "appropriateness", "calibration_scatter", "confidence_by_correctness", "RELIANCE_SHOWN"]

#: Measures drawn by :func:`reliance_bars`, with their axis labels.
RELIANCE_SHOWN = {
    "switch_fraction": "switch to advice", "over_reliance": "over-reliance", "under_reliance": "under-reliance",
    "rair": "RAIR", "rsr": "RSR", "accuracy": "accuracy after advice",
}


def _layout(fig: go.Figure, title: str, **kw) -> go.Figure:
    fig.update_layout(template=TEMPLATE, title=title, margin=dict(l=10, r=10, t=40, b=40), font=dict(size=12), **kw)
    return fig


def reliance_bars(table: pd.DataFrame) -> go.Figure:
    """Grouped bars: each reliance proportion by condition, with its 95% Wilson interval as error bars.

    Parameters
    ----------
    table : DataFrame
        :func:`study.analysis.reliance_by_condition` (``condition, measure, mean, ci_low, ci_high, n``).
    """
    fig = go.Figure()
    shown = table[table["measure"].isin(list(RELIANCE_SHOWN))]
    for cond, g in shown.groupby("condition", sort=True):
        g = g.set_index("measure").reindex(list(RELIANCE_SHOWN))
        fig.add_bar(
            name=esc(cond), x=list(RELIANCE_SHOWN.values()), y=g["mean"].tolist(),
            error_y=dict(type="data", symmetric=False, array=(g["ci_high"] - g["mean"]).tolist(),
                         arrayminus=(g["mean"] - g["ci_low"]).tolist()),
            customdata=np.stack([g["ci_low"], g["ci_high"], g["n"]], axis=1),
            hovertemplate="%{x}: %{y:.3f} [%{customdata[0]:.3f}, %{customdata[1]:.3f}], n = %{customdata[2]}"
                          "<extra></extra>")
    fig.update_yaxes(range=[0, 1], title="share of decision trials")
    return _layout(fig, "Reliance by condition (95% Wilson intervals)", barmode="group", height=380)


def appropriateness(table: pd.DataFrame) -> go.Figure:
    """Schemmer et al.'s (2023) appropriateness of reliance: RAIR against RSR, one point per condition.

    Each point carries its 95% Wilson intervals as horizontal (RAIR) and vertical (RSR) bars. A
    condition where either is undefined (no advised trial of that kind, e.g. a no-advice arm) is
    left out and named in a note above the plot.

    Parameters
    ----------
    table : DataFrame
        :func:`study.analysis.reliance_by_condition` (rows ``measure`` ``rair`` and ``rsr``).
    """
    fig = go.Figure()
    undefined = []
    for cond, g in table[table["measure"].isin(["rair", "rsr"])].groupby("condition", sort=True):
        g = g.set_index("measure").reindex(["rair", "rsr"])
        if g["mean"].isna().any():
            undefined.append(esc(cond))
            continue
        x, y = g.loc["rair"], g.loc["rsr"]
        fig.add_scatter(
            x=[x["mean"]], y=[y["mean"]], mode="markers", name=esc(cond), marker=dict(size=11),
            error_x=dict(type="data", symmetric=False, array=[x["ci_high"] - x["mean"]],
                         arrayminus=[x["mean"] - x["ci_low"]]),
            error_y=dict(type="data", symmetric=False, array=[y["ci_high"] - y["mean"]],
                         arrayminus=[y["mean"] - y["ci_low"]]),
            customdata=[[x["ci_low"], x["ci_high"], x["n"], y["ci_low"], y["ci_high"], y["n"]]],
            hovertemplate="RAIR %{x:.3f} [%{customdata[0]:.3f}, %{customdata[1]:.3f}], n = %{customdata[2]}<br>"
                          "RSR %{y:.3f} [%{customdata[3]:.3f}, %{customdata[4]:.3f}], n = %{customdata[5]}"
                          "<extra></extra>")
    fig.update_xaxes(range=[-0.02, 1.02], title="RAIR: switched to right advice after a wrong first answer")
    fig.update_yaxes(range=[-0.02, 1.02], title="RSR: kept a right first answer against wrong advice")
    if undefined:
        fig.add_annotation(text=f"undefined (no advice, or no such trials): {', '.join(undefined)}", showarrow=False,
                           xref="paper", yref="paper", x=0, y=1.0, xanchor="left", yanchor="bottom")
    return _layout(fig, "Appropriateness of reliance (Schemmer et al. 2023; 95% Wilson intervals)", height=420)


def calibration_scatter(points: pd.DataFrame, r: float, ci: tuple[float, float], trust_label: str) -> go.Figure:
    """Each participant's trust score against the mean fidelity of the explanations they saw.

    Parameters
    ----------
    points : DataFrame
        ``participant_id, condition, mean_fidelity, trust`` (:func:`study.analysis.calibration`).
    r : float
        Pearson r, shown in the title with its Fisher-z interval ``ci``.
    trust_label : str
        The questionnaire score on the y axis.
    """
    fig = go.Figure()
    for cond, g in points.groupby("condition", sort=True):
        fig.add_scatter(x=g["mean_fidelity"], y=g["trust"], mode="markers", name=esc(cond),
                        hovertemplate="fidelity %{x:.3f}, trust %{y:.2f}<extra></extra>")
    fig.update_xaxes(title="mean fidelity shown (share of |attribution| kept)")
    fig.update_yaxes(title=esc(trust_label))
    r_text = "n/a" if not np.isfinite(r) else f"{r:.2f} [{ci[0]:.2f}, {ci[1]:.2f}]"
    return _layout(fig, f"Trust vs fidelity: Pearson r = {r_text}", height=360)


def confidence_by_correctness(decisions: pd.DataFrame) -> go.Figure:
    """Final-answer confidence by condition, split by whether the model's advice was right.

    Calibrated trust is higher where the advice is right; over-trust shows as equal confidence
    on wrong advice. Each trial's fidelity is in the hover.

    Parameters
    ----------
    decisions : DataFrame
        :func:`study.analysis.decision_table` (``condition, confidence, model_wrong, known, fidelity``).
    """
    fig = go.Figure()
    d = decisions[decisions["known"] & decisions["confidence"].notna()]
    for label, wrong in (("advice right", False), ("advice wrong", True)):
        g = d[d["model_wrong"] == wrong]
        fig.add_box(x=[esc(c) for c in g["condition"]], y=g["confidence"], name=label, boxpoints="all", jitter=0.4,
                    pointpos=0, customdata=g["fidelity"].astype(float).fillna(np.nan),
                    hovertemplate="confidence %{y:.1f}, fidelity %{customdata:.3f}<extra></extra>")
    fig.update_yaxes(title="confidence in the final answer")
    return _layout(fig, "Confidence when the advice was right vs wrong", boxmode="group", height=360)
