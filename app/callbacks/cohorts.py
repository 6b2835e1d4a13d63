"""Cohorts page callbacks: the filters and sensitive features drive every panel; a picked leaf sets the filters."""
from dash import Input, Output, callback
from dash.exceptions import PreventUpdate

from app.shell import ids
from app.views.cohorts import render_cohorts
from app.views.components import choice_name


@callback(Output(ids.COHORT_NOTE, "children"), Output(ids.COHORT_TABLE, "children"), Output(ids.COHORT_TREE, "figure"),
          Output(ids.COHORT_MISLEADS, "figure"), Output(ids.COHORT_LEAVES, "children"),
          Output(ids.COHORT_FAIRNESS, "children"), Output(ids.COHORT_NOTES, "children"),
          Output(ids.COHORT_LEAF, "options"), Input(ids.COHORT_FILTER, "value"), Input(ids.COHORT_SENSITIVE, "value"))
def show_cohorts(filters, sensitive):
    """Every panel of the page for the cohort's filters and the sensitive features (one service call)."""
    return render_cohorts(filters, sensitive)


@callback(Output(ids.COHORT_FILTER, "value"), Input(ids.COHORT_LEAF, "value"), prevent_initial_call=True)
def pick_leaf(leaf):
    """A picked error-tree leaf becomes the cohort's filters (so the URL and the text box hold it)."""
    if leaf is None:
        raise PreventUpdate
    return choice_name(leaf)
