"""Surrogate: a global rule surrogate fitted to the model's predictions, and its fidelity curve."""
import dash
import dash_bootstrap_components as dbc
from dash import html

from app import ids
from app.components import graph

dash.register_page(__name__, path="/surrogate", name="Surrogate", title="Candor · Surrogate", order=2)


def layout(**_):
    return html.Div([
        html.H2("Surrogate: the model as rules"),
        html.Div(id=ids.SURROGATE_SUMMARY),
        dbc.Row([dbc.Col(html.Div(id=ids.SURROGATE_RULES), md=6), dbc.Col(graph(ids.SURROGATE_CURVE, 400), md=6)]),
    ])
