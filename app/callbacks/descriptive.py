"""Descriptive page callbacks: global SHAP and the global methods beside it, then SHAP vs LIME for the chosen row."""
from dash import Input, Output, State, callback, ctx, no_update
from dash.exceptions import MissingCallbackContextException, PreventUpdate

from app import services
from app.services import warmup
from app.shell import ids
from app.shell.row_status import row_status_data
from app.views import methods as method_views
from app.views import sent, whatif as whatif_view
from app.views.components import empty_figure, error_alert, waiting_note
from app.views.descriptive import draw_global, render_local
from app.views.drawn import drawn_once
from app.views.stability import stability_hint
from workspace.errors import CandorError


@callback(Output(ids.GLOBAL_BAR, "figure"), Output(ids.GLOBAL_BEESWARM, "figure"), Output(ids.GLOBAL_NOTE, "children"),
          Output(ids.GLOBAL_WAIT_TICK, "disabled"), Output(ids.GLOBAL_BEESWARM_BOX, "style"),
          Input(ids.URL, "pathname"), Input(ids.GLOBAL_WAIT_TICK, "n_intervals"),
          Input(ids.GLOBAL_BEESWARM_SHOW, "value"))
def render_global_when_ready(_pathname, _tick=None, show=("on",)):
    """:func:`render_global` once the warm-up has computed global SHAP; meanwhile what the panel waits for
    (asked again each second), so the row's panels below are not held behind it (issue 14). The beeswarm only
    while its switch is on (``show``, the switch's value; on when called as a plain function): hidden, nothing of
    it is sent or drawn (:data:`app.pages.descriptive.BEESWARM_SWITCH`)."""
    box = {} if show else {"display": "none"}
    try:
        switched = ctx.triggered_id == ids.GLOBAL_BEESWARM_SHOW
    except MissingCallbackContextException:  # called as a plain function (tests)
        switched = False
    wait = warmup.waiting_for("shap_all")
    if wait:
        return no_update, no_update, waiting_note(wait), False, box
    try:
        bar, beeswarm, note = _global_drawn()  # the same for every viewer: drawn once per process (app.views.drawn)
    except CandorError as err:
        return empty_figure(str(err)), empty_figure(str(err)), error_alert(str(err)), True, box
    swarm = beeswarm if show else no_update
    if switched:  # the bar and the note are drawn already
        return no_update, swarm, no_update, no_update, box
    return bar, swarm, note, True, box


_global_drawn = drawn_once(maxsize=1)(draw_global)


def _draw_global_once() -> None:
    _global_drawn()


services.lazy("descriptive_global_drawn", _draw_global_once, warm=True)
"""Drawn by the warm-up once global SHAP is there (before gunicorn forks its workers: one drawing for both); each
worker drew it on its first visit, and every viewer opening the page meanwhile drew it again (issue 27)."""


@callback(Output(ids.GLOBAL_METHODS, "children"), Output(ids.GLOBAL_METHODS_TICK, "disabled"),
          Input(ids.URL, "pathname"), Input(ids.GLOBAL_METHODS_TICK, "n_intervals"))
def render_global_methods(_pathname, _tick=None):
    """Each global method of the table of methods (permutation importance) beside mean |SHAP|, once the warm-up
    has computed global SHAP and the method's result (the warm value named after the method); meanwhile what the
    panel waits for, asked again each second."""
    for name in ("shap_all", *(m.name for m in services.methods.importance_methods())):
        wait = warmup.waiting_for(name)
        if wait:
            return waiting_note(wait), False
    try:
        return _methods_drawn(), True  # the same for every viewer: drawn once per process (app.views.drawn)
    except CandorError as err:
        return error_alert(str(err)), True


_methods_drawn = drawn_once(maxsize=1)(method_views.draw_panels)


@callback(Output(ids.SHAP_PLAYERS_BOX, "style"), Input(ids.URL, "pathname"))
def show_players(_pathname):
    """Offer raw columns as players only where the default sums one-hot children (a tree Pipeline)."""
    try:
        return {} if services.raw_players_offered() else {"display": "none"}
    except CandorError:
        return {"display": "none"}


@callback(Output(ids.SHAP_WATERFALL, "figure"), Output(ids.LIME_BAR, "figure"), Output(ids.LOCAL_AGREEMENT, "children"),
          Output(ids.LOCAL_NOTES, "children"), Output(ids.row_status_data("descriptive"), "data"),
          Output(ids.STABILITY_CARD, "children", allow_duplicate=True),
          Output(ids.STABILITY_PROGRESS, "value", allow_duplicate=True),
          Output(ids.STABILITY_PROGRESS, "label", allow_duplicate=True),
          *whatif_view.outputs("descriptive"), Output(sent.store_id("descriptive"), "data"),
          Input(ids.ROW_INPUT, "value"), Input(ids.SHAP_PLAYERS, "value"), State(ids.STABILITY_RUN, "n_clicks"),
          Input(ids.WHATIF, "data"), State(sent.store_id("descriptive"), "data"), prevent_initial_call="initial_duplicate")
def render_row(row, players="children", stability_runs=1, whatif=None, digests=None):
    """Everything a row change changes on this page, in one request (issue 14): SHAP and LIME
    (:func:`render_local`), the navbar's status line, and the stability card back to its hint (the
    previous row's card no longer applies; left alone while no stability job has run on this page, when it
    still shows the hint: fewer components for the browser to redraw), and the what-if editor: the row's values
    when the row changes, the edited row explained when it is edited (:func:`app.views.whatif.update`; an edit
    refused leaves the panels as they are). Panels the browser already shows are not sent again
    (:func:`app.views.sent.only_changed`, ``digests`` the page's store of what it last received)."""
    if row is None:
        raise PreventUpdate
    try:
        trigger = ctx.triggered_id
    except MissingCallbackContextException:  # called as a plain function (tests): a new row
        trigger = ids.ROW_INPUT
    shown, editor = whatif_view.update(row, whatif, refresh=trigger not in (ids.WHATIF, ids.SHAP_PLAYERS))
    if shown is None:
        return (no_update,) * 8 + editor + (no_update,)
    status = no_update if trigger == ids.SHAP_PLAYERS else row_status_data(shown)  # None: the page opened
    new = trigger in (ids.ROW_INPUT, ids.WHATIF) and stability_runs  # the card was of the row as it was
    reset = (stability_hint(), 0, "") if new else (no_update,) * 3
    panels, digests = sent.only_changed(_panels(shown, players), digests)
    return (*panels, status, *reset, *editor, digests)


def _rendered_stored_rows() -> dict:
    drawn = {}
    for row in services.stored_views():
        services.yield_to_requests()  # a click meanwhile is served first (the warm-up draws these)
        drawn[row] = sent.as_text(render_local(row))
    return drawn


rendered_stored_rows = services.lazy("descriptive_rendered_rows", _rendered_stored_rows, warm="late")
"""Served from a store, :func:`render_local` of each stored row whose view the warm-up prepared
(:func:`app.services.row_view.stored_views`), drawn by the warm-up and kept as JSON text
(:func:`app.views.sent.as_text`): a click only reads them back (:func:`app.views.sent.from_text`). Building the two
figures and the cards took 8-10 ms of a click on a server idle between clicks; kept as figures (dicts) and cards
(components), Adult's 400 stored rows held 18 MB of the server, most of its peak memory above the peer's (issue 23),
as text about 5 MB. Empty without a store."""


def _panels(row, players):
    """:func:`render_local` of ``row``: as the warm-up drew it, when it did (SHAP's default players)."""
    number = services.stored_row_number(row)
    found = services.ready_entry("descriptive_rendered_rows", number) if players != "raw" and number is not None \
        else None
    return sent.from_text(found) if found is not None else render_local(row, players)
