"""Persuasive page, rules section: pruning a frontier surrogate, called as plain functions on the sample."""

import pytest

from app.callbacks import persuasive_rules as cb
from app.views import persuasive_rules as rules_view
from app.services import persuasive_rules
from tests.markdown_render import component_text


@pytest.fixture(scope="module")
def sources(sample_workspace, tmp_path_factory):
    import os

    os.environ["CANDOR_CACHE_DIR"] = str(tmp_path_factory.mktemp("cache"))
    return rules_view.load_rule_sources("/persuasive")


def _text(component) -> str:
    """The component as JSON, its Markdown panels as the text a reader sees (tests/markdown_render.py)."""
    return component_text(component)


def test_sources_are_the_frontier_and_default_has_most_rules(sources):
    options, default = sources
    assert len(options) == 16 and default.startswith("cart|")  # MUSE, CART, CART as a decision set, flat x 4
    assert any(o["value"] == default for o in options)


def test_keeping_every_rule_costs_nothing_and_fewer_costs_agreement(sources):
    _, choice = sources
    full = persuasive_rules.rule_view(choice, 30, None, False)
    n = len(full.simplification.parent.rules)
    assert full.simplification.fidelity_after["agreement"] == full.simplification.fidelity_before["agreement"]
    assert full.agreement_curve[-1] == full.simplification.fidelity_before["agreement"]
    assert len(full.kept_counts) == n + 1 and full.predicates_curve[0] == 0
    shown, cost, fig = rules_view.render_rules(choice, 2, None, [])
    assert _text(shown).count("IF ") == 2 and "Agreement with the model" in _text(cost) and "all rules" in _text(cost)
    assert fig.layout.shapes[0].x0 == 2
    one = persuasive_rules.rule_view(choice, 1, 2, True)
    assert [name for name, _ in one.simplification.operators] == ["prune", "round_thresholds", "plain_language"]


def test_unknown_surrogate_is_a_message(sources):
    shown, _, _ = rules_view.render_rules("muse|999", 3, None, [])
    assert "no surrogate 'muse|999' in the frontier" in _text(shown)


def test_the_sources_are_read_once_per_process_and_choice(sources, monkeypatch):
    """Every visit asked the frontier back from its JSON twice (11-27 ms of CPU, issue 27): the registered callback
    keeps the answer per choice; a choice that is not a surrogate of the frontier gets the default, as before."""
    cb._sources_drawn.cache_clear()
    calls = []
    real = persuasive_rules.surrogate_choices
    monkeypatch.setattr(persuasive_rules, "surrogate_choices", lambda: calls.append(1) or real())
    options, default = sources
    assert cb.show_rule_sources("/persuasive", None) == (options, default, None)
    assert cb.show_rule_sources("/persuasive", None) == (options, default, None) and len(calls) == 1
    assert cb.show_rule_sources("/persuasive", options[0]["value"])[1:] == (options[0]["value"], None)
    assert cb.show_rule_sources("/persuasive", ["forged"]) == (options, default, None) and len(calls) == 2
    cb._sources_drawn.cache_clear()


def test_a_links_surrogate_not_on_the_frontier_is_said_in_one_line(sources):
    """``?rules=muse|7`` (the frontier's budgets are 2, 5, 10, 20) showed the default rules with nothing saying so
    (issue 25)."""
    options, default = sources
    shown, value, note = cb.show_rule_sources("/persuasive", "muse|7")
    label = next(o["label"] for o in options if o["value"] == default)
    assert (shown, value) == (options, default) and default != "muse|7"
    assert note.children == f"The link's surrogate muse|7 is not on the frontier; the rules below are of {label}."


def test_the_rules_are_judged_on_the_held_out_rows_without_copying_the_training_rows(sources, monkeypatch):
    """Pruning, rounding and phrasing read only the held-out rows: the training rows' copy (21 MB on Adult) was most
    of the rules' warm-up peak memory (issue 23). Oracle: the split each call asks for, and the rows it gets."""
    from app.services import surrogates

    asked, real = [], surrogates._split
    monkeypatch.setattr(persuasive_rules, "_split", lambda *a, **k: asked.append((a, k)) or real(*a, **k))
    _, choice = sources
    view = persuasive_rules.rule_view(choice, 2, 2, True)
    assert asked == [((), {"train_rows": False})]
    X_train, y_train, X_eval, y_eval = real(train_rows=False)
    full = real()
    assert X_train is None and X_eval.equals(full[2]) and list(y_eval) == list(full[3]) and list(y_train) == list(full[1])
    assert len(X_eval) == len(surrogates.workspace().test_idx) and view.simplification.fidelity_after["agreement"] >= 0
