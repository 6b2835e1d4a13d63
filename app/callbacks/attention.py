"""Attention page callbacks."""
from dash import Input, Output, callback
from dash.exceptions import PreventUpdate

from app.shell import ids
from app.views.drawn import drawn_once
from app.views.stored_panels import stored_first
from app.shell.row_status import row_status_data
from app.views.attention import draw_attention, render_attention


@callback(Output(ids.ATTN_HEATMAP, "figure"), Output(ids.ATTN_AGREEMENT, "figure"), Output(ids.ATTN_IG, "figure"),
          Output(ids.ATTN_SHAP, "figure"), Output(ids.ATTN_NOTES, "children"),
          Output(ids.row_status_data("attention"), "data"), Input(ids.ROW_INPUT, "value"))
def render_row(row):
    """:func:`render_attention` and the navbar's status line: one request per row change (issue 14)."""
    if row is None:
        raise PreventUpdate
    return (*render_attention(row, _attention_drawn), row_status_data(row))


_attention_drawn = stored_first("attention", drawn_once(maxsize=256)(draw_attention))
"""A row's drawing: a stored row as the build drew it (:mod:`app.views.stored_panels`; about 180 ms of CPU live,
Integrated Gradients, GradientExplainer and the heatmaps), else kept per process (issue 27)."""
