"""Text page callbacks: thin (read inputs, call one service, render); long jobs run in the background.

Background jobs (``background=True``) run in a forked process through the app's DiskcacheManager;
they write their results to the services' on-disk cache and return only small values, and the
views read the results back by text.
"""
from __future__ import annotations

import hashlib

import dash_bootstrap_components as dbc
from dash import Input, Output, State, callback, html, no_update
from dash.exceptions import PreventUpdate

from app import figures_text as ft
from app import ids, services
from app.components import (
    choice_name,
    choice_options,
    choice_value,
    empty_figure,
    error_alert,
    gilpin_badge,
    labelled_options,
    method_note,
)
from explainers.persuasive import gilpin_label
from workspace.errors import CandorError
from app.services import text as text_services

_LATER = {"lime": "LIME", "shap": "SHAP", "ig": "Integrated Gradients"}


def _text(current) -> str:
    if not current or not current.get("text"):
        raise PreventUpdate
    return current["text"]


def _spec(dataset, text_col, label_col) -> dict:
    """The dataset description with the chosen columns (columns of another file fall back to the defaults).

    ``text_col`` and ``label_col`` are the column pickers' values (:func:`app.components.choice_value`).
    """
    text_col, label_col = choice_name(text_col), choice_name(label_col)
    spec = dict(dataset) if isinstance(dataset, dict) else dict(services.BUILTIN) if dataset is None else {}
    spec.setdefault("id", None)  # a malformed store from the browser: the service says the upload is gone
    columns = spec.get("columns") if isinstance(spec.get("columns"), list) else []
    if spec["id"] != "builtin" and text_col in columns:
        spec.update(text_column=text_col, label_column=label_col if label_col in columns else None)
    return spec


@callback(Output(ids.TEXT_CURRENT, "data", allow_duplicate=True), Input(ids.TEXT_SUBMIT, "n_clicks"),
          Input(ids.TEXT_INPUT, "n_submit"), State(ids.TEXT_INPUT, "value"), prevent_initial_call=True)
def submit_text(_clicks, _submits, text):
    """Analyze button or Enter in the text box: the typed text becomes the current text."""
    return {"text": text or "", "origin": "typed"}


@callback(Output(ids.TEXT_CURRENT, "data", allow_duplicate=True), Output(ids.TEXT_INPUT, "value"),
          Input(ids.TEXT_ROW, "value"), State(ids.TEXT_DATASET, "data"), State(ids.TEXT_COLUMN, "value"),
          State(ids.TEXT_LABEL_COLUMN, "value"), prevent_initial_call=True)
def pick_text(index, dataset, text_col, label_col):
    """A text picked from the dataset becomes the current text and fills the text box."""
    if index is None:
        raise PreventUpdate
    spec = _spec(dataset, text_col, label_col)
    try:
        text = services.dataset_text(spec, index)
    except CandorError:  # the dataset note (list_texts) already says what is wrong with the dataset
        raise PreventUpdate from None
    return {"text": text, "origin": f"text {index} of {spec.get('name') or 'the dataset'}"}, text


@callback(Output(ids.TEXT_DATASET, "data", allow_duplicate=True), Output(ids.TEXT_UPLOAD_STATUS, "children"),
          Output(ids.TEXT_UPLOAD, "contents"), Input(ids.TEXT_UPLOAD, "contents"), State(ids.TEXT_UPLOAD, "filename"),
          prevent_initial_call=True)
def upload_csv(contents, filename):
    """Store an uploaded CSV server-side; keep only its description in the browser and clear the upload."""
    if not contents:
        raise PreventUpdate
    try:
        info = services.save_csv_upload(contents, filename or "upload.csv")
    except CandorError as err:
        return no_update, error_alert(str(err)), None
    return info, f"{info['name']}: {info['n_rows']} rows, columns {', '.join(info['columns'])}", None


@callback(Output(ids.TEXT_DATASET, "data", allow_duplicate=True), Output(ids.TEXT_UPLOAD_STATUS, "children",
                                                                         allow_duplicate=True),
          Input(ids.TEXT_BUILTIN, "n_clicks"), prevent_initial_call=True)
def use_builtin(_clicks):
    """Switch back to the built-in example sentences."""
    return services.BUILTIN, ""


@callback(Output(ids.TEXT_COLUMN, "options"), Output(ids.TEXT_COLUMN, "value"), Output(ids.TEXT_COLUMN, "disabled"),
          Output(ids.TEXT_LABEL_COLUMN, "options"), Output(ids.TEXT_LABEL_COLUMN, "value"),
          Output(ids.TEXT_LABEL_COLUMN, "disabled"), Input(ids.TEXT_DATASET, "data"))
def show_columns(dataset):
    """Column pickers of the dataset (disabled for the built-in examples)."""
    spec = _spec(dataset, None, None)
    columns = spec.get("columns") or [spec.get("text_column"), spec.get("label_column")]
    builtin = spec["id"] == "builtin"
    options = choice_options(columns)
    text_col, label_col = spec.get("text_column"), spec.get("label_column")
    return (options, None if text_col is None else choice_value(text_col), builtin, options,
            None if label_col is None else choice_value(label_col), builtin)


@callback(Output(ids.TEXT_ROW, "options"), Output(ids.TEXT_ROW, "value"), Output(ids.TEXT_DATASET_NOTE, "children"),
          Input(ids.TEXT_COLUMN, "value"), Input(ids.TEXT_LABEL_COLUMN, "value"), Input(ids.TEXT_DATASET, "data"),
          prevent_initial_call=True)
def list_texts(text_col, label_col, dataset):
    """The texts to pick from, and which columns and labels are used."""
    spec = _spec(dataset, text_col, label_col)
    try:
        ds = services.dataset(spec)
    except CandorError as err:
        return [], None, error_alert(str(err))
    shown = "" if len(ds.texts) <= 500 else " (the first 500 are listed)"
    return labelled_options(services.dataset_options(spec)), None, f"Dataset: {ds.name}: {ds.note}{shown}"


@callback(Output(ids.TEXT_NOTES, "children"), Output(ids.TEXT_PREDICTION, "figure"),
          Output(ids.TEXT_MODEL_VIEW, "figure"), Input(ids.TEXT_CURRENT, "data"))
def render_text(current):
    """Notes (truncation, excluded tokens, merge rule, timings), prediction and model view of the current text."""
    try:
        v = services.text_view(_text(current))
    except CandorError as err:
        return error_alert(str(err)), empty_figure(str(err)), empty_figure(str(err))
    a, enc = v.attention, v.attention.encoding
    return (_notes(current, v), ft.prediction_bar(a.labels, v.probabilities, v.info.head),
            ft.model_view(enc.tokens, a.attention.weights))


@callback(Output(ids.TEXT_LAYER, "options"), Output(ids.TEXT_LAYER, "value"), Output(ids.TEXT_HEADS, "options"),
          Output(ids.TEXT_HEADS, "value"), Output(ids.TEXT_LAYER, "placeholder"), Output(ids.TEXT_HEADS, "placeholder"),
          Input(ids.TEXT_CURRENT, "data"), State(ids.TEXT_LAYER, "options"), State(ids.TEXT_HEADS, "options"),
          State(ids.TEXT_LAYER, "value"), State(ids.TEXT_HEADS, "value"))
def model_shape(_current, layer_options, head_options, layer=None, heads=None):
    """Layer and head pickers from the loaded model's layers x heads (the last layer, heads 0-3 chosen, unless
    the page's link chose others: ``app.url_state`` checked them against the same model)."""
    try:
        info = text_services.model_info()
    except CandorError:  # the notes show the message
        return [], None, [], [], "no model loaded", "no model loaded"
    if len(layer_options or []) == info.n_layers and len(head_options or []) == info.n_heads:
        raise PreventUpdate  # already filled on this visit: keep the user's choice
    linked = isinstance(layer, int) and 0 <= layer < info.n_layers
    linked_heads = heads is not None and all(isinstance(h, int) and 0 <= h < info.n_heads for h in heads)
    return ([{"label": f"layer {l}", "value": l} for l in range(info.n_layers)], layer if linked else info.n_layers - 1,
            [{"label": f"head {h}", "value": h} for h in range(info.n_heads)],
            heads if linked_heads else list(range(min(4, info.n_heads))),
            "layer", "heads")


def _notes(current, v) -> html.Div:
    a, enc = v.attention, v.attention.encoding
    p = float(v.probabilities[a.predicted])
    trunc = (dbc.Alert(f"Truncated at the model maximum of {enc.max_length} tokens: {enc.truncation_note}",
                       color="warning", className="mb-1 py-2") if enc.truncated else None)
    ig = (f"Integrated Gradients: completeness gap {v.ig.params['relative_gap']:.2%} of |g(x) - g(baseline)| at "
          f"{v.ig.params['n_steps']} steps" if v.ig is not None else
          f"Integrated Gradients on {enc.n_tokens} tokens takes more than 2 s: run it below with LIME and SHAP")
    timing = ", ".join(f"{k} {s:.2f} s" for k, s in v.seconds.items())
    where = f" (from {v.info.folder}, loaded in {v.info.load_seconds:.1f} s)" if v.info.folder else ""
    return html.Div([
        html.P([html.Strong(f"Predicted {v.predicted_label} (P = {p:.3f})"), f" for {current.get('origin', 'the text')}: "
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


@callback(Output(ids.TEXT_HEAD_VIEW, "figure"), Input(ids.TEXT_CURRENT, "data"), Input(ids.TEXT_LAYER, "value"),
          Input(ids.TEXT_HEADS, "value"))
def render_head_view(current, layer, heads):
    """Token-to-token attention of the chosen layer and heads."""
    try:
        a = services.text_view(_text(current)).attention
        if layer is None:  # the pickers are being filled from the model
            raise PreventUpdate
        w = a.attention.weights
        layer = text_services.check_layer(w.shape[0], layer)
    except CandorError as err:
        return empty_figure(str(err))
    heads = [int(h) for h in heads or [] if 0 <= int(h) < w.shape[1]] or [0]
    return ft.head_view(a.encoding.tokens, w[layer], layer, heads)


@callback(Output(ids.TEXT_AGGREGATES, "figure"), Input(ids.TEXT_CURRENT, "data"), Input(ids.TEXT_LAYER, "value"),
          Input(ids.TEXT_SLOW_DONE, "data"))
def render_aggregates(current, layer, _done):
    """Per-word attention aggregates aligned with every attribution computed so far."""
    text = _text(current)
    try:
        rows = services.aggregates(text, layer)
        expls = [services.attribution(text, m) for m in ("ig", "gxi", "lime", "shap")]
    except CandorError as err:
        return empty_figure(str(err))
    return ft.aggregates_view(services.text_view(text).attention.encoding.words, rows,
                              [ft.attribution_row(e) for e in expls if e is not None])


@callback(Output(ids.TEXT_AGREEMENT, "figure"), Output(ids.TEXT_AGREEMENT_NOTE, "children"),
          Input(ids.TEXT_CURRENT, "data"), Input(ids.TEXT_METHOD, "value"), Input(ids.TEXT_METRIC, "value"),
          Input(ids.TEXT_QUERY, "value"), Input(ids.TEXT_SLOW_DONE, "data"))
def render_agreement(current, method, metric, query, _done):
    """Layers x heads agreement of attention with the chosen attribution and metric."""
    try:
        report = services.agreement(_text(current), method, query)
    except CandorError as err:
        return empty_figure(str(err)), error_alert(str(err))
    if report is None:
        msg = f"{_LATER[method]} has not been computed for this text yet: press “Run LIME and SHAP”"
        return empty_figure(msg), method_note(msg)
    expl = services.attribution(_text(current), method)
    return ft.agreement_heatmap(report, metric), html.Div([
        gilpin_badge(gilpin_label("attention")), gilpin_badge(gilpin_label(expl)),
        method_note(f"attribution: {ft.attribution_label(expl)}; {expl.source}")])


@callback(Output(ids.TEXT_SLOW_DONE, "data"), Output(ids.TEXT_SLOW_STATUS, "children"),
          Input(ids.TEXT_SLOW_RUN, "n_clicks"), State(ids.TEXT_CURRENT, "data"), background=True,
          running=[(Output(ids.TEXT_SLOW_RUN, "disabled"), True, False),
                   (Output(ids.TEXT_SLOW_CANCEL, "disabled"), False, True)],
          cancel=[Input(ids.TEXT_SLOW_CANCEL, "n_clicks")],
          progress=[Output(ids.TEXT_SLOW_PROGRESS, "value"), Output(ids.TEXT_SLOW_PROGRESS, "label")],
          prevent_initial_call=True)
def run_slow(set_progress, _clicks, current):
    """Background job: LIME, SHAP (and IG on long texts) into the shared cache, with progress and cancel."""
    text = _text(current)
    try:
        out = services.run_slow_attributions(
            text, progress=lambda d, n, msg: set_progress((round(100 * d / n), msg)))
    except CandorError as err:
        return no_update, error_alert(str(err))
    except Exception as err:  # noqa: BLE001 - a job failure is shown, not raised into the browser console
        return no_update, error_alert(f"LIME/SHAP/IG job failed: {type(err).__name__}: {err}")
    done = ", ".join(f"{_LATER[m]} {s:.1f} s" for m, s in out["seconds"].items())
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]
    return {"text": digest, "methods": out["methods"]}, f"Done ({done}; 0.0 s means it was cached)."


@callback(Output(ids.TEXT_SLOW_STATUS, "children", allow_duplicate=True), Input(ids.TEXT_CURRENT, "data"),
          prevent_initial_call=True)
def clear_slow_status(_current):
    """A new text clears the previous job's status line."""
    return ""


@callback(Output(ids.TEXT_CONLLU, "data"), Output(ids.TEXT_CONLLU_STATUS, "children"),
          Output(ids.TEXT_CONLLU_UPLOAD, "contents"), Output(ids.TEXT_HEADS_SOURCE, "options"),
          Output(ids.TEXT_HEADS_SOURCE, "value"), Input(ids.TEXT_CONLLU_UPLOAD, "contents"),
          State(ids.TEXT_CONLLU_UPLOAD, "filename"), State(ids.TEXT_HEADS_SOURCE, "options"), prevent_initial_call=True)
def upload_conllu(contents, filename, options):
    """Store an uploaded CoNLL-U file server-side and offer it as the head-analysis input."""
    if not contents:
        raise PreventUpdate
    try:
        info = services.save_conllu_upload(contents, filename or "upload.conllu")
    except CandorError as err:
        return no_update, error_alert(str(err)), None, no_update, no_update
    options = [dict(o, disabled=False) for o in options]
    n, total = info["n_sentences"], info.get("n_total", info["n_sentences"])
    shown = (f"{n:,} sentences with gold heads" if n == total else
             f"the first {n:,} of {total:,} sentences with gold heads (the head analysis reads at most {n:,})")
    return info, f"{info['name']}: {shown}", None, options, "conllu"


@callback(Output(ids.TEXT_HEADS_SUMMARY, "children"), Output(ids.TEXT_ROLES, "figure"),
          Output(ids.TEXT_IMPORTANCE, "figure"), Output(ids.TEXT_PRUNING, "figure"),
          Input(ids.TEXT_HEADS_RUN, "n_clicks"), State(ids.TEXT_DATASET, "data"), State(ids.TEXT_COLUMN, "value"),
          State(ids.TEXT_LABEL_COLUMN, "value"), State(ids.TEXT_CONLLU, "data"), State(ids.TEXT_HEADS_SOURCE, "value"),
          background=True,
          running=[(Output(ids.TEXT_HEADS_RUN, "disabled"), True, False),
                   (Output(ids.TEXT_HEADS_CANCEL, "disabled"), False, True)],
          cancel=[Input(ids.TEXT_HEADS_CANCEL, "n_clicks")],
          progress=[Output(ids.TEXT_HEADS_PROGRESS, "value"), Output(ids.TEXT_HEADS_PROGRESS, "label")],
          prevent_initial_call=True)
def run_heads(set_progress, _clicks, dataset, text_col, label_col, conllu, source):
    """Background job: head roles, importance and pruning curve over the dataset (cached), with progress and cancel."""
    try:
        view, cached = services.head_analysis(
            _spec(dataset, text_col, label_col), conllu if source == "conllu" else None,
            progress=lambda d, n: set_progress((round(100 * d / n), f"{d} of {n} batches")))
    except Exception as err:  # noqa: BLE001 - CandorError names the file/column; anything else is shown too
        msg = str(err) if isinstance(err, CandorError) else f"head analysis failed: {type(err).__name__}: {err}"
        return error_alert(msg), *(empty_figure(msg),) * 3
    a = view.analysis
    return (_summary(view, cached), ft.roles_view(a.roles, a.word_roles),
            ft.importance_view(a.importance) if a.importance is not None else empty_figure("no importance"),
            ft.pruning_view(a.pruning))


def _summary(view, cached: bool) -> html.Div:
    """The head analysis in words: what ran, which heads got which role, accuracy if labelled."""
    a, r = view.analysis, view.analysis.roles
    roles = {"positional(-1)": r.heads_with("positional(-1)"), "positional(+1)": r.heads_with("positional(+1)"),
             "self": r.heads_with("self"), "rare_word": r.heads_with("rare_word"),
             "syntactic": r.heads_with("syntactic")}
    items = [html.Li(f"{k}: {', '.join(v) if v else 'none'}") for k, v in roles.items()
             if k != "syntactic" or view.syntactic]
    acc = view.accuracy
    return html.Div([
        html.P(f"{view.dataset}. {a.seconds:.1f} s" + (" (from the cache)." if cached else "."), className="mb-1"),
        html.P(f"Accuracy of the model on the labelled texts: {acc['accuracy']:.3f} (balanced "
               f"{acc['balanced_accuracy']:.3f}, n = {acc['n']})" if acc else
               "No usable labels: accuracy not computed.", className="mb-1"),
        html.Ul(items, className="small mb-1"),
        gilpin_badge(gilpin_label("head_roles")),
        method_note(f"roles: Voita et al. 2019, at {r.level} level ([CLS]/[SEP] neither queries nor targets; word "
                    f"level beside); positional if the argmax is at one offset for ≥ {r.params['positional_threshold']:.2f} "
                    f"of the queries that have a token there ({r.eligible_prev:,} of {r.n_queries:,} have a −1 "
                    f"neighbour), rare word ≥ {r.params['rare_threshold']:.2f}, syntactic ≥ baseline + "
                    f"{r.params['syntactic_margin']:.2f} (absolute, ≥ {r.params['min_arcs']} arcs; every relation that "
                    "clears it); heads as layer.head, 0-based"),
        method_note(f"importance: Michel et al. 2019, {a.importance.loss}" if a.importance else "importance: not run"),
        method_note(a.source),
    ])
