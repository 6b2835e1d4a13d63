"""Text page views: one request per user action (issue 14), each callback calling
:func:`app.services.text_page.text_page` once.

* :func:`show_text`: a new text (typed and "Analyze" or Enter, or picked from the dataset) or the page
  opening: every panel at once, and the layer and head pickers the first time (from the loaded model).
* :func:`show_layer`: another layer (head view and aggregates) or other heads (head view).
* :func:`show_agreement`: another attribution, metric or attention reading (the agreement heatmap).
* :func:`show_slow_results`: the LIME/SHAP job finished (aggregates and agreement).

On opening, the layout fills the layer and head pickers when the model is already loaded; otherwise their
values come from the model the first request loads, and the head view and the aggregates follow in a second
request (:func:`show_layer`, set off by the pickers). Every later action is one request. Callbacks of the inputs and jobs are in :mod:`app.callbacks.text`.
"""
from __future__ import annotations

from pathlib import Path

import dash_bootstrap_components as dbc
from dash import Input, Output, State, callback, ctx, html, no_update
from dash.exceptions import MissingCallbackContextException, PreventUpdate

from app.views import figures_text as ft
from app.shell import ids
from app.callbacks.text import _LATER, _spec
from app.callbacks.text_lopardo import lopardo_panels
from app.views.components import empty_figure, error_alert, gilpin_badge, method_note
from app.services.text_page import text_page
from explainers.persuasive import gilpin_label
from workspace.errors import CandorError

_VIEW = [Output(ids.TEXT_NOTES, "children"), Output(ids.TEXT_PREDICTION, "figure"),
         Output(ids.TEXT_MODEL_VIEW, "figure")]
_PICKERS = [Output(ids.TEXT_LAYER, "options"), Output(ids.TEXT_LAYER, "value"), Output(ids.TEXT_HEADS, "options"),
            Output(ids.TEXT_HEADS, "value"), Output(ids.TEXT_LAYER, "placeholder"),
            Output(ids.TEXT_HEADS, "placeholder")]
_LOPARDO = [Output(ids.TEXT_LOPARDO_SUMMARY, "children"), Output(ids.TEXT_LOPARDO_SCORES, "figure"),
            Output(ids.TEXT_LOPARDO_AGREEMENT, "figure")]


def _text(current) -> str:
    """The current text of the page's store (a store from a request may hold anything: then nothing to show)."""
    if not isinstance(current, dict) or not isinstance(current.get("text"), str) or not current["text"]:
        raise PreventUpdate
    return current["text"]


def _trigger():
    try:
        return ctx.triggered_id
    except MissingCallbackContextException:  # called as a plain function (tests): the page opening
        return None


@callback(Output(ids.TEXT_CURRENT, "data"), Output(ids.TEXT_INPUT, "value"), *_VIEW, *_PICKERS,
          Output(ids.TEXT_HEAD_VIEW, "figure"), Output(ids.TEXT_AGGREGATES, "figure"),
          Output(ids.TEXT_AGREEMENT, "figure"), Output(ids.TEXT_AGREEMENT_NOTE, "children"),
          Output(ids.TEXT_SLOW_STATUS, "children", allow_duplicate=True), *_LOPARDO,
          Input(ids.TEXT_SUBMIT, "n_clicks"), Input(ids.TEXT_INPUT, "n_submit"), Input(ids.TEXT_ROW, "value"),
          State(ids.TEXT_INPUT, "value"), State(ids.TEXT_CURRENT, "data"), State(ids.TEXT_DATASET, "data"),
          State(ids.TEXT_COLUMN, "value"), State(ids.TEXT_LABEL_COLUMN, "value"), State(ids.TEXT_LAYER, "value"),
          State(ids.TEXT_HEADS, "value"), State(ids.TEXT_LAYER, "options"), State(ids.TEXT_HEADS, "options"),
          State(ids.TEXT_METHOD, "value"), State(ids.TEXT_METRIC, "value"), State(ids.TEXT_QUERY, "value"),
          State(ids.TEXT_LOPARDO_MODEL, "data"), prevent_initial_call="initial_duplicate")
def show_text(_clicks, _submits, index, typed, current, dataset, text_col, label_col, layer, heads, layer_options,
              head_options, method, metric, query, lopardo):
    """A new text, typed or picked, or the page's own text on opening: every panel in one request."""
    trigger = _trigger()
    box = no_update
    if trigger == ids.TEXT_ROW:
        if index is None:  # the picker was cleared (another dataset)
            raise PreventUpdate
        chosen = _spec(dataset, text_col, label_col)
        current = {"text": None, "origin": f"text {index} of {chosen.get('name') or 'the dataset'}"}
    elif trigger in (ids.TEXT_SUBMIT, ids.TEXT_INPUT):
        current = {"text": typed if isinstance(typed, str) else "", "origin": "typed"}
    else:
        current = {"text": _text(current), "origin": current.get("origin")}
    first = len(layer_options or []) == 0 or len(head_options or []) == 0 or not isinstance(layer, int)
    try:
        page = text_page(current["text"], pick=(chosen, index) if trigger == ids.TEXT_ROW else None,
                         layer=layer, method=method, query=query, lopardo_key=(lopardo or {}).get("key"),
                         parts=("view", "model", "agreement", "lopardo") if first else
                         ("view", "model", "head", "aggregates", "agreement", "lopardo"))
    except CandorError:  # only a pick: the dataset note (list_texts) already says what is wrong with it
        raise PreventUpdate from None
    if trigger == ids.TEXT_ROW:
        current, box = {**current, "text": page.text}, page.text
    pickers = _pickers(page, layer_options, head_options, layer, heads)
    if pickers[1] is not no_update:  # the pickers are (re)filled: show_layer draws with their values
        layered = (no_update, no_update)
    else:
        layered = (head_view(page, heads), aggregates_view(page))
    return (current if trigger is not None else no_update, box, *view_panels(page, current.get("origin")), *pickers,
            *layered, *agreement_view(page, method, metric), "" if trigger is not None else no_update,
            *lopardo_panels(page))


@callback(Output(ids.TEXT_HEAD_VIEW, "figure", allow_duplicate=True),
          Output(ids.TEXT_AGGREGATES, "figure", allow_duplicate=True),
          Input(ids.TEXT_LAYER, "value"), Input(ids.TEXT_HEADS, "value"), State(ids.TEXT_CURRENT, "data"),
          prevent_initial_call=True)
def show_layer(layer, heads, current):
    """Another layer (head view and aggregates) or other heads (the head view only)."""
    only_heads = _trigger() == ids.TEXT_HEADS
    page = text_page(_text(current), ("head",) if only_heads else ("head", "aggregates"), layer=layer)
    return head_view(page, heads), no_update if only_heads else aggregates_view(page)


@callback(Output(ids.TEXT_AGREEMENT, "figure", allow_duplicate=True),
          Output(ids.TEXT_AGREEMENT_NOTE, "children", allow_duplicate=True),
          Input(ids.TEXT_METHOD, "value"), Input(ids.TEXT_METRIC, "value"), Input(ids.TEXT_QUERY, "value"),
          State(ids.TEXT_CURRENT, "data"), prevent_initial_call=True)
def show_agreement(method, metric, query, current):
    """Layers x heads agreement of attention with the chosen attribution, metric and attention reading."""
    return agreement_view(text_page(_text(current), ("agreement",), method=method, query=query), method, metric)


@callback(Output(ids.TEXT_AGGREGATES, "figure", allow_duplicate=True),
          Output(ids.TEXT_AGREEMENT, "figure", allow_duplicate=True),
          Output(ids.TEXT_AGREEMENT_NOTE, "children", allow_duplicate=True),
          Input(ids.TEXT_SLOW_DONE, "data"), State(ids.TEXT_CURRENT, "data"), State(ids.TEXT_LAYER, "value"),
          State(ids.TEXT_METHOD, "value"), State(ids.TEXT_METRIC, "value"), State(ids.TEXT_QUERY, "value"),
          prevent_initial_call=True)
def show_slow_results(_done, current, layer, method, metric, query):
    """The LIME/SHAP job finished: the aggregates and the agreement with what it computed."""
    page = text_page(_text(current), ("head", "aggregates", "agreement"), layer=layer, method=method, query=query)
    return aggregates_view(page), *agreement_view(page, method, metric)


# ---------------------------------------------------------------- views of a TextPage

def _pickers(page, layer_options, head_options, layer=None, heads=None) -> tuple:
    """:func:`picker_fill` of the loaded model; ``no_update`` when the pickers are already filled for it."""
    info = page.info
    if info is None:  # the notes show the message
        return [], None, [], [], "no model loaded", "no model loaded"
    if (len(layer_options or []) == info.n_layers and len(head_options or []) == info.n_heads
            and isinstance(layer, int)):
        return (no_update,) * 6  # already filled on this visit: keep the user's choice
    return picker_fill(info, layer, heads)


def picker_fill(info, layer=None, heads=None) -> tuple:
    """Options, values and placeholders of the layer and head pickers for a model's layers x heads: the last
    layer and heads 0-3 chosen, unless the page's link chose others (``app.shell.url_state`` checked them against the
    same model). The page's layout fills them so when the model is already loaded (one request on opening)."""
    linked = isinstance(layer, int) and 0 <= layer < info.n_layers
    linked_heads = heads is not None and all(isinstance(h, int) and 0 <= h < info.n_heads for h in heads)
    return ([{"label": f"layer {l}", "value": l} for l in range(info.n_layers)], layer if linked else info.n_layers - 1,
            [{"label": f"head {h}", "value": h} for h in range(info.n_heads)],
            heads if linked_heads else list(range(min(4, info.n_heads))),
            "layer", "heads")


def view_panels(page, origin: str | None) -> tuple:
    """Notes (truncation, excluded tokens, merge rule, timings), prediction and model view of the text."""
    v = page.view
    if v is None:
        err = page.errors["view"]
        return error_alert(err), empty_figure(err), empty_figure(err)
    a, enc = v.attention, v.attention.encoding
    return (_notes(origin, v), ft.prediction_bar(a.labels, v.probabilities, v.info.head),
            ft.model_view(enc.tokens, a.attention.weights))


def head_view(page, heads):
    """Token-to-token attention of the page's layer and the chosen heads (more than 4: their mean)."""
    if "head" in page.errors:
        return empty_figure(page.errors["head"])
    a = page.view.attention
    w = a.attention.weights
    heads = [int(h) for h in heads or [] if 0 <= int(h) < w.shape[1]] or [0]
    return ft.head_view(a.encoding.tokens, w[page.layer], page.layer, heads)


def aggregates_view(page):
    """Per-word attention aggregates aligned with every attribution computed so far."""
    if "aggregates" in page.errors:
        return empty_figure(page.errors["aggregates"])
    return ft.aggregates_view(page.view.attention.encoding.words, page.aggregates,
                              [ft.attribution_row(e) for e in page.attributions])


def agreement_view(page, method: str, metric: str) -> tuple:
    """Layers x heads agreement of attention with the chosen attribution and metric, and its note."""
    if "agreement" in page.errors:
        err = page.errors["agreement"]
        return empty_figure(err), error_alert(err)
    if page.agreement is None:
        msg = f"{_LATER[method]} has not been computed for this text yet: press “Run LIME and SHAP”"
        return empty_figure(msg), method_note(msg)
    expl = page.agreement_attribution
    return ft.agreement_heatmap(page.agreement, metric), html.Div([
        gilpin_badge(gilpin_label("attention")), gilpin_badge(gilpin_label(expl)),
        method_note(f"attribution: {ft.attribution_label(expl)}; {expl.source}")])


def _notes(origin: str | None, v) -> html.Div:
    a, enc = v.attention, v.attention.encoding
    p = float(v.probabilities[a.predicted])
    trunc = (dbc.Alert(f"Truncated at the model maximum of {enc.max_length} tokens: {enc.truncation_note}",
                       color="warning", className="mb-1 py-2") if enc.truncated else None)
    ig = (f"Integrated Gradients: completeness gap {v.ig.params['relative_gap']:.2%} of |g(x) - g(baseline)| at "
          f"{v.ig.params['n_steps']} steps" if v.ig is not None else
          f"Integrated Gradients on {enc.n_tokens} tokens takes more than 2 s: run it below with LIME and SHAP")
    timing = ", ".join(f"{k} {s:.2f} s" for k, s in v.seconds.items())
    where = f" (from the folder {Path(v.info.folder).name}, loaded in {v.info.load_seconds:.1f} s)" if v.info.folder else ""
    return html.Div([
        html.P([html.Strong(f"Predicted {v.predicted_label} (P = {p:.3f})"), f" for {origin or 'the text'}: "
                f"{enc.n_tokens} tokens, {len(enc.words)} words."], className="mb-1"),
        html.P([html.Span("Model: ", className="fw-semibold"), v.info.description + where], className="small mb-1"),
        html.Div([gilpin_badge(gilpin_label("attention"))]
                 + ([gilpin_badge(gilpin_label(v.ig))] if v.ig is not None else []), className="mb-1"),
        trunc,
        method_note(f"{a.source}; max length {enc.max_length} tokens"),
        method_note(f"{enc.n_special} special tokens ({', '.join(sorted({t for t, s in zip(enc.tokens, enc.special_mask) if s}))})"
                    f" and {enc.n_padding} padding tokens excluded from every per-word score"),
        method_note(enc.merge_rule),
        method_note(ig),
        method_note(f"computed in {timing}"),
    ])
