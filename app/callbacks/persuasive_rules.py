"""Persuasive page, rules section: one set of controls drives the shown rules, their cost and the tradeoff."""
import dash_bootstrap_components as dbc
from dash import Input, Output, State, callback, html
from dash.exceptions import PreventUpdate

from app.shell import ids
from app.callbacks.drawn import drawn_once
from app.views.components import card, empty_figure, error_alert, fmt, gilpin_badge, metric, metric_row
from explainers.persuasive import gilpin_label
from workspace.errors import CandorError
from app.views.figures_persuasive import operator_text, rule_tradeoff
from app.services import persuasive_rules


@callback(Output(ids.RULES_SOURCE, "options"), Output(ids.RULES_SOURCE, "value"), Input(ids.URL, "pathname"),
          State(ids.RULES_SOURCE, "value"))
def show_rule_sources(_pathname, chosen=None):
    """:func:`load_rule_sources`, kept per process and choice: it read the frontier back from its JSON twice a visit."""
    return _sources_drawn(chosen if isinstance(chosen, str) else None)


def load_rule_sources(_pathname, chosen=None):
    """The frontier's surrogates; the one chosen by the page's link (``?rules=cart|10``) if it is one of them."""
    options = persuasive_rules.surrogate_choices()
    return options, chosen if chosen in [o["value"] for o in options] else persuasive_rules.default_choice()


_sources_drawn = drawn_once()(lambda chosen: load_rule_sources(None, chosen))


@callback(Output(ids.RULES_SHOWN, "children"), Output(ids.RULES_COST, "children"), Output(ids.RULES_TRADEOFF, "figure"),
          Input(ids.RULES_SOURCE, "value"), Input(ids.RULES_KEEP, "value"), Input(ids.RULES_ROUND, "value"),
          Input(ids.RULES_PLAIN, "value"))
def show_rules(choice, keep, round_sig, plain):
    """:func:`render_rules`, drawn once per process and settings: every viewer opening the page is sent the same."""
    return render_rules(choice, keep, round_sig, plain, _rules_drawn)


def render_rules(choice, keep, round_sig, plain, draw=None):
    if not choice or keep is None:
        raise PreventUpdate
    try:
        return (draw or _draw_rules)(choice, int(keep), int(round_sig) if round_sig else None, bool(plain))
    except CandorError as err:
        return error_alert(str(err)), None, empty_figure(str(err))


def _draw_rules(choice, keep, round_sig, plain):
    v = persuasive_rules.rule_view(choice, keep, round_sig, plain)
    s = v.simplification
    b, a, cb, ca = s.fidelity_before, s.fidelity_after, s.complexity_before, s.complexity_after
    shown = card(f"Rules a reader is shown ({len(s.rules)} of {len(s.rules) + len(s.dropped)})", [
        html.Div(gilpin_badge(gilpin_label(s)), className="mb-2"),
        html.Ul([html.Li(r.text(), className="rule-text") for r in s.rules] or [html.Li("(no rule)")]),
        html.Div(f"Otherwise: {s.default_label}", className="rule-text")],
        source=operator_text(s.operators))
    cost = card("What the rule simplification costs", metric_row([
        metric("Agreement with the model", f"{fmt(a['agreement'])} vs {fmt(b['agreement'])}",
               f"shown vs all rules, {v.n_eval} held-out rows"),
        metric("Coverage", f"{a['coverage']:.1%} vs {b['coverage']:.1%}", "rows some shown rule fires on"),
        metric("Predicates", f"{ca['numpreds']} vs {cb['numpreds']}"),
        metric("Rows whose label changed", str(len(s.changed_rows))),
    ]), source="Persuasive layer after Herman 2017 (arXiv 1711.07414): O5 keeps the top rules by (coverage, precision) and recomputes the default label; "
               "O2 rounds thresholds; O8 phrases predicates (lossless phrases here); agreement re-measured after each")
    return shown, cost, rule_tradeoff(v, len(s.rules))


_rules_drawn = drawn_once()(_draw_rules)
