"""Persuasive layer, rules: docs/methods.md, "Tests with exact oracles", T8 (O5 pruning), O2 thresholds, O8 phrases, on MUSE and CART surrogates."""
import numpy as np
import pandas as pd
import pytest

import explainers.persuasive as P
from explainers import Predicate
from explainers.muse import CartSurrogate, evaluate_rule_set

# docs/methods.md, "Tests with exact oracles", T7: eight points (A, B, C | B(x))
T7 = pd.DataFrame({"A": [1, 1, 1, 1, 0, 0, 0, 0], "B": [1, 1, 0, 0, 1, 0, 0, 0], "C": [0, 1, 1, 0, 0, 1, 0, 1]})
Y7 = np.array([1, 1, 0, 0, 1, 0, 0, 1])
A1, A0, B1, C1 = (Predicate("A", "==", 1), Predicate("A", "==", 0), Predicate("B", "==", 1), Predicate("C", "==", 1))


@pytest.fixture(scope="module")
def t7_rules():
    muse = pytest.importorskip("explainers.muse")
    return muse.make_rule_set([((A1,), (B1,), 1), ((A1,), (C1,), 0), ((A0,), (B1,), 1)], T7, Y7)


def test_t8_pruning_by_coverage_on_the_muse_toy(t7_rules):
    s = P.prune_rules(t7_rules, T7, Y7, min_coverage=0.2)
    assert s.fidelity_before["agreement"] == pytest.approx(0.875, abs=1e-9)
    assert s.fidelity_after["agreement"] == pytest.approx(0.75, abs=1e-9)
    assert s.fidelity_after["agreement_lost"] == pytest.approx(0.125, abs=1e-9)
    assert s.default_label == 0 and s.dropped == (2,)
    np.testing.assert_array_equal(P.rule_predictions(s.rules, s.default_label, T7).astype(int), [1, 1, 0, 0, 0, 0, 0, 0])
    assert (s.complexity_before["numpreds"], s.complexity_after["numpreds"]) == (6, 4)
    assert (s.complexity_before["n_items"], s.complexity_after["n_items"]) == (3, 2)
    assert (s.complexity_before["n_neighborhoods"], s.complexity_after["n_neighborhoods"]) == (2, 1)
    assert s.fidelity_after["coverage_lost"] == pytest.approx(1 / 8) and s.changed_rows.tolist() == [4]
    assert s.operators == (("prune", {"min_coverage": 0.2}),)


def test_agreement_before_matches_the_muse_package(t7_rules):
    from explainers.muse import evaluate_rule_set

    s = P.prune_rules(t7_rules, T7, Y7, min_coverage=0.0)
    assert s.fidelity_before["agreement"] == evaluate_rule_set(t7_rules, T7, Y7).agreement
    assert s.fidelity_after["agreement"] == s.fidelity_before["agreement"] and s.dropped == ()


def test_top_m_rules_and_chained_operators(t7_rules):
    s = P.prune_rules(t7_rules, T7, Y7, max_rules=1)
    assert len(s.rules) == 1 and s.rules[0].predicates == (A1, B1)
    worded = P.plain_language(s, T7, Y7)
    assert worded.rules[0].text() == "IF A is 1 AND B is 1 THEN 1"
    assert worded.fidelity_after["lossless"] == 1.0
    assert worded.fidelity_after["agreement"] == s.fidelity_after["agreement"]
    assert [n for n, _ in worded.operators] == ["prune", "plain_language"] and worded.previous is s


@pytest.fixture(scope="module")
def cart(bc, gb_model):
    X, _, train, test = bc
    labels = gb_model.predict(X)
    return CartSurrogate(max_leaf_nodes=8).fit(X.iloc[train], labels[train]).rule_set_, X.iloc[test], labels[test]


def test_cart_surrogate_rules_reproduce_its_fidelity(cart):
    surrogate, Xe, ye = cart
    s = P.prune_rules(surrogate, Xe, ye, min_coverage=0.0)
    assert s.fidelity_before["agreement"] == pytest.approx(evaluate_rule_set(surrogate, Xe, ye).agreement, abs=1e-12)
    assert s.fidelity_before["coverage"] == 1.0


def test_cart_pruning_costs_agreement_and_predicates(cart):
    surrogate, Xe, ye = cart
    s = P.prune_rules(surrogate, Xe, ye, min_coverage=0.1)
    assert 0 < len(s.rules) < len(surrogate.rules)
    assert s.complexity_after["n_predicates"] < s.complexity_before["n_predicates"] == surrogate.train.numpreds
    assert s.fidelity_after["agreement"] <= s.fidelity_before["agreement"]
    assert s.fidelity_after["coverage"] < 1.0


def test_rounded_thresholds_are_nice_and_measured(cart):
    surrogate, Xe, ye = cart
    s = P.round_thresholds(surrogate, Xe, ye, sig=2)
    thresholds = [p.threshold for r in s.rules for p in r.predicates]
    assert all(t == P.nice_number(t, 2) for t in thresholds)
    assert P.nice_number(16.795) == 17.0 and P.nice_number(0.1425) == 0.14
    assert abs(s.fidelity_after["agreement"] - s.fidelity_before["agreement"]) < 0.1


def test_lossy_phrase_changes_agreement():
    lex = {B1: P.Phrase("B is set", Predicate("B", "in", (0, 1)))}  # a reader ignores B
    s = P.plain_language(P.prune_rules(_toy(), T7, Y7, min_coverage=0.0), T7, Y7, lexicon=lex)
    assert s.fidelity_after["lossless"] == 0.0
    assert (s.fidelity_before["agreement"], s.fidelity_after["agreement"]) == (0.875, 0.5)


def _toy():
    """The T7 rules as flat rules (empty descriptors): supports 2, 2, 1 and precisions 1, 0.5, 1."""
    from explainers.muse import make_rule_set

    rs = make_rule_set([((), (A1, B1), 1), ((), (A1, C1), 0), ((), (A0, B1), 1)], T7, Y7, method="cart")
    assert [(r.support, r.precision) for r in rs.rules] == [(2, 1.0), (2, 0.5), (1, 1.0)] and rs.default_label == 0
    return rs


def test_t8_holds_for_flat_surrogate_rules_too():
    s = P.prune_rules(_toy(), T7, Y7, min_coverage=0.2)
    assert (s.fidelity_before["agreement"], s.fidelity_after["agreement"]) == (0.875, 0.75)


def test_chained_pruning_reports_dropped_rules_by_parent_index(t7_rules):
    once = P.prune_rules(t7_rules, T7, Y7, min_coverage=0.2)
    twice = P.prune_rules(P.round_thresholds(once, T7, Y7), T7, Y7, max_rules=1)
    assert once.dropped == (2,) and twice.dropped == (1, 2) and twice.parent is t7_rules
    assert [n for n, _ in twice.operators] == ["prune", "round_thresholds", "prune"]
