"""Text page callbacks that draw its views: one request per user action (issue 14), each callback calling
:func:`app.services.text_page.text_page` once and drawing with :mod:`app.views.text`.

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

from dash import Input, Output, State, callback, ctx, no_update
from dash.exceptions import MissingCallbackContextException, PreventUpdate

from app.shell import ids
from app.services.text_page import text_page
from app.views.text import aggregates_view, agreement_view, dataset_spec, head_view, picker_fill, view_panels
from app.views.text_lopardo import lopardo_panels
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
        chosen = dataset_spec(dataset, text_col, label_col)
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


def _pickers(page, layer_options, head_options, layer=None, heads=None) -> tuple:
    """:func:`picker_fill` of the loaded model; ``no_update`` when the pickers are already filled for it."""
    info = page.info
    if info is None:  # the notes show the message
        return [], None, [], [], "no model loaded", "no model loaded"
    if (len(layer_options or []) == info.n_layers and len(head_options or []) == info.n_heads
            and isinstance(layer, int)):
        return (no_update,) * 6  # already filled on this visit: keep the user's choice
    return picker_fill(info, layer, heads)
