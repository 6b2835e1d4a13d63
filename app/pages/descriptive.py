"""Descriptive: global SHAP importance and the other global methods beside it, and SHAP next to LIME for the
chosen row."""
import dash
import dash_bootstrap_components as dbc
from dash import dcc, html

from app.shell import ids
from app.shell.url_state import from_url
from app.serve.access import has_role
from app.views import sent
from app.views.components import graph, row_status_store
from app.views.stability import stability_controls
from app.views.whatif import editor_card

dash.register_page(__name__, path="/descriptive", name="Descriptive", title="Candor · Descriptive", order=1)


GLOBAL_WAIT = "global SHAP is being computed: how far, just below"
BEESWARM_SWITCH = "every row's SHAP value per feature (beeswarm: thousands of dots, drawn when shown)"
"""The beeswarm is drawn on request, as explainerdashboard's "detailed" importances are: its WebGL dots took 0.9-1.3 s of
the browser's CPU on every opening of this page (no GPU in headless Chromium here: SwiftShader), most of the page's
time, for a view the bar beside it summarises."""


@from_url('/descriptive')  # the view's state from and to its URL (app/shell/url_state.py)
def layout(**_):
    return html.Div([
        html.H2("Descriptive: what the model does"), row_status_store("descriptive"), sent.store("descriptive"),
        # until global SHAP exists (the warm-up, or a class switch computing it live) the note below says how far
        dbc.Row([dbc.Col(graph(ids.GLOBAL_BAR, 420, placeholder=GLOBAL_WAIT), md=5),
                 dbc.Col([dbc.Checklist(id=ids.GLOBAL_BEESWARM_SHOW, switch=True, value=[], className="small mb-1",
                                        options=[{"label": BEESWARM_SWITCH, "value": "on"}]),
                          html.Div(graph(ids.GLOBAL_BEESWARM, 420, placeholder=GLOBAL_WAIT), id=ids.GLOBAL_BEESWARM_BOX,
                                   style={"display": "none"})], md=7)]),
        html.Div(id=ids.GLOBAL_NOTE, className="mb-2"),
        dcc.Interval(id=ids.GLOBAL_WAIT_TICK, interval=1000, disabled=False),
        html.Div(id=ids.GLOBAL_METHODS, className="mb-2"),  # permutation importance beside mean |SHAP|, ...
        dcc.Interval(id=ids.GLOBAL_METHODS_TICK, interval=1000, disabled=False),
        editor_card("descriptive"),  # what-if: edit the row's features (issue 25)
        html.Div(id=ids.LOCAL_AGREEMENT),
        html.Div(dbc.RadioItems(id=ids.SHAP_PLAYERS, inline=True, value="children", options=[
            {"label": "sum of one-hot children's SHAP values (fast)", "value": "children"},
            {"label": "Shapley value with raw columns as players (exact enumeration, or sampled with its error)",
             "value": "raw"}]), id=ids.SHAP_PLAYERS_BOX, style={"display": "none"}, className="mb-2 small"),
        dbc.Row([dbc.Col(graph(ids.SHAP_WATERFALL, 440), md=6), dbc.Col(graph(ids.LIME_BAR, 440), md=6)]),
        html.Div(id=ids.LOCAL_NOTES),
        stability_controls(has_role("analyst")),
    ])
