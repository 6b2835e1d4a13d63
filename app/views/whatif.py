"""The what-if editor (issue 25): its card on the Descriptive and Persuasive pages, and what their row callbacks send it.

The controls come from the data (:func:`app.services.whatif.controls`): a number box bounded by the column's
smallest and largest value, a dropdown of a category's levels, one dropdown for a one-hot block. A row callback
fills them with the row's values when the row changes (in the same request as its panels: a row change stays one
request), and a clientside callback (:mod:`app.callbacks.whatif`) turns the values that differ from the table row
into the shell's store ``ids.WHATIF`` (``{"row": N, "edits": {name: value}}``), which both pages explain and the URL
carries (``?row=N&edit=name=value``).
"""
from __future__ import annotations

import functools
import json
import math

import dash_bootstrap_components as dbc
from dash import ALL, Output, callback_context, dcc, html, no_update
from dash.exceptions import MissingCallbackContextException

from app import services
from app.shell import ids
from app.shell.pages import WHATIF_PAGES
from app.views.components import labelled_options
from explainers.numbers import plain
from workspace.errors import CandorError


PAGES = WHATIF_PAGES
"""The pages that explain the edited row and carry it in their URL (each page's editor is named after its path:
``descriptive``, ``persuasive``)."""


def dom_id(component_id: dict) -> str:
    """The DOM id Dash gives a dict id (its JSON, keys sorted, no spaces): what a ``<label for>`` names."""
    return json.dumps(component_id, sort_keys=True, separators=(",", ":"))


def _spec(c) -> dict:
    number = c.kind == "number"
    return {"name": c.name, "kind": c.kind, "lo": c.lo if number else None, "hi": c.hi if number else None,
            "whole": c.whole, "missing": c.missing, "options": list(c.options)}


def _control(page: str, i: int, c, value) -> html.Div:
    """One control: its label (the feature, and a number's range) and its field; three components, the fewest that
    keep a visible label bound to its field (every mounted component costs each Dash update some browser time)."""
    cid = ids.whatif_value(page, i)
    if c.kind == "number":
        field = dbc.Input(id=cid, type="number", min=c.lo, max=c.hi, step=1 if c.whole else "any", debounce=True,
                          size="sm", value=value)
        span = f" ({plain(c.lo, 6, trim=True)} to {plain(c.hi, 6, trim=True)}{', or empty' if c.missing else ''})"
    else:
        options = labelled_options([{"label": o, "value": k} for k, o in enumerate(c.options)])
        field = dcc.Dropdown(id=cid, options=options, clearable=False, searchable=len(options) > 8,
                             className="whatif-level", value=value)
        span = ""
    return html.Div([dbc.Label(c.name + span, html_for=dom_id(cid), className="small mb-0"), field],
                    className="whatif-control")


def editor_card(page: str) -> html.Div:
    """The editor of ``page`` ("descriptive", "persuasive"): a line saying whether the row shown is edited (and
    how), "Reset to row N", and the controls, folded and not yet in the page: :func:`drawn_controls` draws them when the
    editor is first opened. Every component in a Dash page costs each callback's answer some browser time (Dash's
    store notifies each one): Adult's 14 or the sample's 30 controls, always present, made a row change about
    60 ms slower on the sample (Chromium profile), for an editor most row changes never open."""
    try:
        controls = services.whatif.controls()
    except CandorError as err:
        return html.Div(dbc.Alert(f"What-if editor unavailable: {err}", color="secondary", className="py-1 small"))
    return html.Div([
        dcc.Store(id=ids.whatif_part(page, "spec"), data=[_spec(c) for c in controls]),
        dcc.Store(id=ids.whatif_part(page, "base")),
        html.Div([html.Div(id=ids.whatif_part(page, "note"), className="flex-grow-1 whatif-note", role="status"),
                  dbc.Button("Reset to row", id=ids.whatif_part(page, "reset"), size="sm", color="secondary",
                             outline=True, disabled=True, n_clicks=0, className="ms-2 whatif-reset")],
                 className="d-flex align-items-start"),
        html.Div(id=ids.whatif_part(page, "message"), role="status", className="text-danger small whatif-message"),
        html.Details([
            html.Summary("What-if: edit this row's features", id=ids.whatif_part(page, "open"), n_clicks=0,
                         className="fw-semibold"),
            html.P("Numbers stay within the data's smallest and largest value, categories among their levels; the "
                   "prediction and every explanation on the Descriptive and Persuasive pages follow the edit "
                   "(press Enter or leave a box to apply it).", className="small text-muted mb-2"),
            html.Div(id=ids.whatif_part(page, "controls")),
        ], className="whatif-editor"),
    ], className="whatif mb-3 p-2 border rounded")


def drawn_controls(page: str, row, whatif) -> html.Div:
    """The controls of ``page``'s editor, each holding the value shown: table row ``row`` with the edits of the
    store ``ids.WHATIF`` when they are of that row (:func:`shown_row`).

    Raises
    ------
    CandorError
        For a row outside the table or an edit refused (the controls then hold the table row's values).
    """
    shown = shown_row(row, whatif)
    try:
        ed = services.whatif_editor(row, shown.get("edits") if isinstance(shown, dict) else None)
    except CandorError:
        if not isinstance(shown, dict):
            raise
        ed = services.whatif_editor(row, None)
    return html.Div([_control(page, i, c, _value(c, v)) for i, (c, v) in enumerate(zip(ed.controls, ed.values))],
                    className="whatif-grid")


def link_edits(items: list[str]) -> dict:
    """A link's what-if edits (``edit=name=value`` items; a name's ``%`` and ``=`` as ``%25``, ``%3D``), each
    checked by its control (:meth:`app.services.whatif.Control.encoded`).

    Raises
    ------
    CandorError
        Naming the first item refused.
    """
    by_name, out = {c.name: c for c in services.whatif.controls()}, {}
    for item in items:
        name, eq, value = str(item).partition("=")
        name = name.replace("%3D", "=").replace("%25", "%")
        if not eq or name not in by_name:
            raise CandorError(f"no feature named {name[:40]!r}" if eq else "not name=value")
        by_name[name].encoded(value)
        out[name] = value
    return out


def outputs(page: str) -> list:
    """The editor's outputs in ``page``'s row callback (append them to its own; :func:`update` fills them)."""
    part = functools.partial(ids.whatif_part, page)
    return [Output(ids.whatif_value(page, ALL), "value", allow_duplicate=True), Output(part("base"), "data"),
            Output(part("note"), "children"), Output(part("reset"), "children"), Output(part("reset"), "disabled")]


def shown_row(row, whatif):
    """What a row page explains: table row ``row``, or ``{"row", "edits"}`` when the editor's store edits that row."""
    if isinstance(whatif, dict) and whatif.get("row") == row and whatif.get("edits"):
        return {"row": row, "edits": whatif["edits"]}
    return row


def _value(c, v):
    """A control's value in the browser: a number (None: missing), or the index of a level."""
    return v if c.kind == "number" else c.options.index(v)


def _text(v) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "(missing)"
    return plain(v, 6, trim=True) if isinstance(v, (int, float)) else str(v)


def _note(ed) -> html.Div | str:
    if not ed.changed:
        return ""
    at = {c.name: i for i, c in enumerate(ed.controls)}
    diffs = [f"{n} {_text(ed.base[at[n]])} → {_text(ed.values[at[n]])}" for n in ed.changed]
    return dbc.Alert([html.Span(f"Edited row: row {ed.row} with {len(diffs)} feature{'s' if len(diffs) > 1 else ''} "
                                "changed. ", className="fw-semibold"), "; ".join(diffs) + ". ",
                      "The prediction and every explanation on this page are of the edited row."],
                     color="warning", className="py-1 px-2 mb-1 small")


def update(row, whatif, refresh: bool):
    """The row a page explains and its editor's outputs (:func:`outputs`).

    Parameters
    ----------
    row : the row box's value
    whatif : the store ``ids.WHATIF``'s data
    refresh : bool
        A new row (or the page opening): the controls get its values; else (an edit) they are left as typed.

    Returns
    -------
    shown : int, dict or None
        What to explain (:func:`shown_row`); None when an edit was refused: the page's panels stay as they are
        and the note says why in one line.
    values : tuple
        The editor's outputs.
    """
    shown = shown_row(row, whatif)
    try:
        ed = services.whatif_editor(row, shown.get("edits") if isinstance(shown, dict) else None)
    except CandorError as err:
        refusal = dbc.Alert(f"Not applied: {err}", color="danger", className="py-1 px-2 mb-1 small")
        if not isinstance(shown, dict):  # the row itself: its panels say why
            return row, _unchanged(no_update)
        if not refresh:  # an edit: nothing changes but the note
            return None, _unchanged(refusal)
        try:  # a link's edits refused: the table row, and why
            return row, _sent(services.whatif_editor(row, None), True, refusal)
        except CandorError:
            return row, _unchanged(no_update)
    return shown, _sent(ed, refresh, _note(ed))


def _drawn(count: int) -> int:
    """How many controls the page has drawn (0 until the editor is first opened: :func:`drawn_controls`), read from the
    callback's wildcard output; ``count`` (every control) when called outside a request."""
    try:  # the editor's controls are a row callback's only wildcard output (a list, empty until drawn)
        wildcard = [out for out in callback_context.outputs_list if isinstance(out, list)]
    except MissingCallbackContextException:
        return count
    return len(wildcard[0]) if wildcard else count


def _unchanged(note) -> tuple:
    return [no_update] * _drawn(len(services.whatif.controls())), no_update, note, no_update, no_update


def _sent(ed, refresh: bool, note) -> tuple:
    drawn = _drawn(len(ed.controls))
    values = [_value(c, v) for c, v in zip(ed.controls, ed.values)] if refresh else [no_update] * len(ed.controls)
    values = values[:drawn]
    base = {"row": ed.row, "values": [_value(c, v) for c, v in zip(ed.controls, ed.base)]} if refresh else no_update
    return values, base, note, f"Reset to row {ed.row}", not ed.changed
