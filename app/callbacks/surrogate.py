"""Surrogate page callbacks: fit MUSE and the frontier as background jobs; render the chosen surrogate."""
from dash import Input, Output, State, callback, ctx, no_update
from dash.exceptions import MissingCallbackContextException, PreventUpdate

from app import figures, ids, services
from app.components import choice_names, empty_figure, error_alert
from workspace.errors import CandorError
from app.surrogate_views import rules_by_neighborhood, surrogate_summary


@callback(Output(ids.SURROGATE_KEY, "data"), Input(ids.URL, "pathname"))
def load_default_surrogate(_pathname):
    return services.default_muse_key()


@callback(Output(ids.SURROGATE_KEY, "data", allow_duplicate=True), Output(ids.SURROGATE_ERROR, "children"),
          Input(ids.SURROGATE_FIT, "n_clicks"),
          State(ids.SURROGATE_FOI, "value"), State(ids.SURROGATE_MAX_RULES, "value"),
          State(ids.SURROGATE_MAX_WIDTH, "value"), State(ids.SURROGATE_MAX_NBHD, "value"),
          State(ids.SURROGATE_LAMBDAS, "value"), background=True, prevent_initial_call=True, cancel=[Input(ids.SURROGATE_CANCEL, "n_clicks")],
          running=[(Output(ids.SURROGATE_FIT, "disabled"), True, False),
                   (Output(ids.SURROGATE_CANCEL, "disabled"), False, True),
                   (Output(ids.SURROGATE_PROGRESS, "animated"), True, False),
                   (Output(ids.SURROGATE_PROGRESS, "striped"), True, False),
                   (Output(ids.SURROGATE_PROGRESS, "value"), 100, 0),
                   (Output(ids.SURROGATE_PROGRESS, "label"), "fitting MUSE ...", "")])
def fit_muse(n_clicks, foi, max_rules, max_width, max_nbhd, lambdas):
    try:
        return services.fit_muse(services.muse_params(choice_names(foi), max_rules, max_width, max_nbhd, lambdas)), None
    except CandorError as err:
        return no_update, error_alert(str(err))


def _opened_the_page(n_clicks) -> bool:
    """Whether the frontier job was started by opening the page (the address), not by "Fit MUSE"."""
    try:
        return ctx.triggered_id == ids.URL
    except MissingCallbackContextException:  # called as a plain function (tests): no click means opened
        return not n_clicks


@callback(Output(ids.SURROGATE_FRONTIER_KEY, "data"), Input(ids.URL, "pathname"), Input(ids.SURROGATE_FIT, "n_clicks"),
          State(ids.SURROGATE_FOI, "value"), State(ids.SURROGATE_MAX_WIDTH, "value"),
          State(ids.SURROGATE_MAX_NBHD, "value"), State(ids.SURROGATE_LAMBDAS, "value"),
          background=True, progress=[Output(ids.SURROGATE_PROGRESS, "value"), Output(ids.SURROGATE_PROGRESS, "label")],
          cancel=[Input(ids.SURROGATE_CANCEL, "n_clicks")],
          running=[(Output(ids.SURROGATE_CANCEL, "disabled"), False, True)])
def compute_frontier(set_progress, _pathname, _n_clicks, foi, max_width, max_nbhd, lambdas):
    """MUSE, CART (leaf by leaf and as a decision set) and flat surrogates at 2, 5, 10, 20 rules for the
    chosen features of interest, with Wilson intervals and the trivial surrogate.

    Opening the page (the address changed) computes the default frontier, whatever the controls say:
    that one is shared and cached, so a viewer may start it (``app.callback_roles``); only "Fit MUSE"
    (an analyst's) fits the controls' settings.
    """
    if _opened_the_page(_n_clicks):
        foi = max_width = max_nbhd = lambdas = None
    try:
        params = services.muse_params(choice_names(foi), None, max_width, max_nbhd, lambdas)
    except CandorError:
        raise PreventUpdate  # the Fit MUSE callback shows the message
    params = {k: v for k, v in params.items() if k != "max_rules"}
    return services.fit_frontier(params, progress=lambda done, total: set_progress(
        (round(100 * done / total), f"frontier: {done} of {total} surrogates fitted")))


@callback(Output(ids.SURROGATE_KEY, "data", allow_duplicate=True), Input(ids.SURROGATE_FRONTIER, "clickData"),
          State(ids.SURROGATE_FRONTIER_KEY, "data"), prevent_initial_call=True)
def show_clicked_point(click, frontier_key):
    if not click or not frontier_key or "customdata" not in click["points"][0]:
        raise PreventUpdate
    method, budget = click["points"][0]["customdata"][:2]
    return f"{frontier_key}|{method}|{budget}"


@callback(Output(ids.SURROGATE_SUMMARY, "children"), Output(ids.SURROGATE_RULES, "children"),
          Output(ids.SURROGATE_CONFUSION, "figure"), Input(ids.SURROGATE_KEY, "data"))
def render_surrogate(key):
    if not key:
        raise PreventUpdate
    try:
        view = services.muse_view(key)
    except CandorError as err:
        return error_alert(str(err)), None, empty_figure(str(err))
    return surrogate_summary(view), rules_by_neighborhood(view), figures.confusion(view.detail)


@callback(Output(ids.SURROGATE_FRONTIER, "figure"), Input(ids.SURROGATE_FRONTIER_KEY, "data"),
          Input(ids.SURROGATE_KEY, "data"))
def render_frontier(frontier_key, key):
    if not frontier_key:
        return empty_figure("computing the frontier (MUSE, CART and a flat set at 2, 5, 10 and 20 rules) ...")
    try:
        return figures.frontier(services.frontier(frontier_key), selected=key)
    except CandorError as err:
        return empty_figure(str(err))
