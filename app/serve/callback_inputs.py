"""Every server callback's inputs checked before it runs, and no callback answering HTTP 500 (issue 27).

Dash passes a callback the values a request names, whatever they are: a forged request can send ``None``, a
string for a number, a dict for a list or a page size of a billion. :func:`install` wraps every registered
callback once, in ``create_app``, so each page's callbacks need no checks of their own:

* each input and state value is checked against its declared kind: the kind of its Dash property
  (:data:`PROPERTY_KINDS`: ``n_clicks`` a count, ``page_size`` a bounded count, ``pathname`` text, ...) and,
  for controls whose value is a count or an index, the bounds in :data:`CONTROL_KINDS`; every value's text,
  lists and nesting are bounded (:data:`MAX_TEXT`, :data:`MAX_ITEMS`, :data:`MAX_DEPTH`). A value that does
  not fit is refused: nothing changes on the page (HTTP 204) and the log gets one line naming the callback,
  the input and why;
* an exception the callback raises on a value that passed (a forged value a page never sends, a bug) is
  answered HTTP 422 with one line that the page shows (``assets/candor_refusals.js``): a
  :class:`~workspace.errors.CandorError`'s own line, else a reference to the server's log, which gets one
  line (:func:`workspace.errors.first_line`, the error's type and where it was raised), no traceback.
  Nothing on the page changes but that line: never a 500, never silent.
"""
from __future__ import annotations

import json
import logging
import math
import secrets
from typing import Callable

from dash.exceptions import PreventUpdate
from flask import Response
from werkzeug.exceptions import HTTPException

from app.shell import ids
from app.services.data_table import MAX_PAGE_ROWS
from app.services.table_filter import MAX_QUERY
from workspace.errors import CandorError, first_line, raised_at

log = logging.getLogger("candor.callbacks")

MAX_TEXT = 1_000_000
"""Longest string (characters) any input but an upload's ``contents`` may be (the request size limit bounds those)."""
MAX_ITEMS = 10_000
"""Most items in any list or dict an input holds."""
MAX_DEPTH = 8
"""Deepest nesting of lists and dicts in an input."""
MAX_INDEX = 2 ** 31 - 1
"""Largest row, page or layer number a request may name."""

Kind = Callable[[object], str | None]
"""A check: the value -> None if it fits, else why not (a few words)."""


def whole(lo: int, hi: int, *, optional: bool = True) -> Kind:
    """A whole number in ``lo..hi`` (an integral float counts; ``None`` too if ``optional``)."""
    def check(v):
        if v is None:
            return None if optional else "missing"
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            return f"not a whole number ({type(v).__name__})"
        if isinstance(v, float) and not (math.isfinite(v) and v.is_integer()):
            return "not a whole number"
        return None if lo <= v <= hi else f"outside {lo:,}–{hi:,}"
    return check


def text(v) -> str | None:
    """Text or ``None``."""
    return None if v is None or isinstance(v, str) else f"not text ({type(v).__name__})"


def mapping(v) -> str | None:
    """A dict (a click's or a cell's data) or ``None``."""
    return None if v is None or isinstance(v, dict) else f"not an object ({type(v).__name__})"


def wholes(lo: int, hi: int) -> Kind:
    """A list of whole numbers in ``lo..hi``, one such number, or ``None`` (a multi-choice of indices)."""
    one = whole(lo, hi)

    def check(v):
        return next((w for w in map(one, v) if w), None) if isinstance(v, list) else one(v)
    return check


COUNT = whole(0, MAX_INDEX)
PROPERTY_KINDS: dict[str, Kind] = {
    "n_clicks": COUNT, "n_intervals": COUNT, "n_submit": COUNT, "n_blur": COUNT,
    "page_current": COUNT, "page_size": whole(1, MAX_PAGE_ROWS), "active_page": whole(1, MAX_INDEX),
    "pathname": text, "search": text, "hash": text, "href": text,
    "filename": text, "contents": text,  # every dcc.Upload here takes one file (multiple=False): a list is forged
    "active_cell": mapping, "clickData": mapping, "hoverData": mapping, "selectedData": mapping,
    "filter_query": lambda v: text(v) or (None if v is None or len(v) <= MAX_QUERY else
                                          f"a table filter of {len(v):,} characters (at most {MAX_QUERY:,})"),
}
"""The kind of a Dash property's value, whatever component it is on."""

CONTROL_KINDS: dict[tuple[str, str], Kind] = {
    (ids.ROW_INPUT, "value"): whole(0, MAX_INDEX), (ids.TEXT_ROW, "value"): whole(0, MAX_INDEX),
    (ids.K_SLIDER, "value"): whole(0, MAX_INDEX), (ids.RULES_KEEP, "value"): whole(0, 30),
    (ids.SURROGATE_MAX_RULES, "value"): whole(1, 30), (ids.SURROGATE_MAX_WIDTH, "value"): whole(1, 3),
    (ids.SURROGATE_MAX_NBHD, "value"): whole(1, 10),
    (ids.TEXT_LAYER, "value"): whole(0, MAX_INDEX), (ids.TEXT_HEADS, "value"): wholes(0, MAX_INDEX),
    (ids.PERF_THRESHOLD, "value"): whole(0, 100),  # the Performance page's threshold, in hundredths
}
"""The kind of a control's value where it is a count or an index (the page's own bounds, or the widest sane)."""


def _size(v, depth: int = 0, *, contents: bool = False) -> str | None:
    """Why ``v`` is too big (text, items, nesting), or None."""
    if isinstance(v, str):
        return None if contents or len(v) <= MAX_TEXT else f"text of {len(v):,} characters (at most {MAX_TEXT:,})"
    if isinstance(v, (list, dict)):
        if depth >= MAX_DEPTH:
            return f"nested deeper than {MAX_DEPTH}"
        if len(v) > MAX_ITEMS:
            return f"{len(v):,} items (at most {MAX_ITEMS:,})"
        if isinstance(v, dict) and any(len(str(k)) > MAX_TEXT for k in v):
            return "a key too long"
        items = v.values() if isinstance(v, dict) else v
        return next((w for w in (_size(i, depth + 1, contents=contents) for i in items) if w), None)
    if isinstance(v, float) and not math.isfinite(v):
        return "not a finite number"
    return None


def _component(cid) -> str:
    """A declared id as the tables name it (a pattern id, a dict or its JSON, by its ``type``)."""
    if isinstance(cid, str) and cid.startswith("{"):
        try:
            cid = json.loads(cid)
        except ValueError:
            return cid
    return str(cid.get("type", cid)) if isinstance(cid, dict) else str(cid)


def problem(declared: dict, value) -> str | None:
    """Why ``value`` cannot be the declared input ``{"id", "property"}``'s, or None if it can."""
    prop = str(declared.get("property", ""))
    if why := _size(value, contents=prop == "contents"):
        return why
    kind = CONTROL_KINDS.get((_component(declared.get("id")), prop)) or PROPERTY_KINDS.get(prop)
    return kind(value) if kind else None


def _problems(spec: list, sent) -> str | None:
    """Why the request's ``sent`` items (``{"id", "property", "value"}``, lists for wildcards) do not fit ``spec``."""
    if not isinstance(sent, list) or len(sent) != len(spec):
        return f"{len(sent) if isinstance(sent, list) else 'no'} values for {len(spec)} inputs"
    for declared, item in zip(spec, sent):
        for one in (item if isinstance(item, list) else [item]):  # a wildcard (ALL) sends a list of items
            if not isinstance(one, dict):
                return "an input that is not an object"
            if why := problem(declared, one.get("value")):
                return f"{_component(declared.get('id'))}.{declared.get('property')}: {why}"
    return None


def guard(key: str, callback: Callable, spec_inputs: list, spec_state: list) -> Callable:
    """``callback`` (Dash's wrapper of one registered callback) checking its inputs and never raising but
    :class:`PreventUpdate` (see the module's docstring)."""
    name = key.strip(".").split("...")[0].split("@")[0]

    def guarded(*args, **kwargs):
        try:
            g = kwargs.get("callback_context")
            if g is not None:
                why = _problems(spec_inputs, g.get("inputs_list")) or _problems(spec_state, g.get("states_list"))
                if why:
                    log.warning("callback %s refused a request: %s", name, why)
                    raise PreventUpdate
            return callback(*args, **kwargs)
        except PreventUpdate:
            raise
        except Exception as err:  # noqa: BLE001  (the one place a callback's error becomes a line, not a 500)
            raise _failed(name, err) from None

    guarded.__wrapped__ = callback
    return guarded


def _failed(name: str, err: Exception) -> HTTPException:
    """The answer to a callback that raised on inputs that passed: HTTP 422 with one line the page shows
    (``assets/candor_refusals.js``), never a 500 and never silent. A :class:`~workspace.errors.CandorError`'s
    line is written for people and shown as it is; any other error's text may hold server paths or internals,
    so the page gets a reference and the log, one line, gets the error, its type and where it was raised."""
    ref = secrets.token_hex(4)
    log.warning("callback %s failed (ref %s, %s at %s): %s", name, ref, type(err).__name__, raised_at(err),
                first_line(err))
    if isinstance(err, CandorError):
        line = first_line(err)
    else:
        line = f"this view could not be updated: an error on the server (reference {ref} in its log)"
    return HTTPException(response=Response(f"candor: {line}\n", status=422, mimetype="text/plain"))


def _prop_items(items, what: str, *, wildcard: bool = True) -> str | None:
    """Why ``items`` is not a list of ``{"id", "property", ...}`` objects (lists of them for wildcards), or None."""
    if not isinstance(items, list):
        return f"{what} is not a list"
    for item in items:
        for one in (item if wildcard and isinstance(item, list) else [item]):
            if not isinstance(one, dict) or not isinstance(one.get("property"), str) \
                    or not isinstance(one.get("id"), (str, dict)):
                return f"{what} holds an item that is not an {{id, property}} object"
    return None


def malformed_body(body, callback_map: dict) -> str | None:
    """Why a ``/_dash-update-component`` body is not one Dash can dispatch to a server callback, or None.

    Dash's own dispatch reads the body before any callback runs, and raised (HTTP 500, a traceback in the log)
    on a body of the wrong shape: ``inputs`` a string, ``changedPropIds`` null, an item that is not an object,
    the ``output`` of a clientside callback (in the callback map, with no server function). ``app/serve/access.py``
    refuses such a body with 400 and this reason, before Dash reads it (found by an attack, issue 27)."""
    if not isinstance(body, dict):
        return "the body is not a JSON object"
    key = body.get("output")
    if not isinstance(key, str) or key not in callback_map or callback_map[key].get("callback") is None:
        return "unknown callback"
    outputs = body.get("outputs")
    if isinstance(outputs, dict):
        outputs = [outputs]
    why = (_prop_items(outputs, "outputs") or _prop_items(body.get("inputs"), "inputs")
           or _prop_items(body.get("state", []), "state"))
    if why:
        return why
    changed = body.get("changedPropIds", [])
    if not isinstance(changed, list) or not all(isinstance(c, str) for c in changed):
        return "changedPropIds is not a list of text"
    return None


def miscounted(body: dict, callback_map: dict) -> str | None:
    """Why a well-formed body (:func:`malformed_body` found nothing) cannot be dispatched: more or fewer inputs or
    states than its callback declares (Dash indexes the declared items into the sent ones, and fewer raised
    IndexError: HTTP 500). ``app/serve/access.py`` asks after the role checks, so a forged call of a callback the
    user may not call is still refused for that (403)."""
    entry = callback_map[body["output"]]
    for what in ("inputs", "state"):
        sent, declared = body.get(what, []), entry.get(what, [])
        if len(sent) != len(declared):
            return f"{len(sent)} {what} values for the callback's {len(declared)}"
    return None


def install(dash_app) -> None:
    """Wrap every server callback of ``dash_app`` in :func:`guard` (once; after Dash's set-up moved them in)."""
    for key, entry in dash_app.callback_map.items():
        fn = entry.get("callback")
        if fn is None or getattr(fn, "_candor_guarded", False):
            continue
        wrapped = guard(key, fn, entry.get("inputs", []), entry.get("state", []))
        wrapped._candor_guarded = True
        entry["callback"] = wrapped
