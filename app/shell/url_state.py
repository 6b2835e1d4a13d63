"""Every view's state in its URL (issue 15): applied to the page as it opens, and written back as it changes.

A copied link reopens the same view: each page's ``layout`` is wrapped by :func:`from_url`, which
reads the query string against the page's :data:`PAGES` schema (:mod:`app.shell.url_params`), sets each control's initial value
from it, and shows a one-line note naming every parameter it ignored (unknown name, not a number,
out of range, not an option); the rest still applies. A control's range and options are the
control's own (``min``/``max``/``options`` of the component the page built), so the schema never
repeats them; its default is the value the page gives it, left out of the URL. Changing a control
rewrites the query string in the browser (:func:`writer_js`, a clientside callback registered by
:mod:`app.callbacks.links`: ``history.replaceState``, no request, no page reload).

Two parameters are the navbar's, on every page that shows them: ``row`` (set by the shell's own
clientside reader, :mod:`app.callbacks.shell`; checked here) and ``class`` (a multiclass model's
explained class: a link never switches it, :func:`app.shell.layout.class_note` offers the switch).
"""
from __future__ import annotations

import functools
import json

import dash_bootstrap_components as dbc
from dash import dcc, html

from app.shell import ids
from app.shell.url_params import PAGES, TEXT_MAX, Param, options_of, params, read

__all__ = ["Param", "PAGES", "read", "from_url", "note", "writer_js", "store_id"]

NOTE_MAX = 10
"""Ignored parameters named in the note; the rest are counted (a link of 60,000 made a 2 MB page)."""


def store_id(path: str) -> str:
    """The id of the page's ``dcc.Store`` that its URL writer outputs to (it never holds data)."""
    return f"url-state{path.replace('/', '-').rstrip('-') or '-overview'}"


def note(problems: list[str]) -> html.Div:
    """The visible one-line note of the ignored link parameters (empty when every parameter applied)."""
    if not problems:
        return html.Div(id=ids.URL_NOTE)
    shown = problems[:NOTE_MAX] + ([f"and {len(problems) - NOTE_MAX:,} more"] if len(problems) > NOTE_MAX else [])
    return html.Div(dbc.Alert("Link parameters ignored (the rest applies): " + "; ".join(shown),
                              color="warning", className="py-1 px-2 mb-2 small"), id=ids.URL_NOTE, role="status")


def _get(component, p: Param):
    """The control's value as the page built it (its default), ``None`` if the page has no such control."""
    if component is None or p.source is not None:
        return None
    value = getattr(component, p.prop, None)
    return (value or {}).get(p.key) if p.key is not None else value


def _set(component, p: Param, value) -> None:
    if p.key is not None:
        data = dict(getattr(component, p.prop, None) or {})
        data[p.key] = value
        if p.name == "text":
            data["origin"] = "the text of the link"
        setattr(component, p.prop, data)
    else:
        setattr(component, p.prop, value)
    if "options" in getattr(component, "_prop_names", ()) and p.kind in ("choice", "ints", "point"):
        # a dropdown drops a value that is not among its options: until a callback fills them (the Persuasive
        # rules source, the Text page's layers and heads), the link's value is its own option
        known = options_of(component)
        extra = [v for v in (value if isinstance(value, list) else [value]) if v not in known]
        if extra:
            component.options = list(getattr(component, "options", None) or []) + [
                {"label": str(v), "value": v} for v in extra]
    if p.prop == "page_current":  # a paged table shows the link's page only if it knows there are that many
        component.page_count = max(component.page_count or 1, value + 1)


def from_url(path: str):
    """Decorate a page's ``layout``: controls start from the URL's parameters; a note names the ignored ones.

    The wrapped ``layout(**query)`` is built first (its defaults and its controls' ranges), then each
    parameter that applies sets its control. The note and the page's writer store go first in the page.
    """
    def wrap(layout):
        @functools.wraps(layout)
        def restored(**query):
            tree = layout(**query)
            found = {c.id: c for c in tree._traverse_ids() if isinstance(c.id, str)}
            if query.get("text") is not None and ids.TEXT_INPUT in found:  # the text box shows the link's text
                text = query["text"]  # only a text the schema accepts; a refused one is named in the note
                found[ids.TEXT_INPUT].value = text if isinstance(text, str) and len(text) <= TEXT_MAX else None
            values, problems = read(path, query, found)
            defaults = {p.name: _get(found.get(p.component), p) for p in PAGES.get(path, ())}
            schema = {p.name: p for p in params(path)}
            for name, value in values.items():
                p = schema[name]
                if p.component in found:
                    _set(found[p.component], p, value)
            from .layout import class_note

            head = [note(problems)] + [n for n in [class_note(values.get("class"))] if n is not None]
            controls = [p for p in PAGES.get(path, ()) if p.prop != "data"]
            if not controls or any(p.component in found for p in controls):
                # the writer's inputs are the page's controls: a page that does not apply to this model (its
                # layout says why, with no controls) gets no writer, or the browser reports missing inputs
                head.append(dcc.Store(id=store_id(path), data={"defaults": defaults}))
                for p in PAGES.get(path, ()):  # a store the page does not build (the Surrogate page's chosen point)
                    if p.prop == "data" and p.component not in found:
                        head.append(dcc.Store(id=p.component, data=values.get(p.name)))
            kids = tree.children if isinstance(tree.children, list) else [tree.children]
            tree.children = head + kids
            return tree
        return restored
    return wrap


_WRITER = """function() {
    const path = %(path)s, spec = %(spec)s, n = spec.length;
    if (window.location.pathname !== path) { return window.dash_clientside.no_update; }
    const values = Array.from(arguments), params = new URLSearchParams(window.location.search);
    const defaults = (values[n + 2] || {}).defaults || {};
    const keep = new Set(["row", "edit"].concat(spec.map(p => p.name)));  // the shell writes row and edit
    for (const k of Array.from(params.keys())) { if (!keep.has(k)) { params.delete(k); } }
    const name = v => String(v).replace(/%%(25|5F)/g, m => m === "%%25" ? "%%" : "_");
    spec.forEach((p, i) => {
        let v = values[i];
        if (p.key && v) { v = v[p.key]; }
        if (p.source && v) { v = v.includes("|") ? v.split("|").slice(1).join("|") : null; }  // frontier point
        params.delete(p.name);
        if (v === null || v === undefined) { return; }
        if (JSON.stringify(v) === JSON.stringify(defaults[p.name] === undefined ? null : defaults[p.name])) {
            return;  // the page's own default: a shorter link that opens the same view
        }
        if (p.kind === "flag") { params.set(p.name, (v || []).length ? "on" : "off"); }
        else if (p.kind === "names" || p.kind === "ints") {
            if (!v.length) { params.set(p.name, ""); }
            v.forEach(x => params.append(p.name, p.kind === "names" ? name(x) : String(x)));
        } else { params.set(p.name, String(v)); }
    });
    const cls = values[n], classOptions = values[n + 1] || [];
    if (classOptions.length && cls) { params.set("class", String(cls)); } else { params.delete("class"); }
    const q = params.toString(), url = path + (q ? "?" + q : "");
    if (url !== window.location.pathname + window.location.search) {
        window.history.replaceState(window.history.state, "", url);
    }
    return window.dash_clientside.no_update;
}"""


def writer_js(path: str) -> str:
    """The clientside function that writes ``path``'s controls into its query string.

    Its arguments are each :data:`PAGES` control's value in order, then the class picker's value and
    options, then the page's store (``{"defaults": ...}``, the values the page starts with, which the URL
    leaves out); it keeps ``row`` (the shell writes it) and drops every other key.
    """
    spec = [{"name": p.name, "kind": p.kind, "key": p.key, "source": p.source is not None} for p in PAGES[path]]
    return _WRITER % {"path": json.dumps(path), "spec": json.dumps(spec)}
