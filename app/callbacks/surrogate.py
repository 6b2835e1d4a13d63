"""Surrogate page callbacks."""
import dash_bootstrap_components as dbc
from dash import Input, Output, callback, html

from app import figures, ids, services
from app.components import card, fmt, metric, metric_row
from explainers import rule_text


@callback(Output(ids.SURROGATE_SUMMARY, "children"), Output(ids.SURROGATE_RULES, "children"),
          Output(ids.SURROGATE_CURVE, "figure"), Input(ids.URL, "pathname"))
def render_surrogate(_pathname):
    s, curve = services.surrogate()
    summary = card("Global rule surrogate", metric_row([
        metric("Agreement with the model", fmt(s.fidelity.value), f"on {s.fidelity.n_samples} held-out rows"),
        metric("Rules", str(s.n_rules)), metric("Predicates", str(s.complexity)),
    ]), source=s.source)
    rows = [html.Tr([html.Td(rule_text(r), className="rule-text"), html.Td(r.support), html.Td(fmt(r.coverage, 2)),
                     html.Td(fmt(r.precision, 2))]) for r in sorted(s.rules, key=lambda r: -r.support)]
    table = dbc.Table([html.Thead(html.Tr([html.Th("Rule"), html.Th("Support"), html.Th("Coverage"),
                                           html.Th("Precision")])), html.Tbody(rows)],
                      size="sm", striped=True, className="rules-table")
    rules = card("Rules (support, coverage and precision on training rows)", table)
    return summary, rules, figures.surrogate_curve(curve, current_rules=s.n_rules)
