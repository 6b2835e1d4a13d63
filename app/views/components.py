"""Small dash-bootstrap-components builders shared by the pages."""
from __future__ import annotations

import re

import dash_bootstrap_components as dbc
from dash import dcc, html


def card(title: str, body, *, source: str | None = None, class_name: str = "") -> dbc.Card:
    """A titled card; ``source`` names the method that made its numbers."""
    children = list(body) if isinstance(body, (list, tuple)) else [body]
    if source:
        children.append(method_note(source))
    return dbc.Card([dbc.CardHeader(title), dbc.CardBody(children)], class_name=f"mb-3 {class_name}")


def method_note(text: str) -> html.Div:
    """The "Method: ..." line under every number."""
    return html.Div([html.Span("Method: ", className="fw-semibold"), text], className="method-note")


def graph(component_id: str, height: int = 380, placeholder: str | None = None) -> dcc.Loading:
    """A graph with a loading spinner and a fixed height (no layout jump).

    ``placeholder``: the figure shown until a callback draws one, :func:`empty_figure` of that text (no axes);
    without it Plotly draws empty axes (-1..6, 0..4), which a new user took for a broken chart while the
    panel waited for the warm-up.
    """
    extra = {} if placeholder is None else {"figure": empty_figure(placeholder)}
    return dcc.Loading(dcc.Graph(id=component_id, config={"displaylogo": False}, style={"height": f"{height}px"},
                                 **extra), type="dot", delay_show=300)


def row_status_store(page: str, data: dict | None = None) -> dcc.Store:
    """The store a row page's callback fills with the navbar's status line (:func:`app.shell.ids.row_status_data`);
    ``data``: what it holds as the page opens, when the page's layout brings it."""
    from app.shell import ids

    return dcc.Store(id=ids.row_status_data(page), data=data)


def slider_marks(d: int) -> list[int]:
    """Slider marks for 1..``d``: 1, every 5 (10 past 40) and ``d``, none closer than half a step to ``d``
    (on a 27-feature table "25" and "27" overlapped); every value up to 8."""
    if d <= 8:
        return list(range(1, d + 1))
    step = 5 if d <= 40 else 10
    marks = [1] + list(range(step, d, step))
    if len(marks) > 1 and d - marks[-1] < step / 2 + 0.5:
        marks.pop()
    return marks + [d]


def waiting_note(text: str) -> dbc.Alert:
    """What a panel waits for while the warm-up computes its value (with the progress it knows)."""
    return dbc.Alert([dbc.Spinner(size="sm", spinner_class_name="me-2"), text], color="info",
                     className="mb-2 py-2 small")


def job_progress(set_progress, what, unit: str = ""):
    """``progress(done, total)`` for a background job's service: the bar's value (percent) and its label,
    "what: 3 of 13 unit, about 20 s left" (:func:`app.services.warmup.time_left`, timed from this call).

    ``what`` is a string, or a function of ``(done, total)`` naming the current phase; it may return
    ``(name, done_in_phase, phase_total)`` to count within the phase ("LIME: 3 of 10 reruns" at 13 of 20 in all),
    the bar and the time left still over the whole job.
    """
    import time

    from app.services.warmup import time_left

    started = time.monotonic()

    def tell(done: int, total: int) -> None:
        phase = what(done, total) if callable(what) else what
        name, shown, of = phase if isinstance(phase, tuple) else (phase, done, total)
        left = time_left(done, total, time.monotonic() - started)
        count = f"{shown} of {of}" + (f" {unit}" if unit else "") + (f", {left}" if left else "")
        set_progress((round(100 * done / total), f"{name}: {count}"))
    return tell


def metric(label: str, value: str, help_text: str | None = None) -> html.Div:
    """One labelled figure, e.g. "Agreement 0.944"."""
    return html.Div([html.Div(label, className="metric-label"), html.Div(value, className="metric-value"),
                     html.Div(help_text, className="metric-help") if help_text else None], className="metric")


def metric_row(items: list[html.Div]) -> html.Div:
    return html.Div(items, className="metric-row")


def error_alert(message: str) -> dbc.Alert:
    """What a page shows instead of a traceback."""
    return dbc.Alert(message, color="danger", className="mb-2")


def fmt(value: float, digits: int = 3) -> str:
    """Format a number for display; NaN reads as "n/a"."""
    if value is None or value != value:
        return "n/a"
    return f"{value:.{digits}f}"


def empty_figure(message: str):
    """A blank figure carrying ``message`` (wrapped at about 70 characters), for when a view does not apply or failed.

    ``message`` is plain text (error messages name the user's columns and files): it is escaped, never drawn as
    Plotly markup.
    """
    import textwrap

    import plotly.graph_objects as go

    from app.views.figures import esc

    lines = textwrap.wrap(message, 70, break_long_words=False, break_on_hyphens=False) or [message]
    fig = go.Figure()
    fig.add_annotation(text="<br>".join(esc(line) for line in lines),
                       showarrow=False, x=0.5, y=0.5, xref="paper", yref="paper")
    fig.update_layout(template="candor", xaxis_visible=False, yaxis_visible=False)
    return fig


# --- Persuasive (issue 4) ---
def gilpin_badge(label) -> html.Span:
    """The Gilpin et al. (2018) label of an explanation as a badge (docs/methods.md, "Gilpin labels")."""
    return dbc.Badge(f"Gilpin: {label.text()}", color="warning" if label.persuasive else "secondary",
                     text_color="dark" if label.persuasive else None,  # 4.5:1 contrast on amber
                     class_name="me-1 gilpin-badge", title=f"default fidelity metric: {label.default_metric}")


# --- Dropdowns of user strings (feature names, columns, texts) ---
# dcc.Dropdown indexes every substring of each option's value and string label in plain JS objects
# (js-search): a value or label containing "__proto__" writes to Object.prototype and throws
# ("Immutable prototype object"), breaking the page. So an option's value never holds "_" (it is
# encoded), its label is a component (not indexed), and its search text has "__proto__" broken up.
_VALUE_CODES = {"%": "%25", "_": "%5F"}
_VALUE_DECODE = re.compile("%(25|5F)")
_PROTO = "__proto__"


def choice_value(name) -> str:
    """The dropdown value of a user string: ``%`` and ``_`` percent-encoded, so it can hold no ``__proto__``."""
    return "".join(_VALUE_CODES.get(ch, ch) for ch in str(name))


def choice_name(value):
    """The user string a :func:`choice_value` stands for (``None`` stays ``None``)."""
    if value is None:
        return None
    return _VALUE_DECODE.sub(lambda m: "%" if m.group(1) == "25" else "_", str(value))


def choice_names(values) -> list[str]:
    """:func:`choice_name` of every value of a multi-select (``None`` reads as no value)."""
    return [choice_name(v) for v in values or []]


def _searchable(text: str) -> str:
    """``text`` lower-cased as the dropdown's search compares it, with every ``__proto__`` broken up."""
    text = str(text).lower()
    while _PROTO in text:
        text = text.replace(_PROTO, "__proto_ _")
    return text


def choice_options(names) -> list[dict]:
    """``dcc.Dropdown`` options of user strings (``None`` items left out).

    Parameters
    ----------
    names : iterable
        Feature or column names, shown as typed.

    Returns
    -------
    list of dict
        ``{"label": Span(name), "value": choice_value(name), "search": ...}``; read the selection back with
        :func:`choice_name` / :func:`choice_names`.
    """
    return [{"label": html.Span(str(n)), "value": choice_value(n), "search": _searchable(n)}
            for n in names if n is not None]


def labelled_options(options: list[dict]) -> list[dict]:
    """Options ``{"label": user text, "value": number}`` made safe for ``dcc.Dropdown`` (values kept)."""
    return [{"label": html.Span(str(o["label"])), "value": o["value"], "search": _searchable(o["label"])}
            for o in options]
