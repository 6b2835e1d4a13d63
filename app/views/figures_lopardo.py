"""Figures of the Lopardo et al. (2024) card of the Text page. Imports plotly, never dash.

Lopardo, Precioso, Garreau, "Attention Meets Post-hoc Interpretability: A Mathematical Perspective",
ICML 2024, arXiv 2402.03485 (docs/methods.md, "Lopardo et al. 2024"): seven per-word explanations of a single-layer attention
classifier and the paper's approximation of LIME, aligned by word, and their rank agreement with α-avg.
"""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from app.views.figures import GREY, NEG, POS, esc
from app.views.figures_text import _layout, word_strips

_SIGNED = {"LIME", "LIME approx.", "G-avg", "G×I"}
"""Scores with a sign (red toward the explained class, blue against); the others are non-negative."""


def score_strips(words, scores: dict, label: str) -> go.Figure:
    """One heatmap strip per explainer, aligned by word (Lopardo et al. 2024: Figure 1's seven explainers, LIME approx.).

    Parameters
    ----------
    words : sequence of str
    scores : dict
        Explainer name -> ndarray of shape (n_words,), in display order.
    label : str
        The explained class.

    Returns
    -------
    go.Figure
        One ``Heatmap`` trace per explainer; each strip has its own colour range.
    """
    fig = word_strips(words, [(name, v, name in _SIGNED) for name, v in scores.items()],
                      text_format=".3g", hover_format=".4g")
    return _layout(fig, f"Per-word explanations of the logit of {esc(label)} (each strip its own colour range)",
                   height=55 * len(scores) + 170, margin=dict(l=80, r=10, t=40, b=100))


def agreement_bars(spearman: dict) -> go.Figure:
    """Spearman ρ of each explainer's |score| with α-avg (NaN drawn as a grey 0 labelled "n/a").

    Parameters
    ----------
    spearman : dict
        Explainer name -> ρ.
    """
    names = [n for n in spearman if n != "α-avg"]
    vals = [spearman[n] for n in names]
    shown = [0.0 if np.isnan(v) else v for v in vals]
    fig = go.Figure(go.Bar(x=names, y=shown, marker_color=[GREY if np.isnan(v) else POS if v >= 0 else NEG for v in vals],
                           text=["n/a" if np.isnan(v) else f"{v:.2f}" for v in vals], textposition="outside",
                           hovertemplate="Spearman ρ(α-avg, |%{x}|) = %{y:.3f}<extra></extra>"))
    fig.update_yaxes(range=[-1.1, 1.1], title="Spearman ρ with α-avg")
    return _layout(fig, "Rank agreement with α-avg (Spearman ρ on |score|)", height=300)
