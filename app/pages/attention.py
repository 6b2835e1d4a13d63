"""Attention vs attribution in a tabular transformer (one token per feature, plus CLS)."""
import dash
import dash_bootstrap_components as dbc
from dash import html

from app.shell import ids
from app import services
from app.shell.url_state import from_url
from app.views.components import graph, row_status_store

REQUIRES = "attention"
"""The method family this page shows (:func:`app.services.why_not` says whether it applies)."""

dash.register_page(__name__, path="/attention", name="Attention", title="Candor · Attention", order=4,
                   requires=REQUIRES)


@from_url('/attention')  # the view's state from and to its URL (app/shell/url_state.py)
def layout(**_):
    if (why := services.why_not(REQUIRES)) is not None:
        return html.Div([html.H2("Attention vs attribution"), dbc.Alert(why, color="secondary")])
    return html.Div([
        html.H2("Attention vs attribution"), row_status_store("attention"),
        html.Div(id=ids.ATTN_NOTES),
        graph(ids.ATTN_HEATMAP, 520),
        dbc.Row([dbc.Col(graph(ids.ATTN_AGREEMENT, 280), md=12)]),
        dbc.Row([dbc.Col(graph(ids.ATTN_IG, 420), md=6), dbc.Col(graph(ids.ATTN_SHAP, 420), md=6)]),
    ])
