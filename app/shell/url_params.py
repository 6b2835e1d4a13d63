"""What a link may say, page by page, and how it is read (issue 15): each page's schema and the one reader.

:data:`PAGES` is each page's schema of query parameters (:class:`Param`); :func:`read` checks a query against it,
each value against the control it sets (its ``min``/``max``/``options``), and names every parameter it ignores.
Applying the values to a page and writing them back into the URL is :mod:`app.shell.url_state`.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Callable

from app.shell import ids
from app.shell.pages import ROW_PAGES
from app import services
from app.views.components import choice_name
from app.views.whatif import PAGES as WHATIF_PAGES, link_edits
from workspace.errors import CandorError

__all__ = ["Param", "PAGES", "params", "read", "TEXT_MAX"]

TEXT_MAX = 2000
"""Longest text (characters) the Text page's ``text`` parameter carries."""
_WHOLE = re.compile(r"[+-]?[0-9]{1,15}")

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


RAW_PLAYERS_MOOT = ("not a choice for this model: its SHAP values already have the raw columns as players (there is "
                    "no one-hot Pipeline whose children's values they would sum)")
"""Why ``players`` is ignored where the Descriptive page offers no choice of players (its radio is hidden)."""


def _players_choices(component):
    """The players a link may choose: the radio's options where the default SHAP sums one-hot children (a tree
    Pipeline, :func:`app.services.raw_players_offered`); elsewhere none, refused with why (it was ignored silently)."""
    if not services.raw_players_offered():
        raise _Bad(RAW_PLAYERS_MOOT)
    return options_of(component)


PAGES: dict[str, tuple[Param, ...]] = {
    "/": (Param("table_page", ids.DATA_TABLE, "page_current", lo=0, hi=_last_table_page),
          Param("columns", ids.TABLE_COLUMNS, "active_page", lo=1, hi=_last_column_page)),
    "/descriptive": (Param("players", ids.SHAP_PLAYERS, kind="choice", choices=_players_choices),
                     Param("beeswarm", ids.GLOBAL_BEESWARM_SHOW, kind="flag")),
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


def options_of(component) -> list:
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
        return _match(raw, p.choices(component) if p.choices else options_of(component))
    if p.kind == "ints":
        allowed = list(p.choices(component)) if p.choices else options_of(component)
        out = [_match(v, allowed) for v in _as_list(raw)]
        if len(set(out)) != len(out):
            raise _Bad("a value repeated")
        return out
    if p.kind == "names":
        allowed = {choice_name(v): v for v in options_of(component)}
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
