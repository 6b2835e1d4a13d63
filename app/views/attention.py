"""Attention page views: a row's attention heatmaps, head agreement, IG and SHAP figures and their notes."""
import math

from dash import html
from dash.exceptions import PreventUpdate

from app import services
from app.views import figures, figures_attention
from app.views.components import empty_figure, error_alert, gilpin_badge, method_note
from explainers.persuasive import gilpin_label
from workspace.errors import CandorError


def render_attention(row, draw=None):
    """The row's heatmaps, agreement, IG and SHAP figures and notes, or why not (``draw``: a kept drawing,
    :func:`app.callbacks.attention.render_row`)."""
    if row is None:
        raise PreventUpdate
    try:
        return (draw or draw_attention)(row)
    except CandorError as err:
        return *(empty_figure(str(err)),) * 4, error_alert(str(err))


def draw_attention(row):
    """The row's figures and notes from :func:`app.services.attention_view` (raises CandorError)."""
    v = services.attention_view(row)
    names = v.attention.tokens[1:]
    cfg, metrics = v.metadata["config"], v.metadata["heldout_metrics"]
    notes = html.Div([
        html.P(f"A transformer over the same {len(names)} features (one token per feature plus CLS; "
               f"{cfg['n_layers']} layers x {cfg['n_heads']} heads, d = {cfg['d_model']}), trained on CPU on the "
               f"same training rows: held-out accuracy {metrics['accuracy']:.3f}, ROC AUC {metrics['roc_auc']:.3f}. "
               f"Its log-odds of {v.ig.target} for this row are {v.ig.prediction:.2f} "
               f"(P = {1 / (1 + math.exp(-v.ig.prediction)):.3f}); attributions below are in log-odds.", className="mb-1"),
        gilpin_badge(gilpin_label("attention")), gilpin_badge(gilpin_label(v.ig)), gilpin_badge(gilpin_label(v.shap)),
        method_note("attention: softmax weights of each head, row of the CLS query, CLS→CLS column left out"),
        method_note(f"{v.ig.source}; completeness gap {figures.gap_text(abs(v.ig.params['convergence_delta']))}"),
        method_note(f"{v.shap.source}; additivity gap {v.shap.additivity_gap:.3f} (expected gradients are additive "
                    "only in expectation, so the gap shrinks with more samples)"),
        method_note("agreement: Spearman ρ between each head's CLS attention and |IG| over the features"),
    ])
    return (figures_attention.attention_heatmaps(v.cls, names), figures_attention.head_agreement(v.agreement),
            figures.attribution_bar(v.ig, title="Integrated Gradients (baseline: training median)"),
            figures.attribution_bar(v.shap, title="SHAP (GradientExplainer)"), notes)
