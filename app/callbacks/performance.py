"""Performance page callbacks: the confusion counts and rates at the threshold the user moves."""
from dash import Input, Output, callback, no_update
from dash.exceptions import PreventUpdate

from app import services
from app.shell import ids
from app.views.components import empty_figure, error_alert
from app.views.figures_performance import confusion_figure
from app.views.performance import THRESHOLD_STEPS, rates_table, threshold_points
from workspace.errors import CandorError


@callback(Output(ids.PERF_CONFUSION, "figure"), Output(ids.PERF_RATES, "children"),
          Output(ids.PERF_THRESHOLD_TEXT, "children"), Output(ids.PERF_ROC, "figure"), Output(ids.PERF_PR, "figure"),
          Input(ids.PERF_THRESHOLD, "value"))
def render_confusion(value):
    """The confusion matrix, its counts and rates at the slider's threshold (hundredths), and its point on the ROC
    and precision-recall curves (patched: the curves are not sent again)."""
    if value is None:
        raise PreventUpdate
    try:
        view = services.performance.confusion(value / THRESHOLD_STEPS)
    except CandorError as err:
        return empty_figure(str(err)), error_alert(str(err)), "", no_update, no_update
    line, table = rates_table(view)
    return (confusion_figure(view), table, line, *threshold_points(view))
