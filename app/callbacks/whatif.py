"""What-if editor callbacks (issue 25): the controls drawn when the editor is first opened
(:func:`app.views.whatif.drawn_controls`, the one server callback here); the rest in the browser: the row pages'
own callbacks fill the controls once drawn (:func:`app.views.whatif.update`, in the request of their panels) and
explain the store ``ids.WHATIF``.

- the controls' values that differ from the table row become the store (``{"row", "edits"}``); a value outside
  its control's range or of the wrong kind is refused in one line and changes nothing;
- "Reset to row N" puts the table row's values back and empties the store;
- the store lives in the URL (``?row=N&edit=name=value``, a name's ``%`` and ``=`` escaped): read when a page
  loads, written with ``history.replaceState`` as it changes (no request, no reload).
"""
import json

from dash import ALL, Input, Output, State, callback, clientside_callback
from dash.exceptions import PreventUpdate

from app.shell import ids
from app.views.components import error_alert
from app.views.whatif import PAGES, drawn_controls
from workspace.errors import CandorError

_NO = "window.dash_clientside.no_update"

_EDITS = """function(values, spec, base, current) {
        const no = %(no)s;
        if (!spec || !base || !values || values.length !== spec.length) { return [no, no]; }
        const edits = Object.create(null);  // a feature may be named "__proto__"
        const shown = x => Number.isFinite(x) ? String(Number(x.toPrecision(6))) : String(x);
        for (let i = 0; i < spec.length; i++) {
            const s = spec[i];
            let v = values[i];
            if (s.kind === "number") {
                const span = (s.whole ? "a whole number" : "a number") + " from " + shown(s.lo) + " to " + shown(s.hi)
                    + (s.missing ? " or empty" : "");
                if (v === null || v === undefined || v === "") {
                    if (!s.missing) { return [no, s.name + " must be " + span + "; nothing changed"]; }
                    v = null;
                } else if (typeof v !== "number" || !Number.isFinite(v) || v < s.lo || v > s.hi
                           || (s.whole && !Number.isInteger(v))) {
                    return [no, s.name + " must be " + span + "; nothing changed"];
                }
                if (v !== base.values[i]) { edits[s.name] = v; }
            } else if (v !== base.values[i]) {
                if (!Number.isInteger(v) || v < 0 || v >= s.options.length) {
                    return [no, s.name + " must be one of its levels; nothing changed"];
                }
                edits[s.name] = s.options[v];
            }
        }
        const data = Object.keys(edits).length ? {row: base.row, edits: edits} : null;
        const stale = current && current.row !== base.row;  // another row's edits: the pages ignore them
        if (JSON.stringify(data) === JSON.stringify(current) || (data === null && (!current || stale))) {
            return [no, ""];
        }
        return [data, ""];
    }""" % {"no": _NO}

_RESET = """function(n, base, drawn) {
        if (!n || !base) { return [%(no)s, %(no)s, %(no)s]; }
        return [drawn && drawn.length ? base.values : [], null, ""];
    }""" % {"no": _NO}

for _page in (p.strip("/") for p in PAGES):  # each page's editor: the controls' edits, and its reset
    clientside_callback(_EDITS, Output(ids.WHATIF, "data", allow_duplicate=True),
                        Output(ids.whatif_part(_page, "message"), "children", allow_duplicate=True),
                        Input(ids.whatif_value(_page, ALL), "value"), State(ids.whatif_part(_page, "spec"), "data"),
                        State(ids.whatif_part(_page, "base"), "data"), State(ids.WHATIF, "data"),
                        prevent_initial_call=True)
    clientside_callback(_RESET, Output(ids.whatif_value(_page, ALL), "value", allow_duplicate=True),
                        Output(ids.WHATIF, "data", allow_duplicate=True),
                        Output(ids.whatif_part(_page, "message"), "children", allow_duplicate=True),
                        Input(ids.whatif_part(_page, "reset"), "n_clicks"), State(ids.whatif_part(_page, "base"), "data"),
                        State(ids.whatif_value(_page, ALL), "value"), prevent_initial_call=True)


def _drawer(page: str):
    def draw(n_clicks, row, whatif):
        """``page``'s controls, drawn each time its editor is opened (the summary clicked, or Enter on it: an odd
        count), holding the shown row's values (:func:`app.views.whatif.drawn_controls`); closing changes nothing."""
        if not n_clicks or n_clicks % 2 == 0 or row is None:
            raise PreventUpdate
        try:
            return drawn_controls(page, row, whatif)
        except CandorError as err:
            return error_alert(f"What-if editor unavailable: {err}")
    return draw


for _page in (p.strip("/") for p in PAGES):
    callback(Output(ids.whatif_part(_page, "controls"), "children"), Input(ids.whatif_part(_page, "open"), "n_clicks"),
             State(ids.ROW_INPUT, "value"), State(ids.WHATIF, "data"), prevent_initial_call=True)(_drawer(_page))

# the URL's edits, read once as the page loads (the row's own reader is app/callbacks/shell.py)
clientside_callback(
    """function(search) {
        const params = new URLSearchParams(search || ""), row = params.get("row"), edits = Object.create(null);
        params.getAll("edit").forEach(e => {
            const at = e.indexOf("=");
            if (at > 0) { edits[e.slice(0, at).replace(/%%3D/g, "=").replace(/%%25/g, "%%")] = e.slice(at + 1); }
        });
        if (row === null || !Number.isInteger(Number(row)) || !Object.keys(edits).length) { return %(no)s; }
        return {row: Number(row), edits: edits};
    }""" % {"no": _NO},
    Output(ids.WHATIF, "data", allow_duplicate=True), Input(ids.URL, "search"), prevent_initial_call="initial_duplicate")

clientside_callback(
    """function(data, row, pathname) {
        const pages = %(pages)s;
        if (!pages.includes(pathname || "/")) { return %(no)s; }
        const params = new URLSearchParams(window.location.search);
        params.delete("edit");
        if (data && data.row === row && data.edits) {
            Object.entries(data.edits).forEach(([name, v]) => params.append(
                "edit", name.replace(/%%/g, "%%25").replace(/=/g, "%%3D") + "=" + (v === null ? "" : String(v))));
        }
        const q = params.toString(), url = (pathname || "/") + (q ? "?" + q : "");
        if (url !== window.location.pathname + window.location.search) {
            window.history.replaceState(window.history.state, "", url);
        }
        return %(no)s;
    }""" % {"no": _NO, "pages": json.dumps(list(PAGES))},
    Output(ids.WHATIF_URL_SYNC, "data"), Input(ids.WHATIF, "data"), Input(ids.ROW_INPUT, "value"),
    Input(ids.URL, "pathname"))
