"""Text page callbacks: thin (read inputs, call one service, render); long jobs run in the background.

Background jobs (``background=True``) run in a forked process through the app's DiskcacheManager;
they write their results to the services' on-disk cache and return only small values, and the
views (:mod:`app.callbacks.text_views`: one request per user action) read the results back by text.
"""
from __future__ import annotations

import hashlib

from dash import Input, Output, State, callback, html, no_update
from dash.exceptions import PreventUpdate

from app.views import figures_text as ft
from app.shell import ids
from app import services
from app.views.components import empty_figure, error_alert, gilpin_badge, method_note
from app.views.text import SLOW_METHOD_NAMES, column_pickers, dataset_spec, text_choices
from explainers.persuasive import gilpin_label
from workspace.errors import CandorError


def _text(current) -> str:
    if not current or not current.get("text"):
        raise PreventUpdate
    return current["text"]


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
          Output(ids.TEXT_LABEL_COLUMN, "disabled"), Input(ids.TEXT_DATASET, "data"), prevent_initial_call=True)
def show_columns(dataset):
    """Column pickers of the dataset (:func:`app.views.text.column_pickers`)."""
    return column_pickers(dataset)


@callback(Output(ids.TEXT_ROW, "options"), Output(ids.TEXT_ROW, "value"), Output(ids.TEXT_DATASET_NOTE, "children"),
          Input(ids.TEXT_COLUMN, "value"), Input(ids.TEXT_LABEL_COLUMN, "value"), Input(ids.TEXT_DATASET, "data"),
          State(ids.TEXT_ROW, "value"), prevent_initial_call=True)
def list_texts(text_col, label_col, dataset, picked=None):
    """The texts to pick from, and which columns and labels are used; a picked text is cleared (an empty
    picker is left alone: clearing it would send the page's text callback a request for nothing)."""
    try:
        options, note = text_choices(text_col, label_col, dataset)
    except CandorError as err:
        return [], None, error_alert(str(err))
    return options, None if picked is not None else no_update, note


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
    done = ", ".join(f"{SLOW_METHOD_NAMES[m]} {s:.1f} s" for m, s in out["seconds"].items())
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]
    return {"text": digest, "methods": out["methods"]}, f"Done ({done}; 0.0 s means it was cached)."


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
            dataset_spec(dataset, text_col, label_col), conllu if source == "conllu" else None,
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
