"""The Text page's Lopardo et al. (2024) card: its summary, score strips and agreement bars of a text."""
from __future__ import annotations

from dash import html

from app.views import figures_lopardo as fl
from app.views.components import empty_figure, error_alert, gilpin_badge, method_note
from app.views.figures import gap_text
from explainers.persuasive import gilpin_label


def lopardo_modules():
    """:mod:`app.services.text_lopardo` and :mod:`app.services.text_lopardo_view`, imported (with torch) when the
    card is first used, never at start-up (issue 14); under the Text page's import guard, so a background job
    forked meanwhile does not inherit a held import lock."""
    from app.services.text_loader import import_guard

    with import_guard():
        from app.services import text_lopardo, text_lopardo_view
    return text_lopardo, text_lopardo_view


def lopardo_panels(page) -> tuple:
    """The card's summary, score strips and agreement bars of a :class:`app.services.text_page.TextPage`."""
    if "lopardo" in page.errors:
        err = page.errors["lopardo"]
        return error_alert(err), empty_figure(err), empty_figure(err)
    view = page.lopardo
    if view is None:
        msg = "press “Train the attention classifier”"
        return method_note("no model trained yet in this session: " + msg), empty_figure(msg), empty_figure(msg)
    return (_summary(view), fl.score_strips(view.words, view.scores, view.predicted_label),
            fl.agreement_bars(view.spearman))


def _summary(view) -> html.Div:
    lop, card = lopardo_modules()
    m, p = view.trained.meta, float(view.probabilities[view.target])
    n_used = m["n_train"] + m["n_test"]
    used = f"the first {n_used} of {m['n_available']}" if m["n_available"] > n_used else f"all {n_used}"
    cut = " (truncated to the model's maximum)" if view.truncated else ""
    return html.Div([
        html.P([html.Strong(f"Predicted {view.predicted_label} (P = {p:.3f})"),
                f"; {len(view.words)} words{cut}."],
               className="mb-1"),
        html.P(f"Trained on {used} labelled texts of {m['dataset']}, {m['epochs']} epochs: "
               f"{view.trained.accuracy_text}.", className="mb-1"),
        method_note(f"model: {lop.CONFIG['n_heads']} heads, d_e = {lop.CONFIG['d_e']}, "
                    f"d_att = {lop.CONFIG['d_att']}, d_out = {lop.CONFIG['d_out']}, one logit per class "
                    f"({', '.join(view.trained.labels)}), CLS query only, logits explained "
                    "(Lopardo, Precioso, Garreau 2024, arXiv 2402.03485); words lower-cased, [CLS] excluded from "
                    "every score"),
        method_note("α-avg / α-max: CLS-row attention, mean / max over heads; G-avg, G-L1, G-L2: mean, L1 and "
                    "L2 norm of the closed-form gradient of the logit w.r.t. each word's embedding; "
                    f"G×I = ⟨e_t, ∇f⟩ (closed form vs autograd: max difference {gap_text(view.gradient_check)}); "
                    f"LIME: lime 0.2.0.1, {card.LIME_SAMPLES} samples, bow=False, removed words become [MASK], "
                    f"regression on the logit, local R² {view.lime_fit['score']:.2f} in-sample and "
                    f"{view.lime_fit['heldout_r2']:.2f} on fresh masks; LIME approx.: the paper's closed form "
                    "3/2 · mean over heads of (α_t w·v_t − α^MASK_t w·v^MASK_t)"),
        html.Div([gilpin_badge(gilpin_label(m)) for m in ("attention", "gradient", "lime")], className="mb-1"),
        html.Ul([html.Li(t) for t in card.card_sentences(view)], className="small mb-1"),
        method_note("agreement: Spearman ρ between α-avg and |score|, Pearson r between the LIME approximation and "
                    "LIME (Candor's choices, not Lopardo et al. 2024's); the paper's own numbers are not reproduced "
                    "here and no number on this card is the paper's"),
    ])
