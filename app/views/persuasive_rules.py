"""Persuasive page, rules section: the rule sources, the shown rules, what the simplification costs, the tradeoff."""
import dash_bootstrap_components as dbc
from dash import html
from dash.exceptions import PreventUpdate

from app.services import persuasive_rules
from app.views.components import card, empty_figure, error_alert, fmt, gilpin_badge
from app.views.markdown import markdown_panel, md_table, md_text
from app.views.figures_persuasive import operator_text, rule_tradeoff
from explainers.persuasive import gilpin_label
from workspace.errors import CandorError

OPENING = (3, None, False)
"""The rules section's controls when the page opens, as :func:`draw_rules` takes them after the surrogate: rules
shown (the page's "Rules shown" box), thresholds exact (no rounding), predicates not phrased."""


def load_rule_sources(_pathname, chosen=None):
    """The frontier's surrogates; the one chosen by the page's link (``?rules=cart|10``) if it is one of them."""
    options = persuasive_rules.surrogate_choices()
    return options, chosen if chosen in [o["value"] for o in options] else persuasive_rules.default_choice()


def link_note(chosen, options, value):
    """One line when a link's surrogate (``?rules=muse|7``) is not on the frontier and ``value`` is shown instead
    (issue 25: a link shows the view it names, or says so); None otherwise."""
    if not isinstance(chosen, str) or chosen == value:
        return None
    label = next((o["label"] for o in options if o["value"] == value), value)
    return dbc.Alert(f"The link's surrogate {chosen[:40]} is not on the frontier; the rules below are of {label}.",
                     color="warning", className="py-1 px-2 mb-2 small")


def render_rules(choice, keep, round_sig, plain, draw=None):
    """The shown rules, their cost and the tradeoff at the controls, or why not (``draw``: a kept drawing)."""
    if not choice or keep is None:
        raise PreventUpdate
    try:
        return (draw or draw_rules)(choice, int(keep), int(round_sig) if round_sig else None, bool(plain))
    except CandorError as err:
        return error_alert(str(err)), None, empty_figure(str(err))


def draw_rules(choice, keep, round_sig, plain):
    """:func:`render_rules`' panels from :func:`app.services.persuasive_rules.rule_view` (raises CandorError)."""
    v = persuasive_rules.rule_view(choice, keep, round_sig, plain)
    s = v.simplification
    b, a, cb, ca = s.fidelity_before, s.fidelity_after, s.complexity_before, s.complexity_after
    rules = "\n".join(f"- {md_text(r.text())}" for r in s.rules) or md_text("(no rule)")
    shown = card(f"Rules a reader is shown ({len(s.rules)} of {len(s.rules) + len(s.dropped)})", [
        html.Div(gilpin_badge(gilpin_label(s)), className="mb-2"),
        markdown_panel(rules, "rule-text"),  # one component (app.views.markdown), not one per rule
        html.Div(f"Otherwise: {s.default_label}", className="rule-text")],
        source=operator_text(s.operators))
    table = md_table(("measure", "shown rules", "all rules", "note"), [
        ("Agreement with the model", fmt(a["agreement"]), fmt(b["agreement"]), f"{v.n_eval} held-out rows"),
        ("Coverage", f"{a['coverage']:.1%}", f"{b['coverage']:.1%}", "rows some shown rule fires on"),
        ("Predicates", ca["numpreds"], cb["numpreds"], ""),
        ("Rows whose label changed", len(s.changed_rows), "", "")], right=(False, True, True, False))
    cost = card("What the rule simplification costs", markdown_panel(table, "cost-table"),
                source="Persuasive layer after Herman 2017 (arXiv 1711.07414): O5 keeps the top rules by (coverage, "
                       "precision) and recomputes the default label; O2 rounds thresholds; O8 phrases predicates "
                       "(lossless phrases here); agreement re-measured after each")
    return shown, cost, rule_tradeoff(v, len(s.rules))
