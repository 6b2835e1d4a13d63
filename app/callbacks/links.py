"""Links (issue 15): each page's controls written into its URL in the browser; a link's class offered, never applied.

The schema, the reader and the writer's code live in :mod:`app.shell.url_state`; this module only registers
the clientside callbacks (no server round trip: ``history.replaceState``, no page reload).
"""
from dash import Input, Output, State, clientside_callback

from app.shell import ids
from app.shell.url_state import PAGES, store_id, writer_js


def _source(p):
    return p.source or (p.component, p.prop)


for _path, _params in PAGES.items():
    clientside_callback(writer_js(_path), Output(store_id(_path), "data"),
                        *[Input(*_source(p)) for p in _params],
                        Input(ids.CLASS_SELECT, "value"), Input(ids.CLASS_SELECT, "options"),
                        State(store_id(_path), "data"))

# ?class=NAME never switches the class: it is the server's, shared by everyone, and opening a link (a GET) changes
# nothing for anyone else (issue 27). A link made for another class shows app.shell.url_state.class_note; its button,
# offered to users who may switch, sets the picker, whose own callback switches (the server checks the role)
clientside_callback(
    """function(clicks, wanted) {
        if (!clicks || !wanted) { return window.dash_clientside.no_update; }
        return wanted;
    }""",
    Output(ids.CLASS_SELECT, "value", allow_duplicate=True), Input(ids.URL_CLASS_SWITCH, "n_clicks"),
    State(ids.URL_CLASS_WANTED, "data"), prevent_initial_call=True)

# ?point=method|budget on the Surrogate page: once the frontier is computed, show that surrogate (the default
# MUSE is not loaded while a link's point is pending: app.callbacks.surrogate.load_default_surrogate)
clientside_callback(
    """function(frontierKey, point) {
        if (!frontierKey || !point) { return window.dash_clientside.no_update; }
        return frontierKey + "|" + point;
    }""",
    Output(ids.SURROGATE_KEY, "data", allow_duplicate=True), Input(ids.SURROGATE_FRONTIER_KEY, "data"),
    State(ids.SURROGATE_POINT, "data"), prevent_initial_call=True)

# the reader's own choice replaces the link's point: a click on the frontier, or "Fit MUSE"
clientside_callback(
    "function() { return null; }",
    Output(ids.SURROGATE_POINT, "data", allow_duplicate=True), Input(ids.SURROGATE_FRONTIER, "clickData"),
    Input(ids.SURROGATE_FIT, "n_clicks"), prevent_initial_call=True)
