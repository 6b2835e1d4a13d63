"""Text page callbacks of the Lopardo et al. (2024) card: train in the background, then render one text.

Lopardo, Precioso, Garreau, "Attention Meets Post-hoc Interpretability: A Mathematical Perspective",
ICML 2024, arXiv 2402.03485. Thin: the training job calls :func:`app.services.text_lopardo.train`, the card's
view :func:`app.services.text_page.text_page`. The training job returns only the model's key; the weights are on disk.
"""
from __future__ import annotations

from dash import Input, Output, State, callback, no_update
from dash.exceptions import PreventUpdate

from app.shell import ids
from app.services.text_page import text_page
from app.views.components import error_alert
from app.views.text import dataset_spec
from app.views.text_lopardo import lopardo_modules, lopardo_panels
from workspace.errors import CandorError


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
        trained, cached = lopardo_modules()[0].train(dataset_spec(dataset, text_col, label_col),
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
