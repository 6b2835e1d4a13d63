"""Surrogate page callbacks: the default surrogates (waiting for the warm-up with a note), "Fit MUSE" as one
background job (MUSE, then its frontier) with progress and cancel, and the chosen surrogate rendered.

A link's settings (issue 25, :mod:`app.services.surrogate_links`): opening the page with controls other than the
defaults shows their fit from the cache, or starts "Fit MUSE"'s job for an analyst (:func:`open_page`); a line says
whenever the surrogate or frontier shown is not of the controls' settings (:func:`show_settings_note`)."""
from dash import Input, Output, State, callback, no_update
from dash.exceptions import PreventUpdate

from app.shell import ids
from app import services
from app.views.drawn import drawn_once
from app.serve.request_user import has_role
from app.views.components import choice_names, error_alert, job_progress, waiting_note
from workspace.errors import CandorError
from app.views.surrogate import draw_frontier, draw_surrogate, render_frontier, render_surrogate, settings_note

_CONTROLS = (State(ids.SURROGATE_FOI, "value"), State(ids.SURROGATE_MAX_RULES, "value"),
             State(ids.SURROGATE_MAX_WIDTH, "value"), State(ids.SURROGATE_MAX_NBHD, "value"),
             State(ids.SURROGATE_LAMBDAS, "value"))


@callback(Output(ids.SURROGATE_KEY, "data"), Output(ids.SURROGATE_WAIT, "children"),
          Output(ids.SURROGATE_WAIT_TICK, "disabled"),
          Input(ids.URL, "pathname"), Input(ids.SURROGATE_WAIT_TICK, "n_intervals"), State(ids.SURROGATE_POINT, "data"),
          *_CONTROLS)
def load_default_surrogate(_pathname, _tick=None, linked_point=None, foi=None, max_rules=None, max_width=None,
                           max_nbhd=None, lambdas=None):
    """The default MUSE once it is fitted; while the warm-up runs, what the page waits for (polled each second).

    A link's chosen frontier point (``?point=cart|5``, :mod:`app.callbacks.links`) is shown instead of the default,
    and so is the MUSE of a link's settings when the cache holds it (:func:`open_page`).
    """
    try:
        key, note = services.surrogates.page_defaults()
        key = services.surrogate_links.linked_muse_key(choice_names(foi), max_rules, max_width, max_nbhd,
                                                       lambdas) or key
    except CandorError as err:
        return no_update, error_alert(str(err)), True
    return (no_update if linked_point else key or no_update), waiting_note(note) if note else None, note is None


@callback(Output(ids.SURROGATE_FRONTIER_GO, "data"), Output(ids.SURROGATE_LINK_FIT, "data"),
          Output(ids.SURROGATE_FRONTIER_KEY, "data", allow_duplicate=True), Input(ids.URL, "pathname"), *_CONTROLS,
          prevent_initial_call="initial_duplicate")
def open_page(_pathname, foi=None, max_rules=None, max_width=None, max_nbhd=None, lambdas=None):
    """What opening the page computes for its controls (a link's settings, or the defaults): the default frontier
    (its job, :func:`compute_frontier`), the cached frontier of the link's settings, or "Fit MUSE"'s job on them for
    an analyst (a viewer gets the default fit and the line saying so)."""
    plan = services.surrogate_links.link_plan(choice_names(foi), max_rules, max_width, max_nbhd, lambdas,
                                              may_fit=has_role("analyst"))
    if plan.kind == "cached":
        return no_update, no_update, plan.frontier_key
    if plan.kind == "fit":
        return no_update, plan.muse_key, no_update
    return 1, no_update, no_update


@callback(Output(ids.SURROGATE_KEY, "data", allow_duplicate=True),
          Output(ids.SURROGATE_FRONTIER_KEY, "data", allow_duplicate=True), Output(ids.SURROGATE_ERROR, "children"),
          Input(ids.SURROGATE_FIT, "n_clicks"),
          State(ids.SURROGATE_FOI, "value"), State(ids.SURROGATE_MAX_RULES, "value"),
          State(ids.SURROGATE_MAX_WIDTH, "value"), State(ids.SURROGATE_MAX_NBHD, "value"),
          State(ids.SURROGATE_LAMBDAS, "value"), Input(ids.SURROGATE_LINK_FIT, "data"), background=True,
          prevent_initial_call=True, cancel=[Input(ids.SURROGATE_CANCEL, "n_clicks")],
          progress=[Output(ids.SURROGATE_PROGRESS, "value"), Output(ids.SURROGATE_PROGRESS_LABEL, "children")],
          running=[(Output(ids.SURROGATE_FIT, "disabled"), True, False),
                   (Output(ids.SURROGATE_FITTING, "data"), True, False),
                   (Output(ids.SURROGATE_PROGRESS_BOX, "hidden"), False, True),  # gone once the job ends
                   (Output(ids.SURROGATE_CANCEL, "disabled"), False, True),
                   (Output(ids.SURROGATE_PROGRESS, "animated"), True, False),
                   (Output(ids.SURROGATE_PROGRESS, "striped"), True, False)])
def fit_surrogates(set_progress, n_clicks, foi, max_rules, max_width, max_nbhd, lambdas, _linked=None):
    """"Fit MUSE": MUSE with the controls' settings, then the frontier of those settings, in ONE job, so the
    Cancel button stops all of it and Fit MUSE stays disabled until all of it ends (issue 14). Opening a link with
    settings the cache lacks starts it too (:func:`open_page`, an analyst's)."""
    try:
        params = services.muse_params(choice_names(foi), max_rules, max_width, max_nbhd, lambdas)
        muse_key, frontier_key = services.surrogates.fit_surrogates(
            params, progress=job_progress(set_progress, "MUSE and its frontier", "surrogates fitted"))
    except CandorError as err:
        return no_update, no_update, error_alert(str(err))
    return muse_key, frontier_key, None


@callback(Output(ids.SURROGATE_FRONTIER_KEY, "data"), Input(ids.SURROGATE_FRONTIER_GO, "data"),
          background=True, prevent_initial_call=True,
          progress=[Output(ids.SURROGATE_PROGRESS, "value"), Output(ids.SURROGATE_PROGRESS_LABEL, "children")],
          cancel=[Input(ids.SURROGATE_CANCEL, "n_clicks")],
          running=[(Output(ids.SURROGATE_CANCEL, "disabled"), False, True),
                   (Output(ids.SURROGATE_PROGRESS_BOX, "hidden"), False, True)])
def compute_frontier(set_progress, _pathname):
    """The default frontier (MUSE, CART leaf by leaf and as a decision set, and flat surrogates at 2, 5, 10, 20
    rules, with Wilson intervals and the trivial surrogate), computed on opening the page unless cached, when the
    page shows the default (:func:`open_page`).

    It is shared and cached, so a viewer may start it (``app.serve.callback_roles``); "Fit MUSE" (an analyst's)
    fits the controls' settings (:func:`fit_surrogates`).
    """
    return services.fit_frontier(services.surrogates.default_frontier_params(),
                                 progress=job_progress(set_progress, "default frontier", "surrogates fitted"))


@callback(Output(ids.SURROGATE_KEY, "data", allow_duplicate=True), Input(ids.SURROGATE_FRONTIER, "clickData"),
          State(ids.SURROGATE_FRONTIER_KEY, "data"), prevent_initial_call=True)
def show_clicked_point(click, frontier_key):
    if not click or not frontier_key or "customdata" not in click["points"][0]:
        raise PreventUpdate
    method, budget = click["points"][0]["customdata"][:2]
    return f"{frontier_key}|{method}|{budget}"


@callback(Output(ids.SURROGATE_SUMMARY, "children"), Output(ids.SURROGATE_RULES, "children"),
          Output(ids.SURROGATE_CONFUSION, "figure"), Input(ids.SURROGATE_KEY, "data"))
def show_surrogate(key):
    """:func:`render_surrogate`, drawn once per process and key: every viewer opening the page is sent the same."""
    return render_surrogate(key, _surrogate_drawn)


_surrogate_drawn = drawn_once()(draw_surrogate)


@callback(Output(ids.SURROGATE_FRONTIER, "figure"), Input(ids.SURROGATE_FRONTIER_KEY, "data"),
          Input(ids.SURROGATE_KEY, "data"))
def show_frontier(frontier_key, key):
    """:func:`render_frontier`, drawn once per process and keys (80 ms of CPU a visit, issue 27)."""
    return render_frontier(frontier_key, key, _frontier_drawn)


_frontier_drawn = drawn_once()(draw_frontier)


@callback(Output(ids.SURROGATE_MATCH, "children"), Input(ids.SURROGATE_KEY, "data"),
          Input(ids.SURROGATE_FRONTIER_KEY, "data"), Input(ids.SURROGATE_FITTING, "data"),
          *[Input(c.component_id, c.component_property) for c in _CONTROLS])
def show_settings_note(key, frontier_key, fitting, foi, max_rules, max_width, max_nbhd, lambdas):
    """One line whenever the surrogate or frontier shown is not of the controls' settings (and what fits them)."""
    try:
        line = services.surrogate_links.settings_note(key, frontier_key, choice_names(foi), max_rules, max_width,
                                                      max_nbhd, lambdas, may_fit=has_role("analyst"),
                                                      fitting=bool(fitting))
    except CandorError as err:
        return error_alert(str(err))
    return None if line is None else settings_note(line)
