"""Persuasive page callbacks: the operator controls drive every panel.

:func:`render_row` reads the row and the operator controls and sends the panels of
:func:`app.views.persuasive.render_persuasive` (one call of :func:`app.services.persuasive_view`) with the navbar's
status line; :func:`render_global` marks the current k on the held-out average curve (computed once per
workspace).
"""
from dash import Input, Output, State, callback, ctx, no_update
from dash.exceptions import MissingCallbackContextException, PreventUpdate

from app import services
from app.shell import ids
from app.shell.row_status import row_status_data
from app.views import figures_persuasive
from app.views.drawn import drawn_once
from app.views.stored_panels import stored_first
from app.views.counterfactuals import story_hint
from app.views.persuasive import draw_row, render_persuasive
from app.views import sent, whatif as whatif_view


@callback(Output(ids.STATEMENT, "children"), Output(ids.VERIFY, "children"), Output(ids.GUARDRAIL, "children"),
          Output(ids.DROPPED, "children"), Output(ids.COST, "children"), Output(ids.FULL_BAR, "figure"),
          Output(ids.TOPK_BAR, "figure"), Output(ids.TRADEOFF, "figure"), Output(ids.row_status_data("persuasive"), "data"),
          Output(ids.STORY_CARD, "children", allow_duplicate=True),
          Output(ids.STORY_PROGRESS, "value", allow_duplicate=True),
          Output(ids.STORY_PROGRESS, "label", allow_duplicate=True),
          *whatif_view.outputs("persuasive"), Output(sent.store_id("persuasive"), "data"),
          Input(ids.ROW_INPUT, "value"), Input(ids.K_SLIDER, "value"), Input(ids.ROUNDING, "value"),
          Input(ids.GROUPING, "value"), Input(ids.SENSITIVE, "value"), State(ids.STORY_RUN, "n_clicks"),
          Input(ids.WHATIF, "data"), State(sent.store_id("persuasive"), "data"), prevent_initial_call="initial_duplicate")
def render_row(row, k, rounding="exact", grouping=None, sensitive=None, story_runs=1, whatif=None, digests=None):
    """:func:`render_persuasive` of the row (or of its edit, :func:`app.views.whatif.update`), plus the navbar's
    status line when the row changed: one request per change; the story test's card back to its hint once a control
    changed the story (left alone while no story test has run on this page, when it still shows the hint); and the
    what-if editor. Panels the browser already shows are not sent again (:func:`app.views.sent.only_changed`,
    ``digests`` the page's store of what it last received)."""
    if row is None or k is None:
        raise PreventUpdate
    try:
        trigger = ctx.triggered_id
    except MissingCallbackContextException:  # called as a plain function (tests)
        trigger = ids.ROW_INPUT
    shown, editor = whatif_view.update(row, whatif, refresh=trigger in (None, ids.ROW_INPUT))
    if shown is None:  # an edit refused: nothing changes but the editor's note
        return (no_update,) * 12 + editor + (no_update,)
    new_row = trigger in (None, ids.ROW_INPUT, ids.WHATIF)
    reset = (story_hint(), 0, "") if trigger is not None and story_runs else (no_update,) * 3
    panels, digests = sent.only_changed(render_persuasive(shown, k, rounding, grouping, sensitive, _row_drawn), digests)
    return (*panels, row_status_data(shown) if new_row else no_update, *reset, *editor, digests)


def render_global(k):
    """The held-out average tradeoff curve with ``k`` marked (registered below: drawn once per process and k)."""
    if k is None:
        raise PreventUpdate
    return figures_persuasive.global_tradeoff(services.persuasive_global(), int(k))


_row_drawn = stored_first("persuasive", drawn_once(maxsize=256)(draw_row))
"""A row's drawing at given controls: a stored row at the page's opening controls as the build drew it
(:mod:`app.views.stored_panels`; about 120 ms of CPU live, the ERASER measures' model calls and the figures), else
kept per process, computed again on no other ask of that row and controls (issue 27)."""


# the same for every viewer at one k: drawn once per process and k (app.views.drawn)
callback(Output(ids.GLOBAL_TRADEOFF, "figure"), Input(ids.K_SLIDER, "value"))(drawn_once(maxsize=32)(render_global))
