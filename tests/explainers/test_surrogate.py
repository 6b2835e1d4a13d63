"""CART surrogate oracles: a surrogate of a depth-2 tree has agreement 1.0; rules partition the rows."""
import numpy as np
import pandas as pd
import pytest
from sklearn.tree import DecisionTreeClassifier

from explainers import conjunction_mask
from explainers.muse import CartSurrogate, evaluate_rule_set


@pytest.fixture(scope="module")
def depth2(bc):
    X, y, train, test = bc
    model = DecisionTreeClassifier(max_depth=2, random_state=0).fit(X.iloc[train], y.iloc[train])
    return X, train, test, model.predict(X)


def test_surrogate_of_depth2_tree_has_agreement_one():
    """docs/methods.md, "Tests with exact oracles": a surrogate fitted to a depth-2 tree's predictions agrees with it everywhere.

    Data where greedy CART can find the generating splits (x1 > 0.5 and x2 > 0.5 on a grid,
    x3 noise). On the real breast cancer table greedy CART does *not* recover a depth-2
    tree's labels with 4 leaves (held-out agreement 0.958): it picks another root split.
    """
    rng = np.random.default_rng(0)

    def grid(offset):
        g = np.linspace(0.0125, 0.9875, 40) + offset
        x1, x2 = np.meshgrid(g, g)
        return pd.DataFrame({"x1": x1.ravel(), "x2": x2.ravel(), "x3": rng.uniform(size=x1.size)})

    X, X_eval = grid(0.0), grid(0.006)  # held-out points lie between the training grid's points
    model = DecisionTreeClassifier(max_depth=2, random_state=0).fit(X, (X.x1 > 0.5) & (X.x2 > 0.5))
    s = CartSurrogate(max_leaf_nodes=4).fit(X, model.predict(X))
    held_out = evaluate_rule_set(s.rule_set_, X_eval, model.predict(X_eval))
    assert held_out.agreement == 1.0 and held_out.n_rows == 1600
    assert held_out.size <= 4 and held_out.numpreds <= 2 * held_out.size


def test_rules_partition_rows_and_reproduce_predict(depth2):
    X, train, _, labels = depth2
    s = CartSurrogate(max_leaf_nodes=6).fit(X.iloc[train], labels[train])
    masks = np.array([conjunction_mask(r.predicates, X) for r in s.rules_])
    assert (masks.sum(axis=0) == 1).all()
    by_rules = np.array([s.rules_[i].label for i in masks.argmax(axis=0)])
    np.testing.assert_array_equal(by_rules, s.predict(X))
    assert sum(r.support for r in s.rules_) == len(train)
    assert all(0 <= r.precision <= 1 for r in s.rules_)


def test_one_leaf_pair_is_the_majority_baseline(depth2):
    """T6 spirit: the coarsest surrogate cannot beat the majority label by much; 2 leaves, 2 predicates."""
    X, train, test, labels = depth2
    s = CartSurrogate(max_leaf_nodes=2).fit(X.iloc[train], labels[train])
    assert len(s.rules_) == 2 and s.rule_set_.train.numpreds == 2


def test_budget_sweep_counts_rules_and_predicates(depth2):
    X, train, test, labels = depth2
    sets = [CartSurrogate(max_leaf_nodes=k).fit(X.iloc[train], labels[train]).rule_set_ for k in (2, 3, 4, 8)]
    held_out = [evaluate_rule_set(rs, X.iloc[test], labels[test]) for rs in sets]
    assert [q.size for q in held_out] == [2, 3, 4, 8]
    assert (np.diff([q.numpreds for q in held_out]) > 0).all()
    assert all(0.9 < q.agreement <= 1 for q in held_out)


def test_array_input_takes_the_feature_names(depth2):
    X, train, _, labels = depth2
    s = CartSurrogate(max_leaf_nodes=3).fit(X.iloc[train].to_numpy(), labels[train], feature_names=list(X.columns))
    assert {p.feature for r in s.rules_ for p in r.predicates} <= set(X.columns)
    np.testing.assert_array_equal(s.predict(X.iloc[train].to_numpy()), s.predict(X.iloc[train]))
