"""Small dash-bootstrap-components builders shared by the pages."""
from __future__ import annotations

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


def graph(component_id: str, height: int = 380) -> dcc.Loading:
    """A graph with a loading spinner and a fixed height (no layout jump)."""
    return dcc.Loading(dcc.Graph(id=component_id, config={"displaylogo": False}, style={"height": f"{height}px"}),
                       type="dot", delay_show=300)


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
    """A blank figure carrying ``message`` (wrapped at about 70 characters), for when a view does not apply or failed."""
    import textwrap

    import plotly.graph_objects as go

    fig = go.Figure()
    fig.add_annotation(text="<br>".join(textwrap.wrap(message, 70, break_long_words=False, break_on_hyphens=False)) or message,
                       showarrow=False, x=0.5, y=0.5, xref="paper", yref="paper")
    fig.update_layout(template="candor", xaxis_visible=False, yaxis_visible=False)
    return fig


# --- Persuasive (issue 4) ---
def gilpin_badge(label) -> html.Span:
    """The Gilpin et al. (2018) label of an explanation as a badge (METHODS §3)."""
    return dbc.Badge(f"Gilpin: {label.text()}", color="warning" if label.persuasive else "secondary",
                     class_name="me-1 gilpin-badge", title=f"default fidelity metric: {label.default_metric}")
