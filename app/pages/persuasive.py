"""Persuasive: the top-k story beside the full explanation, with what the simplification costs."""
import dash
import dash_bootstrap_components as dbc
from dash import dcc, html

from app import ids, services
from app.components import graph

dash.register_page(__name__, path="/persuasive", name="Persuasive", title="Candor · Persuasive", order=3)


def layout(**_):
    d = services.workspace().X.shape[1]
    slider = dcc.Slider(id=ids.K_SLIDER, min=1, max=d, step=1, value=min(3, d),
                        marks={k: str(k) for k in sorted({1, d, *range(5, d, 5)})},
                        tooltip={"placement": "bottom", "always_visible": False})
    return html.Div([
        html.H2("Persuasive: the simplified story and its cost"),
        html.Div([dbc.Label("k: features shown in the simplified explanation", html_for=ids.K_SLIDER), slider],
                 className="mb-3 k-control"),
        html.Div(id=ids.STATEMENT),
        html.Div(id=ids.COST),
        dbc.Row([dbc.Col(graph(ids.FULL_BAR, 520), md=4), dbc.Col(graph(ids.TOPK_BAR, 520), md=4),
                 dbc.Col(graph(ids.TRADEOFF, 520), md=4)]),
    ])
