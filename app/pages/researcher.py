"""Researcher pages (researcher role required): enrolment, completion, results and exports of each study."""
import dash
import dash_bootstrap_components as dbc
from dash import dcc, html

from app.callbacks import study_researcher as _callbacks  # noqa: F401  (registers this page's callbacks)
from study import ids

dash.register_page(__name__, path="/study-admin", name="Studies", title="Candor · Studies")


def layout(**_):
    login = dbc.Row([
        dbc.Col(dbc.Input(id=ids.LOGIN_PASSWORD, type="password", placeholder="Researcher password"), width=4),
        dbc.Col([dbc.Button("Log in", id=ids.LOGIN_BUTTON, n_clicks=0, color="primary"),
                 dbc.Button("Log out", id=ids.LOGOUT_BUTTON, n_clicks=0, color="secondary", className="ms-2")]),
    ], className="mb-2 g-2")
    return html.Div([
        html.H2("Studies"),
        login, html.Div(id=ids.LOGIN_MESSAGE, className="mb-2"),
        html.P(["The password field logs in the researcher account of CANDOR_RESEARCHER_PASSWORD; other "
                "researcher accounts ", html.A("log in here", href="/login?next=/study-admin"), "."],
               className="text-muted small"),
        dcc.Store(id=ids.AUTH_STATE, data=0),
        dcc.Dropdown(id=ids.STUDY_SELECT, placeholder="Choose a study", className="mb-3"),
        html.Div(id=ids.DASHBOARD),
        html.Div([dbc.Button("Export CSV", id=ids.EXPORT_CSV, n_clicks=0, color="light", className="me-2"),
                  dbc.Button("Export Parquet", id=ids.EXPORT_PARQUET, n_clicks=0, color="light")], className="mt-3"),
        dcc.Download(id=ids.DOWNLOAD),
    ])
