"""Text page callbacks of the Lopardo et al. (2024) card: train in the background, then render one text.

Lopardo, Precioso, Garreau, "Attention Meets Post-hoc Interpretability: A Mathematical Perspective",
ICML 2024, arXiv 2402.03485. Thin: the training job calls :func:`app.services.text_lopardo.train`, the card's
view :func:`app.services.text_page.text_page`. The training job returns only the model's key; the weights are on disk.
"""
from __future__ import annotations

from dash import Input, Output, State, callback, html, no_update
from dash.exceptions import PreventUpdate

from app.views import figures_lopardo as fl
from app.shell import ids
from app.callbacks.text import _spec
from app.views.components import empty_figure, error_alert, gilpin_badge, method_note
from app.views.figures import gap_text
from app.services.text_page import text_page
from explainers.persuasive import gilpin_label
from workspace.errors import CandorError


def _lop():
    """:mod:`app.services.text_lopardo` and :mod:`app.services.text_lopardo_view`, imported (with torch) when the
    card is first used, never at start-up (issue 14); under the Text page's import guard, so a background job
    forked meanwhile does not inherit a held import lock."""
    from app.services.text_loader import import_guard

    with import_guard():
        from app.services import text_lopardo, text_lopardo_view
    return text_lopardo, text_lopardo_view


@callback(Output(ids.TEXT_LOPARDO_MODEL, "data"), Output(ids.TEXT_LOPARDO_STATUS, "children"),
          Input(ids.TEXT_LOPARDO_RUN, "n_clicks"), State(ids.TEXT_DATASET, "data"), State(ids.TEXT_COLUMN, "value"),
          State(ids.TEXT_LABEL_COLUMN, "value"), background=True,
          running=[(Output(ids.TEXT_LOPARDO_RUN, "disabled"), True, False),
                   (Output(ids.TEXT_LOPARDO_CANCEL, "disabled"), False, True)],
          cancel=[Input(ids.TEXT_LOPARDO_CANCEL, "n_clicks")],
          progress=[Output(ids.TEXT_LOPARDO_PROGRESS, "value"), Output(ids.TEXT_LOPARDO_PROGRESS, "label")],
          prevent_initial_call=True)
def run_lopardo(set_progress, _clicks, dataset, text_col, label_col):
    """Background job: train the single-layer attention classifier on the dataset's labelled texts (cached)."""
    try:
        trained, cached = _lop()[0].train(_spec(dataset, text_col, label_col),
                                       progress=lambda d, n: set_progress((round(100 * d / n), f"batch {d} of {n}")))
    except Exception as err:  # noqa: BLE001 - CandorError names the file/column; anything else is shown too
        msg = str(err) if isinstance(err, CandorError) else f"training failed: {type(err).__name__}: {err}"
        return no_update, error_alert(msg)
    m = trained.meta
    how = "loaded from the on-disk cache" if cached else f"trained in {m['seconds']:.1f} s"
    return {"key": m["key"], "dataset": m["dataset"]}, f"Model for {m['dataset']} {how}."


@callback(Output(ids.TEXT_LOPARDO_SUMMARY, "children", allow_duplicate=True),
          Output(ids.TEXT_LOPARDO_SCORES, "figure", allow_duplicate=True),
          Output(ids.TEXT_LOPARDO_AGREEMENT, "figure", allow_duplicate=True),
          Input(ids.TEXT_LOPARDO_MODEL, "data"), State(ids.TEXT_CURRENT, "data"), prevent_initial_call=True)
def render_lopardo(model, current):
    """A model was trained: the per-word explanations of the current text (a new text draws this card with the
    rest of the page, :func:`app.callbacks.text_views.show_text`)."""
    if not current or not current.get("text"):
        raise PreventUpdate
    return lopardo_panels(text_page(current["text"], ("lopardo",), lopardo_key=(model or {}).get("key")))


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
    lop, card = _lop()
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
