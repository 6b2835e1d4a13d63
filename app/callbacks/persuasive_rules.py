"""Persuasive page, rules section: one set of controls drives the shown rules, their cost and the tradeoff."""
from dash import Input, Output, State, callback

from app import services
from app.services import persuasive_rules
from app.shell import ids
from app.views.drawn import drawn_once
from app.views.persuasive_rules import OPENING, draw_rules, link_note, load_rule_sources, render_rules
from workspace.errors import CandorError


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


def _draw_opening_rules() -> None:
    """Keep the rules section at the page's opening controls (:data:`~app.views.persuasive_rules.OPENING`, the
    default surrogate) drawn, or nothing when the page does not apply (it says why when opened)."""
    try:
        _rules_drawn(persuasive_rules.default_choice(), *OPENING)
    except CandorError:
        pass


services.lazy("persuasive_opening_rules", _draw_opening_rules, warm="last")
"""Drawn by the warm-up after the default frontier (before gunicorn forks its workers: one drawing for both). Each
worker drew it on its first visit to the Persuasive page, and every viewer opening the page meanwhile drew it again:
17-40 % of a worker's samples (py-spy) in the first 25 s of 20 viewers at load 13-18 (issue 27)."""
