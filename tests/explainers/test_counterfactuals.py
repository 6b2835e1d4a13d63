"""Counterfactuals and the story test against independent oracles (issue 25).

Every counterfactual is checked by calling the model itself (it flips), against the training rows (within ranges and
levels, one-hot blocks as seen), against the row (immutable features unchanged) and by recomputing its distance by
hand (MAD-scaled L1 for numbers, 0/1 for a category or a block). The story test runs on planted models whose answer
is known; the budget is counted by a wrapper around the model.
"""
from __future__ import annotations

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression

from explainers.counterfactuals import CounterfactualExplainer, story_test

NAMES = ["age", "hours", "colour", "race_a", "race_b", "race_c"]
NUMERIC, CATEGORY, BLOCK = [0, 1], 2, [3, 4, 5]


@pytest.fixture(scope="module")
def table():
    """400 rows: two numbers (one integer), a category of 4 levels (codes), a one-hot block of 3 columns."""
    rng = np.random.default_rng(0)
    n = 400
    X = np.zeros((n, 6))
    X[:, 0] = rng.integers(18, 80, n)
    X[:, 1] = rng.normal(40, 8, n)
    X[:, 2] = rng.integers(0, 4, n)
    X[np.arange(n), 3 + rng.integers(0, 3, n)] = 1.0
    logit = 0.08 * (X[:, 0] - 45) + 0.1 * (X[:, 1] - 40) + 1.2 * (X[:, 2] == 3) - 1.5 * X[:, 4]
    y = (logit + rng.normal(0, 0.5, n) > 0).astype(int)
    model = LogisticRegression(max_iter=1000).fit(X, y)
    return X, model


def _mad(col):
    return float(np.median(np.abs(col - np.median(col))))


def _hand_distance(x, z, X):
    """The distance written out: |Δ| / MAD for each number, 1 for the category, 1 for the block."""
    d = sum(abs(z[j] - x[j]) / _mad(X[:, j]) for j in NUMERIC)
    d += float(z[CATEGORY] != x[CATEGORY]) + float(not np.array_equal(z[BLOCK], x[BLOCK]))
    return d


def _changed(x, z):
    out = [NAMES[j] for j in (*NUMERIC, CATEGORY) if z[j] != x[j]]
    return out + (["race"] if not np.array_equal(z[BLOCK], x[BLOCK]) else [])


def test_each_counterfactual_flips_stays_in_range_holds_immutables_and_has_its_hand_distance(table):
    X, model = table
    predict = lambda Z: model.predict_proba(Z)[:, 1]  # noqa: E731
    cf = CounterfactualExplainer(predict, X, NAMES, categorical=[CATEGORY], groups={"race": NAMES[3:]}, n=5)
    assert cf.names == ("age", "hours", "colour", "race")
    checked = 0
    for i in range(6):
        x = X[i]
        before = model.predict_proba(x[None])[0, 1] >= 0.5
        result = cf.explain(x, immutable=["age"])
        assert result.found and 1 <= len(result.shown) <= 5
        for c in result.shown:
            z = c.values
            assert (model.predict_proba(z[None])[0, 1] >= 0.5) != before  # the model itself says it flips
            assert c.output == pytest.approx(model.predict_proba(z[None])[0, 1])
            assert z[0] == x[0]  # immutable
            for j in NUMERIC:
                assert X[:, j].min() <= z[j] <= X[:, j].max()
            assert z[0] == round(z[0])  # an integer column stays integer
            assert z[CATEGORY] in set(X[:, CATEGORY])
            assert any(np.array_equal(z[BLOCK], r) for r in X[:, BLOCK])
            assert c.distance == pytest.approx(_hand_distance(x, z, X), rel=1e-9)
            assert sorted(c.changed) == sorted(_changed(x, z)) and c.n_changed == len(_changed(x, z))
            checked += 1
        sets = [frozenset(c.changed) for c in result.shown]
        assert len(set(sets)) == len(sets)  # diverse: each shows a different set of features
        assert [c.distance for c in result.pool] == sorted(c.distance for c in result.pool)
    assert checked >= 12


def test_counterfactuals_are_minimal_no_single_change_can_be_undone(table):
    X, model = table
    predict = lambda Z: model.predict_proba(Z)[:, 1]  # noqa: E731
    cf = CounterfactualExplainer(predict, X, NAMES, categorical=[CATEGORY], groups={"race": NAMES[3:]})
    x = X[1]
    before = predict(x[None])[0] >= 0.5
    for c in cf.explain(x).shown:
        for j in [*NUMERIC, CATEGORY]:
            if c.values[j] != x[j] and c.n_changed > 1:
                undone = c.values.copy()
                undone[j] = x[j]
                assert (predict(undone[None])[0] >= 0.5) == before  # every change is needed


def _planted(weights):
    """A model of the first four columns: P = sigmoid(4 · (w · x)); the data standard normal."""
    w = np.asarray(weights, dtype=float)
    return lambda Z: 1.0 / (1.0 + np.exp(-4.0 * (np.asarray(Z)[:, :4] @ w)))


@pytest.fixture(scope="module")
def normal_rows():
    return np.random.default_rng(1).normal(size=(300, 4))


def test_story_test_a_model_of_one_hidden_feature_cannot_be_flipped_by_the_story(normal_rows):
    predict = _planted([0, 0, 1, 0])  # only "h" matters; the story names "a" and "b"
    cf = CounterfactualExplainer(predict, normal_rows, ["a", "b", "h", "c"])
    x = np.array([0.5, -0.3, -1.0, 0.2])
    st = story_test(cf, x, ["a", "b"], k=10)
    assert not st.story_flips and st.story_only.pool == ()
    assert st.any_feature.found and st.k >= 1
    assert st.n_need_hidden == st.k and st.share == 1.0  # every cheapest counterfactual needs the hidden feature
    assert all("h" in c.changed for c in st.any_feature.pool[:st.k])
    assert st.hidden_needed[0] == "h"
    assert 0 < st.share_low < 1 == st.share_high


def test_story_test_a_model_of_one_named_feature_is_flipped_by_the_story_alone(normal_rows):
    predict = _planted([1, 0, 0, 0])  # only "a" matters, and the story names it
    cf = CounterfactualExplainer(predict, normal_rows, ["a", "b", "h", "c"])
    x = np.array([-1.0, 0.4, 0.3, 0.2])
    st = story_test(cf, x, ["a", "b"], k=10)
    assert st.story_flips
    assert st.story_only.cheapest == pytest.approx(st.any_feature.cheapest)
    assert st.distance_ratio == pytest.approx(1.0)
    assert st.n_need_hidden == 0 and st.share == 0.0 and st.hidden_needed == ()
    assert all(set(c.changed) <= {"a", "b"} for c in st.story_only.pool)


def test_immutable_story_features_leave_the_story_nothing_to_change(normal_rows):
    predict = _planted([1, 0, 0, 0])
    cf = CounterfactualExplainer(predict, normal_rows, ["a", "b", "h", "c"])
    st = story_test(cf, np.array([-1.0, 0.4, 0.3, 0.2]), ["a"], immutable=["a"])
    assert not st.story_flips and not st.any_feature.found and np.isnan(st.share)


class Counted:
    """The model behind a counter of calls and rows."""

    def __init__(self, predict):
        self.predict, self.calls, self.rows, self.largest = predict, 0, 0, 0

    def __call__(self, Z):
        self.calls += 1
        self.rows += len(Z)
        self.largest = max(self.largest, len(Z))
        return self.predict(Z)


@pytest.mark.parametrize("budget", [1, 40, 150, 900])
def test_the_budget_is_respected_and_reported(table, budget):
    X, model = table
    counted = Counted(lambda Z: model.predict_proba(Z)[:, 1])
    cf = CounterfactualExplainer(counted, X, NAMES, categorical=[CATEGORY], groups={"race": NAMES[3:]},
                                 budget=budget, batch=64)
    seen = []
    r = cf.explain(X[2], progress=lambda done, total: seen.append((done, total)))
    assert counted.rows <= budget and counted.largest <= 64
    assert (r.n_evaluated, r.n_calls) == (counted.rows, counted.calls)
    assert seen[-1] == (counted.rows, budget) and len(seen) == counted.calls
    assert r.exhausted == (budget < 900)  # the search needs more than 150 rows on this table, fewer than 900


def test_the_story_test_spends_at_most_twice_the_budget(normal_rows):
    counted = Counted(_planted([0, 0, 1, 0]))
    cf = CounterfactualExplainer(counted, normal_rows, ["a", "b", "h", "c"], budget=120)
    st = story_test(cf, np.array([0.5, -0.3, -1.0, 0.2]), ["a", "b"])
    assert counted.rows == st.story_only.n_evaluated + st.any_feature.n_evaluated <= 240


def test_the_search_is_deterministic_and_refuses_unknown_features(table):
    X, model = table
    predict = lambda Z: model.predict_proba(Z)[:, 1]  # noqa: E731
    cf = CounterfactualExplainer(predict, X, NAMES, categorical=[CATEGORY], groups={"race": NAMES[3:]})
    a, b = cf.explain(X[3]), cf.explain(X[3])
    assert [c.values.tolist() for c in a.pool] == [c.values.tolist() for c in b.pool]
    with pytest.raises(ValueError, match="race_a"):
        cf.explain(X[3], immutable=["race_a"])  # a block's column is not a feature of the search; the block is
