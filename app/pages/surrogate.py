"""Surrogate: MUSE two-level decision sets fitted to the model's predictions, and their frontier."""
import dash
import dash_bootstrap_components as dbc
from dash import dcc, html

from app.shell import ids
from app import services
from app.shell.url_state import from_url
from app.serve.access import has_role
from app.views.components import choice_options, graph

REQUIRES = "surrogate"
"""The method family this page shows (:func:`app.services.why_not` says whether it applies)."""

dash.register_page(__name__, path="/surrogate", name="Surrogate", title="Candor · Surrogate", order=2,
                   requires=REQUIRES)


def _budget(label: str, component_id: str, value: int, hi: int) -> dbc.Col:
    return dbc.Col([dbc.Label(label, html_for=component_id, className="small mb-0"),
                    dbc.Input(id=component_id, type="number", min=1, max=hi, step=1, value=value, size="sm")], md=2)


@from_url('/surrogate')  # the view's state from and to its URL (app/shell/url_state.py)
def layout(**_):
    if (why := services.why_not(REQUIRES)) is not None:
        return html.Div([html.H2("Surrogate"), dbc.Alert(why, color="secondary")])
    b = services.surrogates.DEFAULT_BUDGETS
    controls = dbc.Card(dbc.CardBody([
        dbc.Row([
            dbc.Col([dbc.Label("Features of interest (neighborhood descriptors use only these; empty = all)",
                               html_for=ids.SURROGATE_FOI, className="small mb-0"),
                     dcc.Dropdown(id=ids.SURROGATE_FOI, options=choice_options(services.feature_names()), multi=True,
                                  placeholder="all features")], md=6),
            _budget("Max rules", ids.SURROGATE_MAX_RULES, b["max_rules"], 30),
            _budget("Max width", ids.SURROGATE_MAX_WIDTH, b["max_width"], 3),
            _budget("Max neighborhoods", ids.SURROGATE_MAX_NBHD, b["max_neighborhoods"], 10),
        ], className="g-2 align-items-end"),
        dbc.Row(dbc.Col([
            dbc.Label("λ weights: fewer predicates, feature overlap, rule overlap, cover, fidelity "
                      "(\"auto\" chooses the fidelity weight on a validation split)",
                      html_for=ids.SURROGATE_LAMBDAS, className="small mb-0"),
            dbc.Input(id=ids.SURROGATE_LAMBDAS, value=services.surrogates.DEFAULT_LAMBDAS, size="sm", debounce=True),
        ], md=6), className="g-2 mt-1"),
        html.Div([dbc.Button("Fit MUSE", id=ids.SURROGATE_FIT, color="primary", size="sm", n_clicks=0,
                             disabled=not has_role("analyst")),
                  *([] if has_role("analyst") else [html.Small(
                      "Fitting other settings needs the analyst role; the frontier below uses the defaults.",
                      className="text-muted ms-2")]),
                  dbc.Button("Cancel", id=ids.SURROGATE_CANCEL, color="secondary", size="sm", className="ms-2",
                             disabled=True),
                  # shown only while a job runs (its label beside the bar, where it has room to be read)
                  html.Div([dbc.Progress(id=ids.SURROGATE_PROGRESS, value=0, className="surrogate-progress"),
                            html.Small(id=ids.SURROGATE_PROGRESS_LABEL, className="job-progress-label")],
                           id=ids.SURROGATE_PROGRESS_BOX, hidden=True, className="job-progress-box ms-3")],
                 className="d-flex align-items-center mt-2"),
        html.Div(id=ids.SURROGATE_ERROR),
    ]), className="mb-3")
    return html.Div([
        html.H2("Surrogate: the model as rules"),
        dcc.Store(id=ids.SURROGATE_KEY), dcc.Store(id=ids.SURROGATE_FRONTIER_KEY),
        dcc.Store(id=ids.SURROGATE_FRONTIER_GO), dcc.Store(id=ids.SURROGATE_LINK_FIT),
        dcc.Store(id=ids.SURROGATE_FITTING, data=False),
        dcc.Interval(id=ids.SURROGATE_WAIT_TICK, interval=1000, disabled=False),
        controls, html.Div(id=ids.SURROGATE_MATCH, role="status"), html.Div(id=ids.SURROGATE_WAIT),
        html.Div(id=ids.SURROGATE_SUMMARY),
        dbc.Row([dbc.Col(html.Div(id=ids.SURROGATE_RULES), lg=6),
                 dbc.Col([graph(ids.SURROGATE_FRONTIER, 430),
                          html.Small("Error bars: Wilson 95 % intervals over the held-out rows. Dotted line: the "
                                     "trivial surrogate (always the majority label); a surrogate at or below it "
                                     "explains nothing. CART AS DECISION SET is the same tree with the default "
                                     "label's leaves left to the default rule, counted as MUSE is.",
                                     className="text-muted d-block mb-2"),
                          graph(ids.SURROGATE_CONFUSION, 260)], lg=6)]),
    ])
