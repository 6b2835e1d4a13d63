"""Dependence: one feature's SHAP dependence beside its partial dependence and ICE curves (issue 25)."""
import dash
import dash_bootstrap_components as dbc
from dash import dcc, html

from app import services
from app.shell import ids
from app.shell.url_state import from_url
from app.views.components import choice_options, choice_value, graph
from workspace.errors import CandorError

dash.register_page(__name__, path="/dependence", name="Dependence", title="Candor · Dependence", order=6)

WAIT = "global SHAP is being computed: how far, just below"


def _picker() -> dcc.Dropdown:
    """The feature picker, largest mean |SHAP| first (every column; before global SHAP exists, the table's
    columns in their order)."""
    try:
        names = services.dependence.features() if services.is_ready("shap_all") else services.feature_names()
    except CandorError:
        names = ()
    names = list(names)
    return dcc.Dropdown(id=ids.DEPENDENCE_FEATURE, options=choice_options(names), clearable=False,
                        value=choice_value(names[0]) if names else None)


@from_url('/dependence')  # the view's state from and to its URL (app/shell/url_state.py)
def layout(**_):
    return html.Div([
        html.H2("Dependence: how the output follows one feature"),
        dbc.Row(dbc.Col([dbc.Label("Feature", html_for=ids.DEPENDENCE_FEATURE, className="small mb-0"), _picker()],
                        md=4), className="mb-2"),
        dcc.Interval(id=ids.DEPENDENCE_WAIT_TICK, interval=1000, disabled=False),
        dbc.Row([dbc.Col(graph(ids.DEPENDENCE_SHAP, 420, placeholder=WAIT), lg=6),
                 dbc.Col(graph(ids.DEPENDENCE_PDP, 420, placeholder=WAIT), lg=6)]),
        html.Div(id=ids.DEPENDENCE_NOTES, className="mb-3", role="status"),
    ])
