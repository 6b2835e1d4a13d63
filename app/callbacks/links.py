"""Links (issue 15): each page's controls written into its URL in the browser, and the URL's class applied.

The schema, the reader and the writer's code live in :mod:`app.url_state`; this module only registers
the clientside callbacks (no server round trip: ``history.replaceState``, no page reload).
"""
from dash import Input, Output, State, clientside_callback

from app import ids
from app.url_state import PAGES, store_id, writer_js


def _source(p):
    return p.source or (p.component, p.prop)


for _path, _params in PAGES.items():
    clientside_callback(writer_js(_path), Output(store_id(_path), "data"),
                        *[Input(*_source(p)) for p in _params],
                        Input(ids.CLASS_SELECT, "value"), Input(ids.CLASS_SELECT, "options"),
                        State(store_id(_path), "data"))

# ?class=NAME picks that class in the navbar (a multiclass model): the class picker's own callback then
# switches every page to it and reloads (with the same URL); a name that is not an option is left to the
# page's note (app.url_state.read)
clientside_callback(
    """function(search, options, current) {
        const name = new URLSearchParams(search || "").get("class");
        const values = (options || []).map(o => o.value);
        if (name === null || !values.includes(name) || name === current) {
            return window.dash_clientside.no_update;
        }
        return name;
    }""",
    Output(ids.CLASS_SELECT, "value", allow_duplicate=True), Input(ids.URL, "search"),
    State(ids.CLASS_SELECT, "options"), State(ids.CLASS_SELECT, "value"), prevent_initial_call="initial_duplicate")

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
