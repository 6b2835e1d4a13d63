"""Oracle tests for the MUSE two-level decision sets (docs/methods.md, "Rule surrogates: MUSE and CART" and "Tests with exact oracles", T6/T7)."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st
from sklearn.exceptions import NotFittedError
from sklearn.tree import DecisionTreeClassifier

from explainers.muse import (CartSurrogate, FlatDecisionSet, TwoLevelDecisionSet, TwoLevelRule, TwoLevelRuleSet,
                             agreement_detail, evaluate_rule_set, make_rule_set, predict_rule_set,
                             surrogate_frontier)
from explainers.types import Predicate

FAST = dict(lambdas=(0.1, 0.1, 0.1, 1.0, 2.0), n_rounds=2)


def P(f, op, t):
    return Predicate(f, op, t)


@pytest.fixture
def t7():
    X = pd.DataFrame({"A": [1, 1, 1, 1, 0, 0, 0, 0], "B": [1, 1, 0, 0, 1, 0, 0, 0], "C": [0, 1, 1, 0, 0, 1, 0, 1]})
    y = np.array([1, 1, 0, 0, 1, 0, 0, 1])
    triples = [((P("A", "==", 1),), (P("B", "==", 1),), 1),
               ((P("A", "==", 1),), (P("C", "==", 1),), 0),
               ((P("A", "==", 0),), (P("B", "==", 1),), 1)]
    return X, y, triples


def test_t7_two_level_metrics(t7):
    X, y, triples = t7
    rs = make_rule_set(triples, X, y)
    q = rs.train
    assert [r.support for r in rs.rules] == [2, 2, 1]
    assert [r.precision for r in rs.rules] == pytest.approx([1.0, 0.5, 1.0], abs=1e-9)
    assert (q.disagreement, q.cover, q.ruleoverlap, q.numpreds, q.size) == (1, 4, 1, 6, 3)
    assert (q.maxwidth, q.numdsets, q.featureoverlap) == (1, 2, 0)
    assert rs.default_label == 0
    assert predict_rule_set(rs, X).tolist() == [1, 1, 0, 0, 1, 0, 0, 0]
    assert q.agreement == pytest.approx(0.875, abs=1e-9)
    assert q.ambiguous_share == pytest.approx(1 / 8) and q.default_share == pytest.approx(4 / 8)
    assert evaluate_rule_set(rs, X, y) == q


def test_t7_featureoverlap_of_shared_feature(t7):
    X, y, _ = t7
    rs = make_rule_set([((P("A", "==", 1),), (P("A", "==", 1), P("B", "==", 0)), 0)], X, y)
    assert rs.train.featureoverlap == 1


def test_t6_empty_rule_set_gives_majority_share():
    X = pd.DataFrame({"x": np.arange(8.0)})
    y = np.array([0, 0, 0, 1, 0, 0, 1, 0])
    rs = make_rule_set([], X, y)
    assert rs.default_label == 0
    assert rs.train.agreement == pytest.approx(0.75, abs=1e-9)
    assert rs.train.default_share == 1.0


def test_t6_surrogate_of_its_own_rules_agrees_fully(t7):
    X, y, triples = t7
    rs = make_rule_set(triples, X, y)
    y_sur = predict_rule_set(rs, X)
    assert evaluate_rule_set(rs, X, y_sur).agreement == 1.0


def _rule_set(rules, default=0):
    q = make_rule_set([], pd.DataFrame({"x": [0.0]}), [0]).train
    return TwoLevelRuleSet("manual", tuple(rules), default, (0, 1), ("x",), q, {})


def test_conflict_resolution_order():
    X = pd.DataFrame({"x": [0.5, 5.0]})
    hi_prec = TwoLevelRule((), (P("x", ">", 0.0),), 0, 10, 0.1, 0.9)
    lo_prec = TwoLevelRule((), (P("x", ">", 0.0),), 1, 50, 0.5, 0.8)
    # 1. highest precision wins, whatever the order and coverage
    assert predict_rule_set(_rule_set([lo_prec, hi_prec]), X).tolist() == [0, 0]
    # 2. equal precision -> larger coverage
    big = TwoLevelRule((), (P("x", ">", 0.0),), 1, 50, 0.5, 0.9)
    assert predict_rule_set(_rule_set([hi_prec, big]), X).tolist() == [1, 1]
    # 3. equal precision and coverage -> lower index
    twin = TwoLevelRule((), (P("x", ">", 0.0),), 1, 10, 0.1, 0.9)
    assert predict_rule_set(_rule_set([twin, hi_prec]), X).tolist() == [1, 1]
    assert predict_rule_set(_rule_set([hi_prec, twin]), X).tolist() == [0, 0]
    # unanimous triples: no ambiguity; nothing fired: default label
    only_big = TwoLevelRule((), (P("x", ">", 1.0),), 1, 10, 0.1, 0.2)
    rs = _rule_set([only_big], default=0)
    assert predict_rule_set(rs, X).tolist() == [0, 1]
    d = agreement_detail(_rule_set([lo_prec, hi_prec]), X, [1, 0])
    assert d.ambiguous_share == 1.0 and d.agreement == 0.5


def _two_level_data(n=800, seed=0):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({
        "region": rng.choice(["north", "south"], size=n),
        "x": rng.uniform(0, 1, n), "z": rng.uniform(0, 1, n), "noise": rng.normal(size=n),
    })
    north = X.region.to_numpy() == "north"
    y = np.where(north, X.x.to_numpy() > np.quantile(X.x, 0.75), X.z.to_numpy() <= np.quantile(X.z, 0.25))
    return X, y.astype(int)


def test_known_two_level_rule_set_is_recovered():
    X, y = _two_level_data()
    sur = TwoLevelDecisionSet(max_rules=4, max_neighborhoods=2, features_of_interest=["region"], seed=0).fit(X, y)
    assert sur.rule_set_.train.agreement == 1.0
    assert sur.score(X, y) == 1.0
    assert {p.feature for r in sur.rules_ for p in r.descriptor} <= {"region"}
    got = {(r.descriptor, r.rule, r.label) for r in sur.rules_ if r.label == 1}
    assert ((P("region", "==", "north"),), (P("x", ">", float(np.quantile(X.x, 0.75))),), 1) in got
    assert sur.rule_set_.train.ambiguous_share == 0.0


def test_depth_two_tree_is_reproduced_by_cart():
    rng = np.random.default_rng(1)
    X = pd.DataFrame({"a": rng.normal(size=300), "b": rng.normal(size=300), "c": rng.choice(["u", "v"], 300)})
    tree = DecisionTreeClassifier(max_depth=2, random_state=0).fit(X[["a", "b"]], (X.a + X.b > 0.3).astype(int))
    y = tree.predict(X[["a", "b"]])
    cart = CartSurrogate(max_leaf_nodes=4).fit(X, y)
    assert cart.score(X, y) == 1.0
    assert cart.rule_set_.train.size == len(cart.rules_) <= 4
    assert cart.rule_set_.train.cover == 300 and cart.rule_set_.train.ruleoverlap == 0


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000), max_rules=st.integers(1, 6), max_width=st.integers(1, 3),
       max_nd=st.integers(1, 3), flat=st.booleans())
def test_budgets_are_never_exceeded(seed, max_rules, max_width, max_nd, flat):
    rng = np.random.default_rng(seed)
    n = 120
    X = pd.DataFrame({"a": rng.normal(size=n), "b": rng.integers(0, 5, n), "c": rng.choice(["p", "q", "r"], n)})
    y = rng.integers(0, 3, n)
    cls = FlatDecisionSet if flat else TwoLevelDecisionSet
    sur = cls(max_rules=max_rules, max_width=max_width, max_neighborhoods=max_nd, top_k=15, **FAST).fit(X, y)
    q = sur.rule_set_.train
    assert q.size == len(sur.rules_) <= max_rules
    if flat:
        assert all(not r.descriptor and len(r.rule) <= 2 * max_width for r in sur.rules_)
    else:
        assert q.maxwidth <= max_width and q.numdsets <= max_nd
        assert all(r.descriptor for r in sur.rules_)
    assert q.numpreds == sum(len(r.predicates) for r in sur.rules_)
    assert sur.quantities(X, y) == q


def test_same_seed_same_surrogate():
    X, y = _two_level_data(n=400, seed=3)
    y = np.where(np.random.default_rng(3).random(len(y)) < 0.1, 1 - y, y)
    a = TwoLevelDecisionSet(max_rules=5, seed=7).fit(X, y)
    b = TwoLevelDecisionSet(max_rules=5, seed=7).fit(X, y)
    assert a.rules_ == b.rules_ and a.default_label_ == b.default_label_
    assert a.rule_set_ == b.rule_set_
    assert a.validation_agreement_ == b.validation_agreement_


def test_errors_and_string_labels():
    X, y = _two_level_data(n=200)
    with pytest.raises(NotFittedError):
        TwoLevelDecisionSet().predict(X)
    with pytest.raises(ValueError, match="features_of_interest"):
        TwoLevelDecisionSet(features_of_interest=["nope"]).fit(X, y)
    with pytest.raises(ValueError, match="max_rules"):
        TwoLevelDecisionSet(max_rules=0).fit(X, y)
    labels = np.where(y == 1, "yes", "no")
    sur = TwoLevelDecisionSet(max_rules=4, **FAST).fit(X, labels)
    pred = sur.predict(X)
    assert set(pred) <= {"yes", "no"} and sur.default_label_ == "no"
    assert np.mean(pred == labels) == pytest.approx(sur.rule_set_.train.agreement)


def test_frontier_and_agreement_detail():
    X, y = _two_level_data(n=400, seed=5)
    fr = surrogate_frontier(X.iloc[:300], y[:300], X.iloc[300:], y[300:], budgets=(2, 4),
                            muse_params=dict(features_of_interest=["region"], **FAST))
    assert [(p.method, p.budget) for p in fr.points] == [("muse", 2), ("muse", 4), ("cart", 2), ("cart", 4),
                                                         ("cart_dl", 2), ("cart_dl", 4), ("flat", 2), ("flat", 4)]
    for p in fr.points:
        assert p.n_rules <= p.budget
        assert p.agreement == evaluate_rule_set(p.rule_set, X.iloc[300:], y[300:]).agreement
    best = fr.curve("muse")[-1]
    d = agreement_detail(best.rule_set, X.iloc[300:], y[300:])
    assert d.confusion.sum() == 100 and d.classes == (0, 1)
    assert d.agreement == pytest.approx(np.trace(d.confusion) / 100) == pytest.approx(best.agreement)
    rows = d.confusion.sum(axis=1)
    assert d.per_class_agreement == pytest.approx(np.diag(d.confusion) / rows)


def test_t7_rule_agreement_per_triple():
    """T7: precisions 1.0, 0.5, 1.0 on the eight points; a triple firing on no row gives NaN."""
    import numpy as np
    import pandas as pd

    from explainers.muse import make_rule_set, rule_agreement
    from explainers.types import Predicate as P

    X = pd.DataFrame({"A": [1, 1, 1, 1, 0, 0, 0, 0], "B": [1, 1, 0, 0, 1, 0, 0, 0], "C": [0, 1, 1, 0, 0, 1, 0, 1]})
    y = np.array([1, 1, 0, 0, 1, 0, 0, 1])
    rs = make_rule_set([((P("A", "==", 1),), (P("B", "==", 1),), 1), ((P("A", "==", 1),), (P("C", "==", 1),), 0),
                        ((P("A", "==", 0),), (P("B", "==", 1),), 1)], X, y)
    agree, support = rule_agreement(rs, X, y)
    np.testing.assert_allclose(agree, [1.0, 0.5, 1.0])
    assert support.tolist() == [2, 2, 1]
    agree2, support2 = rule_agreement(rs, X.iloc[[2, 3]], y[[2, 3]])
    assert np.isnan(agree2[0]) and agree2[1] == 1.0 and support2.tolist() == [0, 1, 0]


def test_pairs_are_counted_among_a_bounded_number_of_items():
    """A wide table must not build a pair table of every frequent item (it crashed the server at 10,000
    columns); with the cap, pairs come from the most frequent items only, counted exactly."""
    from explainers.muse._items import Item, mine_itemsets

    rng = np.random.default_rng(0)
    I = rng.random((60, 300)) < np.linspace(0.2, 0.9, 300)  # item j's frequency grows with j
    items = [Item(f"f{j}", (Predicate(f"f{j}", ">", 0.0),)) for j in range(300)]
    got = mine_itemsets(I, items, min_support=0.1, max_width=2, max_items_len3=10, max_pair_items=20)
    pairs = [k for k, _ in got if len(k) == 2]
    top20 = set(np.argsort(-I.mean(axis=0), kind="stable")[:20].tolist())
    assert pairs and all(set(k) <= top20 for k in pairs)
    # every pair of the top-20 items that is frequent is found, with its exact support
    want = {(i, j): (I[:, i] & I[:, j]).mean() for i in sorted(top20) for j in sorted(top20) if i < j}
    want = {k: v for k, v in want.items() if v >= 0.1}
    assert {k: v for k, v in got if len(k) == 2} == pytest.approx(want)
    assert len([k for k, _ in got if len(k) == 1]) == int((I.mean(axis=0) >= 0.1).sum())
