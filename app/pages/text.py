"""Text attention: a transformer text classifier's attention next to its attributions (issues 5 and 7).

The layout loads no model: the layer and head pickers are filled by the first callback from the loaded model
(:func:`app.callbacks.text_views.show_text`), so any number of layers x heads is served.
"""
import dash
import dash_bootstrap_components as dbc
from dash import dcc, html

from app.shell import ids
from app import services
from app.shell.url_state import from_url
from app.views.components import card, empty_figure, error_alert, graph, method_note
from app.services import text_loader
from app.serve.access import has_role
from app.views.text import column_pickers, picker_fill, text_choices
from workspace.errors import CandorError

dash.register_page(__name__, path="/text", name="Text attention", title="Candor · Text attention", order=5)


def _input_card() -> dbc.Card:
    first = services.EXAMPLES[0][0]
    # the built-in examples' pickers and note, as the callbacks fill them when the dataset changes (issue 14:
    # opening the page sends no request for them)
    col_options, col, col_off, label_options, label, label_off = column_pickers(services.BUILTIN)
    try:
        row_options, dataset_note = text_choices(col, label, services.BUILTIN)
    except CandorError as err:
        row_options, dataset_note = [], error_alert(str(err))
    return card("Text", [
        dbc.Textarea(id=ids.TEXT_INPUT, value=first, rows=3, submit_on_enter=True, className="mb-2",
                     placeholder="Type a sentence and press Enter"),
        dbc.Button("Analyze", id=ids.TEXT_SUBMIT, color="primary", size="sm", n_clicks=0, className="mb-3"),
        dbc.Label("…or pick a text of the dataset", html_for=ids.TEXT_ROW, className="small mb-1"),
        dcc.Dropdown(id=ids.TEXT_ROW, options=row_options, placeholder="pick a text", className="mb-2"),
        html.Div(dataset_note, id=ids.TEXT_DATASET_NOTE, className="method-note mb-2"),
        dcc.Upload(id=ids.TEXT_UPLOAD, children=html.Div(["Drop or ", html.A("choose"), " a CSV of texts "
                                                          "(optional label column; at most 2 MB)"]),
                   # no `accept`: a dropped file of another type would be dropped silently by the browser
                   # component; the server reads it and says why it is not a CSV
                   className="upload-box mb-2", multiple=False),
        dbc.Row([
            dbc.Col([dbc.Label("text column", html_for=ids.TEXT_COLUMN, className="small mb-0"),
                     dcc.Dropdown(id=ids.TEXT_COLUMN, options=col_options, value=col, clearable=False,
                                  disabled=col_off)], md=6),
            dbc.Col([dbc.Label("label column", html_for=ids.TEXT_LABEL_COLUMN, className="small mb-0"),
                     dcc.Dropdown(id=ids.TEXT_LABEL_COLUMN, options=label_options, value=label,
                                  disabled=label_off)], md=6),
        ], className="mb-2 g-2"),
        dbc.Button("Use the built-in examples", id=ids.TEXT_BUILTIN, color="link", size="sm", n_clicks=0,
                   className="p-0"),
        html.Div(id=ids.TEXT_UPLOAD_STATUS, className="small mt-1"),
        dcc.Store(id=ids.TEXT_CURRENT, data={"text": first, "origin": "built-in example 0"}),
        dcc.Store(id=ids.TEXT_DATASET, data=services.BUILTIN),
        dcc.Store(id=ids.TEXT_SLOW_DONE),
        dcc.Store(id=ids.TEXT_CONLLU),
    ])


def _head_controls() -> dbc.Row:
    """Layer and head pickers; their options come from the loaded model: filled here if this process has loaded
    it, else by the first callback (which loads it)."""
    info = text_loader.loaded_info()
    filled = picker_fill(info) if info is not None else ([], None, [], None, "loading the model…", "loading the model…")
    layers, layer, heads, chosen, layer_hint, heads_hint = filled
    return dbc.Row([
        dbc.Col([dbc.Label("layer", html_for=ids.TEXT_LAYER, className="small mb-0"),
                 dcc.Dropdown(id=ids.TEXT_LAYER, options=layers, value=layer, clearable=False,
                              placeholder=layer_hint)], md=3),
        dbc.Col([dbc.Label("heads (more than 4: their mean)", html_for=ids.TEXT_HEADS, className="small mb-0"),
                 dcc.Dropdown(id=ids.TEXT_HEADS, options=heads, value=chosen, multi=True, placeholder=heads_hint)],
                md=9),
    ], className="mb-2 g-2")


def _intro() -> html.P:
    """Which model the page explains (the loaded model's name, shape and labels are in the notes)."""
    folder = text_loader.configured_folder()
    if folder is None:
        model = ("The bundled classifier is the real all-MiniLM-L6-v2 encoder (6 layers x 12 heads) with a zero-shot "
                 "sentiment head built from label descriptions; nothing is downloaded. ")
    else:
        model = (f"The classifier is your Hugging Face model from the folder {folder.name} ({text_loader.MODEL_ENV}), loaded from "
                 "local files only; its name, layers x heads, labels and maximum length are stated beside the "
                 "prediction. ")
    return html.P([model, "Word pieces are merged to words (Clark et al. 2019): attention to a word and attributions "
                   "are summed over its pieces, attention from a word is averaged; special and padding tokens are "
                   "excluded from every per-word score."], className="small")


def _agreement_controls() -> dbc.Row:
    radio = dict(inline=True, className="small")
    return dbc.Row([
        dbc.Col([dbc.Label("attribution", html_for=ids.TEXT_METHOD, className="small mb-0"), dbc.RadioItems(
            id=ids.TEXT_METHOD, value="ig", options=[{"label": "Integrated Gradients", "value": "ig"},
                                                    {"label": "gradient x input", "value": "gxi"},
                                                    {"label": "LIME", "value": "lime"},
                                                    {"label": "SHAP", "value": "shap"}], **radio)], md=5),
        dbc.Col([dbc.Label("metric", html_for=ids.TEXT_METRIC, className="small mb-0"), dbc.RadioItems(
            id=ids.TEXT_METRIC, value="spearman", options=[{"label": "Spearman ρ", "value": "spearman"},
                                                           {"label": "Kendall τ-b", "value": "kendall"},
                                                           {"label": "top-k overlap", "value": "top_k"}], **radio)], md=4),
        dbc.Col([dbc.Label("attention of", html_for=ids.TEXT_QUERY, className="small mb-0"), dbc.RadioItems(
            id=ids.TEXT_QUERY, value="cls", options=[{"label": "CLS row", "value": "cls"},
                                                     {"label": "mean over queries", "value": "mean"}], **radio)], md=3),
    ], className="mb-2")


def _job_controls(run_id: str, run_label: str, cancel_id: str, progress_id: str) -> html.Div:
    analyst = has_role("analyst")  # background jobs need the analyst role (the server refuses others)
    return html.Div([
        dbc.Button(run_label, id=run_id, color="secondary", size="sm", n_clicks=0, className="me-2",
                   disabled=not analyst),
        *([] if analyst else [html.Small("Running this job needs the analyst role.", className="text-muted me-2")]),
        dbc.Button("Cancel", id=cancel_id, color="outline-secondary", size="sm", n_clicks=0, disabled=True),
        dbc.Progress(id=progress_id, value=0, label="", className="mt-2 job-progress"),
    ], className="mb-2")


def _heads_card() -> dbc.Card:
    return card("Head analysis over a dataset (background job, cached)", [
        html.P("Roles (Voita et al. 2019: positional at offset -1/+1 with the 90% rule, rare word, and syntactic "
               "against gold arcs when a CoNLL-U file is given), confidence, gradient head importance (Michel et al. "
               "2019) and the pruning curve, over the dataset chosen above.", className="small"),
        dbc.RadioItems(id=ids.TEXT_HEADS_SOURCE, value="texts", inline=True, className="small mb-2", options=[
            {"label": "texts of the dataset", "value": "texts"},
            {"label": "CoNLL-U upload (word forms as input, gold heads)", "value": "conllu", "disabled": True}]),
        dcc.Upload(id=ids.TEXT_CONLLU_UPLOAD, children=html.Div(["Drop or ", html.A("choose"), " a CoNLL-U file "
                                                                 "for syntactic roles (at most 5 MB)"]),
                   className="upload-box mb-2", multiple=False),  # no `accept` (see above)
        html.Div(id=ids.TEXT_CONLLU_STATUS, className="small mb-2"),
        _job_controls(ids.TEXT_HEADS_RUN, "Run head analysis", ids.TEXT_HEADS_CANCEL, ids.TEXT_HEADS_PROGRESS),
        html.Div(id=ids.TEXT_HEADS_SUMMARY),
        dbc.Row([dbc.Col(_waiting(ids.TEXT_ROLES, 360), lg=6), dbc.Col(_waiting(ids.TEXT_IMPORTANCE, 330), lg=6)]),
        _waiting(ids.TEXT_PRUNING, 330),
    ])


def _lopardo_card() -> dbc.Card:
    """Lopardo, Precioso, Garreau 2024 (arXiv 2402.03485): a single-layer attention classifier and seven explainers."""
    g = graph(ids.TEXT_LOPARDO_SCORES, 560)
    g.children.figure = empty_figure("press “Train the attention classifier”")
    bars = graph(ids.TEXT_LOPARDO_AGREEMENT, 300)
    bars.children.figure = empty_figure("press “Train the attention classifier”")
    return card("Single-layer attention classifier (Lopardo et al. 2024)", [
        html.P("A single-layer multi-head attention classifier whose only query is [CLS] (Lopardo, Precioso, Garreau "
               "2024, arXiv 2402.03485), trained on CPU on the labelled texts of the dataset chosen above, one logit "
               "per label of the text model (background job, kept on disk per dataset). For the current text: "
               "attention (α-avg, α-max), LIME and four gradient scores side by side, and how each ranks the words "
               "compared with α-avg. The numbers are this model's; none of them is quoted from the paper.",
               className="small"),
        _job_controls(ids.TEXT_LOPARDO_RUN, "Train the attention classifier", ids.TEXT_LOPARDO_CANCEL,
                      ids.TEXT_LOPARDO_PROGRESS),
        html.Div(id=ids.TEXT_LOPARDO_STATUS, className="small mb-2"),
        dcc.Store(id=ids.TEXT_LOPARDO_MODEL),
        html.Div(id=ids.TEXT_LOPARDO_SUMMARY),
        dbc.Row([dbc.Col(g, lg=8), dbc.Col(bars, lg=4)]),
    ])


def _sized(component_id: str, height: int):
    """A graph whose height follows its figure (the figure sets it from the number of tokens or rows)."""
    g = graph(component_id, height)
    g.children.style = {"minHeight": f"{height}px"}
    return g


def _waiting(component_id: str, height: int):
    """A graph that says what fills it until the head-analysis job has run."""
    g = graph(component_id, height)
    g.children.figure = empty_figure("press “Run head analysis”")
    return g


@from_url('/text')  # the view's state from and to its URL (app/shell/url_state.py)
def layout(**_):
    return html.Div([
        html.H2("Text attention vs attribution"),
        _intro(),
        dbc.Row([
            dbc.Col(_input_card(), lg=4),
            dbc.Col([html.Div(id=ids.TEXT_NOTES), graph(ids.TEXT_PREDICTION, 200)], lg=8),
        ]),
        card("Head view", [_head_controls(), _sized(ids.TEXT_HEAD_VIEW, 460)]),
        card("Model view", [graph(ids.TEXT_MODEL_VIEW, 740)]),
        card("Per-word attention and attributions", [
            html.P("LIME (1000 samples) and SHAP (Partition, 500 evaluations) take seconds: they run as a background "
                   "job (and Integrated Gradients too when the text has more than 64 tokens).", className="small"),
            _job_controls(ids.TEXT_SLOW_RUN, "Run LIME and SHAP", ids.TEXT_SLOW_CANCEL, ids.TEXT_SLOW_PROGRESS),
            html.Div(id=ids.TEXT_SLOW_STATUS, className="small mb-2"),
            _sized(ids.TEXT_AGGREGATES, 490),
        ]),
        card("Agreement of each head with the attribution", [
            _agreement_controls(), graph(ids.TEXT_AGREEMENT, 330), html.Div(id=ids.TEXT_AGREEMENT_NOTE),
            method_note("rank agreement over content words (Spearman ρ, Kendall τ-b, top-k overlap); attention is non-negative, so attributions "
                        "are compared by |value|; top-k uses k = min(5, ⌈0.2 n⌉)"),
        ]),
        _heads_card(),
        _lopardo_card(),
    ])
