"""Components of the Surrogate page: the summary metrics and the rules grouped by neighborhood."""
from __future__ import annotations

import dash_bootstrap_components as dbc
from dash import html

from app.components import card, fmt, gilpin_badge, metric, metric_row
from explainers.persuasive import gilpin_label
from explainers.rules import rule_text


def _shown(text: str) -> str:
    """A conjunction as the service rendered it (the user's levels and dates), "always" when empty."""
    return text or "always"


def surrogate_summary(view) -> dbc.Card:
    """Held-out agreement, ambiguity and default shares, and complexity of the shown rule set."""
    q, rs = view.heldout, view.rule_set
    per_class = " · ".join(f"{c}: {fmt(a)}" for c, a in zip(view.detail.classes, view.detail.per_class_agreement))
    return card([f"{rs.method.upper()} surrogate ", gilpin_badge(gilpin_label(rs))], metric_row([
        metric("Agreement with the model", fmt(q.agreement), f"on {view.n_eval} held-out rows"),
        metric("Per class", per_class),
        metric("Rules", str(q.size)), metric("Predicates", str(q.numpreds)),
        metric("Neighborhoods", str(q.numdsets)),
        metric("Ambiguous rows", f"{q.ambiguous_share:.1%}", "≥ 2 rules of different labels fire"),
        metric("Default rule", f"{q.default_share:.1%}", f"no rule fires → {rs.default_label}"),
    ]), source=view.source)


def rules_by_neighborhood(view) -> dbc.Card:
    """One block per neighborhood descriptor with its decision rules, support, precision, held-out agreement."""
    rs = view.rule_set
    blocks = []
    for k, descriptor in enumerate(rs.neighborhoods):
        rows = [html.Tr([html.Td(rule_text([view.rule_texts[i]], label=r.label, always="always"), className="rule-text"),
                         html.Td(r.support), html.Td(fmt(r.precision, 2)), html.Td(fmt(view.rule_agreement[i], 2)),
                         html.Td(int(view.rule_heldout_support[i]))])
                for i, r in enumerate(rs.rules) if r.descriptor == descriptor]
        head = "everywhere" if not descriptor else _shown(view.neighborhood_texts[k])
        blocks.append(html.Div([html.Div(["If ", html.Span(head, className="rule-text fw-semibold"), ":"],
                                         className="neighborhood-head"),
                                dbc.Table([html.Thead(html.Tr([html.Th("Decision rule"), html.Th("Support"),
                                                               html.Th("Precision"), html.Th("Held-out agreement"),
                                                               html.Th("Held-out rows")])),
                                           html.Tbody(rows)], size="sm", className="rules-table mb-2")],
                               className="neighborhood"))
    blocks.append(html.Div(f"Otherwise (default rule): {rs.default_label}", className="rule-text neighborhood-head"))
    return card("Rules, grouped by neighborhood (support and precision on training rows)", blocks)
