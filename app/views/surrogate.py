"""Components of the Surrogate page: the summary metrics, the rules grouped by neighborhood, the frontier."""
from __future__ import annotations

import dash_bootstrap_components as dbc
from dash import html
from dash.exceptions import PreventUpdate

from app import services
from app.views import figures
from app.views.components import card, empty_figure, error_alert, fmt, gilpin_badge, metric, metric_row
from explainers.persuasive import gilpin_label
from explainers.rules import rule_text
from workspace.errors import CandorError


def _shown(text: str) -> str:
    """A conjunction as the service rendered it (the user's levels and dates), "always" when empty."""
    return text or "always"


def settings_note(line: str) -> dbc.Alert:
    """The one line saying the surrogate or frontier shown is not of the controls' settings
    (:func:`app.services.surrogate_links.settings_note`)."""
    return dbc.Alert(line, color="warning", className="py-1 px-2 mb-2 small surrogate-settings-note")


def trivial_warning(view):
    """An alert when the surrogate does not beat "always the majority label" on the held-out rows, a
    note when the trivial agreement lies inside the surrogate's 95 % interval; else None."""
    d, q = view.detail, view.heldout
    triv = getattr(d, "trivial_agreement", float("nan"))
    if triv != triv:
        return None
    if not q.agreement > triv:
        return dbc.Alert(f"This surrogate agrees with the model on {fmt(q.agreement)} of held-out rows; always "
                         f"answering {d.trivial_label} agrees on {fmt(triv)}. It does not beat the trivial "
                         "surrogate, so its rules explain nothing the majority label does not.",
                         color="warning", className="mb-2")
    low = getattr(q, "agreement_low", float("nan"))
    if low == low and low <= triv:
        return dbc.Alert(f"Always answering {d.trivial_label} agrees on {fmt(triv)}, inside this surrogate's 95 % "
                         f"interval ({fmt(low)} to {fmt(q.agreement_high)}): on {view.n_eval} held-out rows it is "
                         "not clearly better than the trivial surrogate.", color="secondary", className="mb-2")
    return None


def _with_ci(q) -> str:
    low, high = getattr(q, "agreement_low", float("nan")), getattr(q, "agreement_high", float("nan"))
    return fmt(q.agreement) if low != low else f"{fmt(q.agreement)} [{fmt(low)}, {fmt(high)}]"


def surrogate_summary(view) -> dbc.Card:
    """Held-out agreement (Wilson 95 % interval), the trivial surrogate's agreement, ambiguity and
    default shares, and complexity of the shown rule set; a warning first if it does not beat the
    trivial surrogate."""
    q, rs = view.heldout, view.rule_set
    per_class = " · ".join(f"{c}: {fmt(a)}" for c, a in zip(view.detail.classes, view.detail.per_class_agreement))
    triv = getattr(view.detail, "trivial_agreement", float("nan"))
    warning = trivial_warning(view)
    metrics = metric_row([
        metric("Agreement with the model", _with_ci(q), f"on {view.n_eval} held-out rows (95% Wilson interval)"),
        metric("Trivial surrogate", fmt(triv), f"always {view.detail.trivial_label}"),
        metric("Per class", per_class),
        metric("Rules", str(q.size)), metric("Predicates", str(q.numpreds)),
        metric("Neighborhoods", str(q.numdsets)),
        metric("Ambiguous rows", f"{q.ambiguous_share:.1%}", "≥ 2 rules of different labels fire"),
        metric("Default rule", f"{q.default_share:.1%}", f"no rule fires → {rs.default_label}"),
    ])
    return card([f"{rs.method.upper()} surrogate ", gilpin_badge(gilpin_label(rs))],
                ([warning] if warning else []) + [metrics], source=view.source)


def rules_by_neighborhood(view) -> dbc.Card:
    """One block per neighborhood descriptor with its decision rules, support, precision, held-out agreement."""
    rs = view.rule_set
    blocks = []
    for k, descriptor in enumerate(rs.neighborhoods):
        rows = [html.Tr([html.Td(rule_text([view.rule_texts[i]], label=r.label), className="rule-text"),
                         html.Td(r.support), html.Td(fmt(r.precision, 2)), html.Td(fmt(view.rule_agreement[i], 2)),
                         html.Td(int(view.rule_heldout_support[i]))])
                for i, r in enumerate(rs.rules) if r.descriptor == descriptor]
        # a flat set (one neighborhood, no descriptor) has no "If ...:" header ("If everywhere:" read oddly)
        head = (html.Div("Rules for every row (no neighborhood)", className="neighborhood-head")
                if not descriptor else
                html.Div(["If ", html.Span(_shown(view.neighborhood_texts[k]), className="rule-text fw-semibold"), ":"],
                         className="neighborhood-head"))
        blocks.append(html.Div([head,
                                dbc.Table([html.Thead(html.Tr([html.Th("Decision rule"), html.Th("Support"),
                                                               html.Th("Precision"), html.Th("Held-out agreement"),
                                                               html.Th("Held-out rows")])),
                                           html.Tbody(rows)], size="sm", className="rules-table mb-2")],
                               className="neighborhood"))
    blocks.append(html.Div(f"Otherwise (default rule): {rs.default_label}", className="rule-text neighborhood-head"))
    return card("Rules, grouped by neighborhood (support and precision on training rows)", blocks)


def render_surrogate(key, draw=None):
    """The chosen surrogate's summary, rules and confusion figure, or why not (``draw``: a kept drawing)."""
    if not key:
        raise PreventUpdate
    try:
        return (draw or draw_surrogate)(key)
    except CandorError as err:
        return error_alert(str(err)), None, empty_figure(str(err))


def draw_surrogate(key):
    """:func:`render_surrogate`'s panels from :func:`app.services.muse_view` (raises CandorError)."""
    view = services.muse_view(key)
    return surrogate_summary(view), rules_by_neighborhood(view), figures.confusion(view.detail)


def render_frontier(frontier_key, key, draw=None):
    """The frontier figure with ``key`` marked, or why not (``draw``: a kept drawing)."""
    if not frontier_key:
        return empty_figure("computing the frontier (MUSE, CART and a flat set at 2, 5, 10 and 20 rules) ...")
    try:
        return (draw or draw_frontier)(frontier_key, key)
    except CandorError as err:
        return empty_figure(str(err))


def draw_frontier(frontier_key, key):
    """:func:`render_frontier`'s figure from :func:`app.services.frontier` (raises CandorError)."""
    return figures.frontier(services.frontier(frontier_key), selected=key)
