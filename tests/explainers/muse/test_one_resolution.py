"""One conflict resolution: every decision set predicts what a brute-force reading of its rules predicts.

The brute force evaluates each predicate row by row with Python comparisons and picks, among the
rules that fire, the one with the highest training precision, then coverage, then lowest index;
rows no rule fires on take the default label (docs/methods.md, "Rule surrogates: MUSE and CART").
It shares no code with ``explainers.muse._semantics``, so MUSE, the flat set, CART drawn as rules,
``predict_rule_set`` and the persuasive ``rule_predictions`` are all checked against one oracle.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

import explainers.persuasive as P
from explainers.muse import (CartSurrogate, FlatDecisionSet, TwoLevelDecisionSet, make_rule_set,
                             predict_rule_set)
from explainers.types import Predicate

FAST = dict(lambdas=(0.1, 0.1, 0.1, 1.0, 2.0), n_rounds=2)


def _holds(p: Predicate, v) -> bool:
    if p.op in ("<=", ">"):
        try:
            x = float(v)
        except (TypeError, ValueError):
            return False
        if math.isnan(x):
            return False
        return x <= float(p.threshold) if p.op == "<=" else x > float(p.threshold)
    if p.op == "==":
        return v == p.threshold
    return v in tuple(p.threshold)


def brute_force(rules, default, X: pd.DataFrame) -> list:
    """Labels by reading the rules one row at a time."""
    out = []
    for _, row in X.iterrows():
        fired = [i for i, r in enumerate(rules) if all(_holds(p, row[p.feature]) for p in r.predicates)]
        if not fired:
            out.append(default)
            continue
        best = min(fired, key=lambda i: (-rules[i].precision, -rules[i].coverage, i))
        out.append(rules[best].label)
    return out


@pytest.fixture(scope="module")
def bc_labels(bc, gb_model):
    X, _, train, test = bc
    labels = gb_model.predict(X)
    return X.iloc[train], labels[train], X.iloc[test], labels[test]


@pytest.mark.parametrize("make", [
    lambda: TwoLevelDecisionSet(max_rules=8, max_width=2, max_neighborhoods=3, **FAST),
    lambda: FlatDecisionSet(max_rules=8, max_width=2, **FAST),
    lambda: CartSurrogate(max_leaf_nodes=8),
    lambda: TwoLevelDecisionSet(max_rules=8, max_width=2, max_neighborhoods=3, prune_majority_label=False,
                                tree_candidates=False, **FAST),
], ids=["muse", "flat", "cart", "muse_itemsets_both_labels"])
def test_estimators_predict_as_the_brute_force_reading(bc_labels, make):
    X_tr, y_tr, X_te, y_te = bc_labels
    est = make().fit(X_tr, y_tr)
    rs = est.rule_set_
    for X in (X_tr, X_te):
        expected = brute_force(rs.rules, rs.default_label, X)
        assert est.predict(X).tolist() == expected
        assert predict_rule_set(rs, X).tolist() == expected
        shown = P.as_rules(rs)
        assert P.rule_predictions(shown, rs.default_label, X).tolist() == expected


def test_muse_on_breast_cancer_has_conflicts_to_resolve(bc_labels):
    """The check above is not vacuous: some rows fire rules of both labels (the itemset-only pool with
    both labels; tree candidates tend to give disjoint rules)."""
    X_tr, y_tr, _, _ = bc_labels
    est = TwoLevelDecisionSet(max_rules=8, max_width=2, max_neighborhoods=3, prune_majority_label=False,
                              tree_candidates=False, **FAST).fit(X_tr, y_tr)
    assert est.quantities(X_tr, y_tr).ruleoverlap > 0
    assert est.predict(X_tr).tolist() == brute_force(est.rules_, est.default_label_, X_tr)


def test_t7_and_hand_made_ties_resolve_as_the_brute_force():
    X = pd.DataFrame({"A": [1, 1, 1, 1, 0, 0, 0, 0], "B": [1, 1, 0, 0, 1, 0, 0, 0], "C": [0, 1, 1, 0, 0, 1, 0, 1]})
    y = np.array([1, 1, 0, 0, 1, 0, 0, 1])
    A1, A0 = Predicate("A", "==", 1), Predicate("A", "==", 0)
    B1, C1 = Predicate("B", "==", 1), Predicate("C", "==", 1)
    for triples in ([((A1,), (B1,), 1), ((A1,), (C1,), 0), ((A0,), (B1,), 1)],
                    [((), (C1,), 0), ((), (B1,), 1), ((A1,), (), 1), ((), (A0,), 0)]):
        rs = make_rule_set(triples, X, y)
        expected = brute_force(rs.rules, rs.default_label, X)
        assert predict_rule_set(rs, X).tolist() == expected
        pruned = P.prune_rules(rs, X, y, min_coverage=0.0)
        assert P.rule_predictions(pruned.rules, pruned.default_label, X).tolist() == expected
