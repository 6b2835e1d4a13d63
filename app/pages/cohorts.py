"""Cohorts and error analysis: a cohort of held-out rows by filters or an error-tree leaf, its accuracy and
fidelity figures, where the simplified story misleads most, and fairness rates by sensitive features."""
import dash
import dash_bootstrap_components as dbc
from dash import dcc, html

from app import services
from app.shell import ids
from app.shell.url_state import from_url
from app.views.components import choice_options, gilpin_badge, graph
from explainers.persuasive import gilpin_label

REQUIRES = "cohorts"
"""The method family this page shows (:func:`app.services.why_not` says whether it applies)."""

dash.register_page(__name__, path="/cohorts", name="Cohorts", title="Candor · Cohorts", order=8, requires=REQUIRES)

FILTER_HELP = "e.g. mean radius > 15; worst area <= 1000 (a category by its level: sex == Female)"


@from_url("/cohorts")  # the view's state from and to its URL (app/shell/url_state.py)
def layout(**_):
    if (why := services.why_not(REQUIRES)) is not None:
        return html.Div([html.H2("Cohorts and error analysis"), dbc.Alert(why, color="secondary")])
    columns = list(services.workspace().X.columns)
    controls = dbc.Row([
        dbc.Col([dbc.Label("Cohort: conditions joined by ;", html_for=ids.COHORT_FILTER),
                 dbc.Input(id=ids.COHORT_FILTER, type="text", value="", debounce=True, placeholder=FILTER_HELP,
                           maxLength=2000)], md=5),
        dbc.Col([dbc.Label("Or pick an error-tree leaf", html_for=ids.COHORT_LEAF),
                 dcc.Dropdown(id=ids.COHORT_LEAF, options=[], placeholder="a leaf sets the conditions")], md=4),
        dbc.Col([dbc.Label("Sensitive features", html_for=ids.COHORT_SENSITIVE),
                 dcc.Dropdown(id=ids.COHORT_SENSITIVE, options=choice_options(columns), value=[], multi=True,
                              placeholder="e.g. race, sex")], md=3),
    ], className="mb-3")
    return html.Div([
        html.H2("Cohorts and error analysis"),
        html.P("The held-out rows of a cohort: how often the model is right there, and how faithful the surrogate "
               "and the Persuasive page's story are there. The error tree finds where the model is wrong.",
               className="small"),
        controls, html.Div(id=ids.COHORT_NOTE, role="status"), html.Div(id=ids.COHORT_TABLE),
        html.Div(["Error tree: ", gilpin_badge(gilpin_label("error_tree"))], className="small mb-1"),
        dbc.Row([dbc.Col(graph(ids.COHORT_TREE, 380), md=6), dbc.Col(graph(ids.COHORT_MISLEADS, 380), md=6)]),
        html.H3("Error-tree leaves and the cohorts ranked", className="h5 mt-3"), html.Div(id=ids.COHORT_LEAVES),
        html.H3("Fairness", className="h5 mt-3"), html.Div(id=ids.COHORT_FAIRNESS),
        html.Div(id=ids.COHORT_NOTES),
    ])
