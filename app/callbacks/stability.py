"""Descriptive page, rank stability card: a background job per row (SHAP and LIME rerun 10 times each), of the row as
shown: the what-if editor's edited row when it edits the chosen row (issue 25)."""
from dash import Input, Output, State, callback
from dash.exceptions import PreventUpdate

from app.shell import ids
from app.views.components import error_alert, job_progress
from app.views.whatif import shown_row
from app.services import stability
from app.views.stability import rerun_phase, stability_card
from workspace.errors import CandorError


@callback(Output(ids.STABILITY_CARD, "children"), Input(ids.STABILITY_RUN, "n_clicks"), State(ids.ROW_INPUT, "value"),
          State(ids.WHATIF, "data"), background=True, prevent_initial_call=True,
          running=[(Output(ids.STABILITY_RUN, "disabled"), True, False),
                   (Output(ids.STABILITY_CANCEL, "disabled"), False, True)],
          cancel=[Input(ids.STABILITY_CANCEL, "n_clicks")],
          progress=[Output(ids.STABILITY_PROGRESS, "value"), Output(ids.STABILITY_PROGRESS, "label")])
def run_stability(set_progress, n_clicks, row, whatif=None):
    """Background job: rerun the shown row's SHAP over background resamples and LIME over seeds (the edited row
    when the what-if editor edits the chosen one)."""
    if not n_clicks or row is None:
        raise PreventUpdate
    try:
        view = stability.stability_view(shown_row(row, whatif), k=5,
                                        progress=job_progress(set_progress, rerun_phase, "reruns"))
    except CandorError as err:
        return error_alert(str(err))
    return stability_card(view)


# A new row sets the card back to its hint in the Descriptive page's one row callback
# (app.callbacks.descriptive.render_row): a row change costs one request (issue 14).
