"""Every view's state in its URL (issue 15): one schema per page, one reader, one writer.

A copied link reopens the same view: each page's ``layout`` is wrapped by :func:`from_url`, which
reads the query string against the page's :data:`PAGES` schema, sets each control's initial value
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
import math
import re
from dataclasses import dataclass
from typing import Callable

import dash_bootstrap_components as dbc
from dash import dcc, html

from app.shell import ids
from app.shell.pages import ROW_PAGES
from app import services
from app.views.components import choice_name
from app.views.whatif import PAGES as WHATIF_PAGES, link_edits
from workspace.errors import CandorError

__all__ = ["Param", "PAGES", "read", "from_url", "note", "writer_js", "store_id"]

TEXT_MAX = 2000
"""Longest text (characters) the Text page's ``text`` parameter carries."""
NOTE_MAX = 10
"""Ignored parameters named in the note; the rest are counted (a link of 60,000 made a 2 MB page)."""
_WHOLE = re.compile(r"[+-]?[0-9]{1,15}")

@dataclass(frozen=True)
class Param:
    """One piece of a page's state in its query string.

    Parameters
    ----------
    name : str
        The query key (``?k=5``).
    component : str or None
        The control it sets and is read from (``None``: applied elsewhere, checked here).
    prop : str, default "value"
        The control's property.
    kind : {"int", "ints", "choice", "names", "text", "flag", "point", "lambdas", "edits"}
        ``int``: a whole number within the control's ``min``/``max`` (or ``lo``/``hi``); ``ints``: several
        (one query key each); ``choice``: one of the control's option values (or ``choices``); ``names``:
        user strings among the control's options (feature names, written as typed); ``text``: at most
        :data:`TEXT_MAX` characters; ``flag``: ``on``/``off`` of a one-switch checklist; ``point``:
        ``method|budget`` of a frontier surrogate; ``lambdas``: MUSE's five λ weights; ``edits``: what-if edits.
    lo, hi : int or callable, optional
        Bounds when the control has none (a callable of the control, evaluated only when the parameter is given).
    choices : callable, optional
        Allowed values when the control's options are filled later (a callable of the control, evaluated
        only when the parameter is given).
    key : str, optional
        For a ``dcc.Store``: the key of its data that holds the value.
    source : (str, str), optional
        (component, property) the browser writes the parameter from, when not the control it sets (the
        Surrogate page's chosen point is read from the shown surrogate's key, set through a store).
    """

    name: str
    component: str | None
    prop: str = "value"
    kind: str = "int"
    lo: int | Callable | None = None
    hi: int | Callable | None = None
    choices: Callable | None = None
    key: str | None = None
    source: tuple[str, str] | None = None


def _text_layers(_):
    from app.services import text_loader

    return range(text_loader.model_info().n_layers)


def _text_heads(_):
    from app.services import text_loader

    return range(text_loader.model_info().n_heads)


def _last_table_page(table) -> int:
    return max(0, math.ceil(services.row_count() / table.page_size) - 1)


def _last_column_page(_) -> int:
    return services.column_pages()


def _row_hi(_) -> int:
    return services.row_count() - 1


def _class_choices(_):
    return services.class_choices()[0]


PAGES: dict[str, tuple[Param, ...]] = {
    "/": (Param("table_page", ids.DATA_TABLE, "page_current", lo=0, hi=_last_table_page),
          Param("columns", ids.TABLE_COLUMNS, "active_page", lo=1, hi=_last_column_page)),
    "/descriptive": (Param("players", ids.SHAP_PLAYERS, kind="choice"),),
    "/surrogate": (
        Param("foi", ids.SURROGATE_FOI, kind="names"),
        Param("max_rules", ids.SURROGATE_MAX_RULES), Param("max_width", ids.SURROGATE_MAX_WIDTH),
        Param("max_neighborhoods", ids.SURROGATE_MAX_NBHD),
        Param("lambdas", ids.SURROGATE_LAMBDAS, kind="lambdas"),
        Param("point", ids.SURROGATE_POINT, "data", kind="point", source=(ids.SURROGATE_KEY, "data")),
    ),
    "/persuasive": (
        Param("k", ids.K_SLIDER), Param("values", ids.ROUNDING, kind="choice"),
        Param("grouping", ids.GROUPING, kind="flag"), Param("sensitive", ids.SENSITIVE, kind="names"),
        Param("rules", ids.RULES_SOURCE, kind="point"), Param("rules_shown", ids.RULES_KEEP),
        Param("rules_round", ids.RULES_ROUND, kind="choice"), Param("rules_plain", ids.RULES_PLAIN, kind="flag"),
        Param("immutable", ids.STORY_IMMUTABLE, kind="names"),
    ),
    "/attention": (),
    "/text": (
        Param("text", ids.TEXT_CURRENT, "data", kind="text", key="text"),
        Param("layer", ids.TEXT_LAYER, kind="choice", choices=_text_layers),
        Param("heads", ids.TEXT_HEADS, kind="ints", choices=_text_heads),
        Param("method", ids.TEXT_METHOD, kind="choice"), Param("metric", ids.TEXT_METRIC, kind="choice"),
        Param("query", ids.TEXT_QUERY, kind="choice")),
    "/performance": (Param("threshold", ids.PERF_THRESHOLD),),  # hundredths: ?threshold=30 is 0.30
    "/dependence": (Param("feature", ids.DEPENDENCE_FEATURE, kind="choice"),),
    "/cohorts": (Param("cohort", ids.COHORT_FILTER, kind="text"), Param("sensitive", ids.COHORT_SENSITIVE, kind="names")),
}
"""Each page's state parameters (path -> schema); the navbar's ``row`` and ``class`` are added by :func:`params`."""

ROW = Param("row", None, lo=0, hi=_row_hi)
CLASS, EDIT = Param("class", None, kind="choice", choices=_class_choices), Param("edit", None, kind="edits")


def params(path: str) -> tuple[Param, ...]:
    """The schema of ``path`` with the navbar's parameters it takes."""
    return PAGES.get(path, ()) + ((ROW,) if path in ROW_PAGES else ()) + ((EDIT,) if path in WHATIF_PAGES else ()) + (CLASS,)


def store_id(path: str) -> str:
    """The id of the page's ``dcc.Store`` that its URL writer outputs to (it never holds data)."""
    return f"url-state{path.replace('/', '-').rstrip('-') or '-overview'}"


class _Bad(ValueError):
    """A parameter that cannot apply; its message says why."""


def _bound(b, component):
    return b(component) if callable(b) else b


def _int(text: str, lo, hi, component) -> int:
    text = str(text).strip()
    if not _WHOLE.fullmatch(text):  # int() would also take '1_0' and other scripts' digits
        raise _Bad("not a whole number")
    v = int(text)
    lo, hi = _bound(lo, component), _bound(hi, component)
    if (lo is not None and v < lo) or (hi is not None and v > hi):
        raise _Bad(f"outside {lo}–{hi}" if lo is not None and hi is not None else "out of range")
    return v


def _options(component) -> list:
    """Option values of a dropdown, select or radio group (plain strings/numbers or option dicts)."""
    opts = getattr(component, "options", None) or []
    return [o["value"] if isinstance(o, dict) else o for o in opts]


def _match(text: str, allowed) -> object:
    allowed = list(allowed)
    if not allowed:
        raise _Bad("nothing to choose here (a class is chosen only for a multiclass model)")
    for a in allowed:
        if str(a) == str(text).strip():
            return a
    raise _Bad("not one of " + ", ".join(map(str, allowed[:8])) + (" ..." if len(allowed) > 8 else ""))


def _as_list(raw) -> list[str]:
    items = raw if isinstance(raw, list) else [raw]
    return [i for i in items if i != ""]


def _parse(p: Param, raw, component) -> object:
    """The control's value for the query value ``raw`` (a string, or a list for a repeated key)."""
    if isinstance(raw, list) and p.kind not in ("names", "ints", "edits"):
        raise _Bad("given more than once")
    if p.kind == "int":
        lo = getattr(component, "min", None) if p.lo is None else p.lo
        hi = getattr(component, "max", None) if p.hi is None else p.hi
        return _int(raw, lo, hi, component)
    if p.kind == "choice":
        return _match(raw, p.choices(component) if p.choices else _options(component))
    if p.kind == "ints":
        allowed = list(p.choices(component)) if p.choices else _options(component)
        out = [_match(v, allowed) for v in _as_list(raw)]
        if len(set(out)) != len(out):
            raise _Bad("a value repeated")
        return out
    if p.kind == "names":
        allowed = {choice_name(v): v for v in _options(component)}
        names = _as_list(raw)
        unknown = [n for n in names if n not in allowed]
        if unknown:
            raise _Bad(f"no feature named {unknown[0]!r}")
        return [allowed[n] for n in dict.fromkeys(names)]
    if p.kind == "flag":
        if raw not in ("on", "off"):
            raise _Bad("not on or off")
        return ["on"] if raw == "on" else []
    if p.kind == "text":
        if len(raw) > TEXT_MAX:
            raise _Bad(f"longer than {TEXT_MAX} characters")
        return raw
    if p.kind == "point":
        method, _, budget = str(raw).partition("|")
        if not method.isidentifier() or not _WHOLE.fullmatch(budget) or budget.startswith(("-", "+")):
            raise _Bad("not method|budget, e.g. muse|10")
        return f"{method}|{int(budget)}"
    if p.kind == "lambdas":  # a CandorError is named in the note as a _Bad is (read)
        services.surrogates.parse_lambdas(raw)
        return raw
    if p.kind == "edits":  # each edit checked by its control; a refusal too
        return link_edits(_as_list(raw))
    raise ValueError(f"unknown parameter kind {p.kind!r}")


def _shown(raw) -> str:
    text = ",".join(raw) if isinstance(raw, list) else str(raw)
    return text if len(text) <= 40 else text[:39] + "…"


def read(path: str, query: dict, components: dict | None = None) -> tuple[dict, list[str]]:
    """Check the query parameters of ``path`` against its schema.

    Parameters
    ----------
    path : str
        The page's path, a key of :data:`PAGES`.
    query : dict
        Query parameters as Dash pages pass them to ``layout`` (a string, or a list for a repeated key).
    components : dict, optional
        id -> the page's control (its ``min``/``max``/``options`` bound the value).

    Returns
    -------
    values : dict
        Parameter name -> the control's value, for every parameter that applies.
    problems : list of str
        One entry per ignored parameter, naming it (``"k=abc: not a whole number"``).
    """
    schema = {p.name: p for p in params(path)}
    components = components or {}
    values, problems = {}, []
    for name, raw in query.items():
        p = schema.get(name)
        if p is None:
            problems.append(f"{_shown(name)}: not a setting of this page")
            continue
        try:
            values[name] = _parse(p, raw, components.get(p.component))
        except _Bad as why:
            problems.append(f"{name}={_shown(raw)}: {why}")
        except CandorError as err:  # a bound that needs the model (e.g. the text model's layers) could not load
            problems.append(f"{name}={_shown(raw)}: {err}")
    return values, problems


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
        known = _options(component)
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
