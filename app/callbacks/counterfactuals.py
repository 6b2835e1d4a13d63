"""Persuasive page, the story test: one background job per press (both searches), with progress and cancel, of the row
as shown: the what-if editor's edited row when it edits the chosen row (issue 25)."""
from dash import Input, Output, State, callback
from dash.exceptions import PreventUpdate

from app.services import counterfactuals as cfs
from app.shell import ids
from app.views.components import choice_names, error_alert, job_progress
from app.views.counterfactuals import search_phase, story_card
from app.views.whatif import shown_row
from workspace.errors import CandorError


@callback(Output(ids.STORY_CARD, "children"), Input(ids.STORY_RUN, "n_clicks"), State(ids.ROW_INPUT, "value"),
          State(ids.K_SLIDER, "value"), State(ids.ROUNDING, "value"), State(ids.GROUPING, "value"),
          State(ids.SENSITIVE, "value"), State(ids.STORY_IMMUTABLE, "value"), State(ids.WHATIF, "data"),
          background=True, prevent_initial_call=True,
          running=[(Output(ids.STORY_RUN, "disabled"), True, False),
                   (Output(ids.STORY_CANCEL, "disabled"), False, True)],
          cancel=[Input(ids.STORY_CANCEL, "n_clicks")],
          progress=[Output(ids.STORY_PROGRESS, "value"), Output(ids.STORY_PROGRESS, "label")])
def run_story_test(set_progress, n_clicks, row, k, rounding="exact", grouping=None, sensitive=None, immutable=None,
                   whatif=None):
    """Background job: the story test of the shown row's story at the page's controls (two searches), and its list
    (the edited row when the what-if editor edits the chosen one)."""
    if not n_clicks or row is None or k is None:
        raise PreventUpdate
    try:
        view = cfs.story_view(shown_row(row, whatif), k, rounding, bool(grouping), choice_names(sensitive),
                              choice_names(immutable),
                              progress=job_progress(set_progress, search_phase, "model evaluations at most"))
    except CandorError as err:
        return error_alert(str(err))
    return story_card(view)


# The page's controls (row, k, rounding, grouping, sensitive features) set the card back to its hint in the
# Persuasive page's one row callback (app.callbacks.persuasive.render_row): a row change costs one request.
