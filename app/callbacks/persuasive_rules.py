"""Persuasive page, rules section: one set of controls drives the shown rules, their cost and the tradeoff."""
from dash import Input, Output, State, callback

from app.shell import ids
from app.views.drawn import drawn_once
from app.views.persuasive_rules import draw_rules, link_note, load_rule_sources, render_rules


@callback(Output(ids.RULES_SOURCE, "options"), Output(ids.RULES_SOURCE, "value"), Output(ids.RULES_LINK_NOTE, "children"),
          Input(ids.URL, "pathname"), State(ids.RULES_SOURCE, "value"))
def show_rule_sources(_pathname, chosen=None):
    """:func:`load_rule_sources`, kept per process and choice: it read the frontier back from its JSON twice a visit;
    a link's surrogate that is not on the frontier gets the default and a line saying so (:func:`link_note`)."""
    chosen = chosen if isinstance(chosen, str) else None
    options, value = _sources_drawn(chosen)
    return options, value, link_note(chosen, options, value)


_sources_drawn = drawn_once()(lambda chosen: load_rule_sources(None, chosen))


@callback(Output(ids.RULES_SHOWN, "children"), Output(ids.RULES_COST, "children"), Output(ids.RULES_TRADEOFF, "figure"),
          Input(ids.RULES_SOURCE, "value"), Input(ids.RULES_KEEP, "value"), Input(ids.RULES_ROUND, "value"),
          Input(ids.RULES_PLAIN, "value"))
def show_rules(choice, keep, round_sig, plain):
    """:func:`render_rules`, drawn once per process and settings: every viewer opening the page is sent the same."""
    return render_rules(choice, keep, round_sig, plain, _rules_drawn)


_rules_drawn = drawn_once()(draw_rules)
