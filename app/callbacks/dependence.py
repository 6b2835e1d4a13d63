"""Dependence page callbacks: a picked feature's SHAP dependence and partial dependence, in one request."""
from dash import Input, Output, callback, no_update
from dash.exceptions import PreventUpdate

from app.services import warmup
from app.shell import ids
from app.views.components import choice_name, empty_figure, error_alert, waiting_note
from app.views.dependence import draw
from workspace.errors import CandorError


@callback(Output(ids.DEPENDENCE_SHAP, "figure"), Output(ids.DEPENDENCE_PDP, "figure"),
          Output(ids.DEPENDENCE_NOTES, "children"), Output(ids.DEPENDENCE_WAIT_TICK, "disabled"),
          Input(ids.DEPENDENCE_FEATURE, "value"), Input(ids.DEPENDENCE_WAIT_TICK, "n_intervals"))
def render_dependence(value, _tick=None):
    """The picked feature's two figures and their notes, once the warm-up has global SHAP (meanwhile what the
    page waits for, asked again each second)."""
    wait = warmup.waiting_for("shap_all")
    if wait:
        return no_update, no_update, waiting_note(wait), False
    if value is None:
        raise PreventUpdate
    try:
        return (*draw(choice_name(value)), True)
    except CandorError as err:
        return empty_figure(str(err)), empty_figure(str(err)), error_alert(str(err)), True
