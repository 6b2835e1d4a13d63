"""Navbar callbacks: random row, the chosen row's status line (built by :mod:`app.shell.row_status`), the class picker.

A row change costs one request (issue 14): "Random row" picks a held-out row in the browser
(``assets/candor_rows.js``, a click listener that sets the row box), and each row page's own callback sends the navbar's status line with its
panels (in the page's :func:`app.shell.ids.row_status_data` store), which a clientside callback shows.
"""
import json

from dash import ALL, ClientsideFunction, Input, Output, State, callback, clientside_callback
from dash.exceptions import PreventUpdate

from app.shell import ids
from app.shell.pages import ROW_PAGES
from app import services
from workspace.errors import CandorError

# "Random row" is a click listener of assets/candor_rows.js: it sets the row box (dash_clientside.set_props), no
# callback cycle before the row's request

clientside_callback(ClientsideFunction("candor", "rowStatus"), Output(ids.ROW_STATUS, "children"),
                    Input(ids.row_status_data(ALL), "data"), Input(ids.ROW_INPUT, "value"),
                    State(ids.ROW_INPUT, "max"))


@callback(Output(ids.NAVBAR, "class_name"), Input(ids.URL, "pathname"))
def hide_navbar_for_participants(pathname):
    """Study participants (``/study/...``) never see the analyst's navbar, row status or pages."""
    return "d-none" if (pathname or "").startswith("/study/") else "mb-3"


# The row lives in the URL (``/descriptive?row=42``), so a link shows the same explanation to a
# colleague: the URL's row sets the picker on load; a new row replaces the URL's query in place
# (``history.replaceState``: no navigation, the page is not rendered again). Study pages keep theirs.
clientside_callback(
    """function(search, last) {  // a row outside 0..last is left to the page's note (app/shell/url_state.py)
        const row = new URLSearchParams(search || "").get("row");
        if (row === null || row.trim() === "" || !Number.isInteger(Number(row)) || Number(row) < 0
                || (Number.isInteger(last) && Number(row) > last)) {
            return window.dash_clientside.no_update;
        }
        return Number(row);
    }""",
    Output(ids.ROW_INPUT, "value", allow_duplicate=True), Input(ids.URL, "search"), State(ids.ROW_INPUT, "max"),
    prevent_initial_call="initial_duplicate")

clientside_callback(
    """function(row, pathname) {
        const pages = %s;
        if (!Number.isInteger(row) || !pages.includes(pathname || "/")) {
            return window.dash_clientside.no_update;
        }
        const params = new URLSearchParams(window.location.search);
        if (params.get("row") !== String(row)) {
            params.set("row", String(row));
            window.history.replaceState(window.history.state, "", (pathname || "/") + "?" + params.toString());
        }
        return window.dash_clientside.no_update;
    }""" % json.dumps(list(ROW_PAGES)),
    Output(ids.ROW_URL_SYNC, "data"), Input(ids.ROW_INPUT, "value"), Input(ids.URL, "pathname"))


@callback(Output(ids.ROW_PICKER, "className"), Input(ids.URL, "pathname"))
def show_row_picker_on_row_pages(pathname):
    """The row picker explains table rows: shown only on the pages that explain one."""
    return "d-flex align-items-center" if (pathname or "/") in ROW_PAGES else "d-none"


@callback(Output(ids.CLASS_SWITCHED, "data"), Output(ids.CLASS_STATUS, "children"),
          Input(ids.CLASS_SELECT, "value"), prevent_initial_call=True,
          running=[(Output(ids.CLASS_SELECT, "disabled"), True, False)])
def switch_class(name):
    """Explain another class (every page, every worker); the page then reloads to show it."""
    if not name:
        raise PreventUpdate
    try:
        return services.select_class(name), "reloading…"
    except CandorError as err:
        return None, str(err)


# a full reload: every figure on every page was computed for the previous class
clientside_callback(
    "function(done) { if (done) { window.location.reload(); } return window.dash_clientside.no_update; }",
    Output(ids.CLASS_SWITCHED, "clear_data"), Input(ids.CLASS_SWITCHED, "data"), prevent_initial_call=True)
