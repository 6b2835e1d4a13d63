"""Partial dependence with ICE curves, what the average hides, and the SHAP dependence's colour feature (issue 25).

Independent oracles: the PDP and every ICE curve against a brute-force loop over the grid (set the column, call
the model, average); the fidelity figure on a planted model whose ICE curves are half rising and half falling
(flat PDP: the share running the other way is the share of one half); the colour feature on a planted model
``x0 + x1 * x2 + x3 / 2`` with its SHAP values in closed form (interventional, independent features:
``phi_1 = (x1 - mu1) (x2 + mu2) / 2``), where x1's interaction is x2 and x0's is nothing.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import GradientBoostingClassifier

from explainers.dependence import PartialDependenceExplainer, curve_fidelity, hidden_text
from explainers.interactions import interaction_strength, shap_dependence


@pytest.fixture(scope="module")
def fitted():
    rng = np.random.default_rng(0)
    n = 600
    X = pd.DataFrame({"age": rng.normal(40, 12, n), "hours": rng.integers(10, 60, n).astype(float),
                      "job": rng.integers(0, 4, n).astype(float)})  # a categorical column's level codes
    y = ((X["age"] > 40) ^ (X["job"] == 2) | (X["hours"] > 50)).astype(int)
    model = GradientBoostingClassifier(n_estimators=20, max_depth=3, random_state=0).fit(X, y)
    return model, X


def _output(model):
    return lambda frame: model.predict_proba(frame)[:, 1]


@pytest.mark.parametrize("feature", ["age", "job"])
def test_pdp_and_ice_equal_a_brute_force_loop_over_the_grid(fitted, feature):
    model, X = fitted
    pd_ = PartialDependenceExplainer(_output(model), X, categorical=["job"], n_ice=250, grid_resolution=12,
                                     seed=3).explain(feature)
    sample = X.iloc[pd_.rows]
    assert len(pd_.rows) == 250 and len(set(pd_.rows.tolist())) == 250 and pd_.n_rows == 600
    brute = np.empty((250, len(pd_.grid)))
    for k, v in enumerate(pd_.grid):  # the oracle: set the column to the grid value, call the model
        edited = sample.copy()
        edited[feature] = v
        brute[:, k] = model.predict_proba(edited)[:, 1]
    np.testing.assert_allclose(pd_.individual, brute, atol=1e-12)
    np.testing.assert_allclose(pd_.average, brute.mean(axis=0), atol=1e-12)
    np.testing.assert_allclose(pd_.average_se, brute.std(axis=0, ddof=1) / np.sqrt(250), atol=1e-12)
    if feature == "job":  # a categorical column's grid is its levels
        assert pd_.categorical and pd_.grid.tolist() == [0.0, 1.0, 2.0, 3.0]
    else:
        from scipy.stats.mstats import mquantiles

        lo, hi = mquantiles(sample["age"], prob=[0.05, 0.95])  # scikit-learn's empirical percentiles
        assert len(pd_.grid) == 12 and pd_.grid[0] == pytest.approx(lo) and pd_.grid[-1] == pytest.approx(hi)
    assert "250 of 600 rows" in pd_.source and pd_.to_dict()["feature"] == feature


def test_half_rising_half_falling_curves_make_a_flat_pdp_that_hides_half_of_them():
    rng = np.random.default_rng(1)
    n = 400
    X = pd.DataFrame({"x": rng.uniform(0, 1, n), "s": rng.choice([-1.0, 1.0], n)})
    planted = lambda f: (f["s"] * f["x"]).to_numpy()  # noqa: E731  each row's curve rises or falls with s
    pd_ = PartialDependenceExplainer(planted, X, n_ice=n, grid_resolution=10).explain("x")
    f = pd_.fidelity
    falling = int(np.sum(X["s"] < 0))
    expected = falling if f.direction > 0 else n - falling  # the curves against the PDP's direction
    assert f.opposite == expected and f.n_curves == n
    assert abs(f.opposite_share - 0.5) < 0.06 and f.opposite_low < 0.5 < f.opposite_high
    # centred curves are +-(grid - its mean); the centred PDP is (2 p - 1)(grid - its mean)
    g = pd_.grid - pd_.grid.mean()
    p = np.mean(X["s"] > 0)
    rms = np.sqrt(np.mean(g ** 2))
    oracle = p * abs(1 - (2 * p - 1)) * rms + (1 - p) * abs(-1 - (2 * p - 1)) * rms
    assert f.distance == pytest.approx(oracle, rel=1e-9) and f.distance_low <= f.distance <= f.distance_high
    assert "ICE curves" in hidden_text(pd_) and "95 % CI" in hidden_text(pd_)


def test_curves_that_all_agree_hide_nothing():
    grid = np.linspace(0, 1, 5)
    curves = np.outer(np.linspace(1, 2, 30), grid) + np.arange(30)[:, None]  # every curve rises; levels differ
    f = curve_fidelity(grid, curves)
    assert (f.direction, f.opposite, f.flat) == (1, 0, False) and f.opposite_high < 0.15
    assert f.distance == pytest.approx(np.mean(np.abs(np.linspace(1, 2, 30) - 1.5)) * np.sqrt(np.mean(
        (grid - grid.mean()) ** 2)), rel=1e-9)  # level differences removed: only the slopes' spread is left
    falling = curve_fidelity(grid, -curves)
    assert (falling.direction, falling.opposite) == (-1, 0)
    levels = curve_fidelity([0, 1, 2], np.array([[0, 1, 2.0], [0, 1, 2.0], [3, 1, 0.0]]), categorical=True)
    assert levels.opposite == 1 and levels.direction == 1  # the third row ranks the PDP's top level below its bottom


@pytest.fixture(scope="module")
def planted_shap():
    rng = np.random.default_rng(2)
    n = 1500
    X = np.column_stack([rng.normal(0, 1, n), rng.uniform(-1, 2, n), rng.uniform(0, 3, n), rng.normal(0, 1, n)])
    X = np.column_stack([X, X[:, 1] + rng.normal(0, 0.05, n)])  # x4: a near copy of x1, unused by the model
    mu = X.mean(axis=0)
    phi = np.column_stack([X[:, 0] - mu[0], (X[:, 1] - mu[1]) * (X[:, 2] + mu[2]) / 2,
                           (X[:, 2] - mu[2]) * (X[:, 1] + mu[1]) / 2, (X[:, 3] - mu[3]) / 2, np.zeros(n)])
    return X, phi


def test_the_colour_feature_is_the_planted_interaction(planted_shap):
    X, phi = planted_shap
    names = ["x0", "x1", "x2", "x3", "x4"]
    dep = shap_dependence("x1", names, X, phi, np.arange(len(X)), n_boot=20)
    assert dep.color_feature == "x2" and dep.pick_share == 1.0
    assert dep.candidates[0][0] == "x2" and dep.candidates[0][1] > 0.5
    assert all(s < 0.02 for name, s in dep.candidates[1:])  # x0, x3 and the near copy x4 explain nothing
    np.testing.assert_array_equal(dep.color_values, X[:, 2])
    assert shap_dependence("x2", names, X, phi, np.arange(len(X)), n_boot=5).color_feature in ("x1", "x4")
    additive = interaction_strength(X[:, 0], phi[:, 0], X[:, 1:])
    assert additive.max() < 0.02  # x0 interacts with nothing: every strength about 0


def test_a_categorical_interaction_is_read_by_level():
    rng = np.random.default_rng(4)
    n = 1200
    x, level, noise = rng.uniform(0, 1, n), rng.integers(0, 3, n).astype(float), rng.normal(0, 1, n)
    phi = x * np.array([-1.0, 0.0, 2.0])[level.astype(int)]  # x's effect depends on the level, not linearly
    s = interaction_strength(x, phi, np.column_stack([noise, level]), others_categorical=[False, True])
    assert s[1] > 0.8 and s[0] < 0.02


def _path_value(t, x, S, node=0):
    """E[tree | x_S] of the path-dependent game: follow x on S, else weight both children by their cover."""
    left, right = t.children_left[node], t.children_right[node]
    if left == -1:
        return t.value[node].ravel()[0]
    if t.feature[node] in S:
        return _path_value(t, x, S, left if x[t.feature[node]] <= t.threshold[node] else right)
    cl, cr = t.weighted_n_node_samples[left], t.weighted_n_node_samples[right]
    return (cl * _path_value(t, x, S, left) + cr * _path_value(t, x, S, right)) / (cl + cr)


def _brute_interactions(value, m: int) -> np.ndarray:
    """Shapley interaction index over every coalition (halved off the diagonal, main effects on it, as shap)."""
    from itertools import combinations
    from math import factorial

    v = {S: value(set(S)) for r in range(m + 1) for S in combinations(range(m), r)}
    at = lambda S: v[tuple(sorted(S))]  # noqa: E731
    out = np.zeros((m, m))
    for i, j in combinations(range(m), 2):
        rest = [k for k in range(m) if k not in (i, j)]
        out[i, j] = out[j, i] = sum(
            factorial(len(S)) * factorial(m - len(S) - 2) / factorial(m - 1)
            * (at(S + (i, j)) - at(S + (i,)) - at(S + (j,)) + at(S))
            for r in range(len(rest) + 1) for S in combinations(rest, r)) / 2
    for i in range(m):
        rest = [k for k in range(m) if k != i]
        phi = sum(factorial(len(S)) * factorial(m - len(S) - 1) / factorial(m) * (at(S + (i,)) - at(S))
                  for r in range(m) for S in combinations(rest, r))
        out[i, i] = phi - (out[i].sum() - out[i, i])
    return out


@pytest.fixture(scope="module")
def product_data():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(300, 4))
    return X, X[:, 0] + X[:, 1] * X[:, 2] + rng.normal(0, 0.1, 300)


def test_shap_interaction_values_equal_a_brute_force_shapley_interaction_index(product_data):
    from sklearn.ensemble import GradientBoostingRegressor, RandomForestRegressor
    from sklearn.tree import DecisionTreeRegressor

    from explainers.interactions import tree_interactions

    X, y = product_data
    for model in (DecisionTreeRegressor(max_depth=4, random_state=0).fit(X, y),
                  RandomForestRegressor(n_estimators=5, max_depth=4, random_state=0).fit(X, y),
                  GradientBoostingRegressor(n_estimators=10, max_depth=3, random_state=0).fit(X, y)):
        trees = ([model] if hasattr(model, "tree_") else [e[0] if isinstance(e, np.ndarray) else e
                                                          for e in np.ravel(model.estimators_)])
        if isinstance(model, GradientBoostingRegressor):
            value = lambda S, x: sum(model.learning_rate * _path_value(t.tree_, x, S) for t in trees)  # noqa: E731
        else:
            value = lambda S, x: np.mean([_path_value(t.tree_, x, S) for t in trees])  # noqa: E731
        iv = tree_interactions(model, X[:3])
        for k in range(3):
            np.testing.assert_allclose(iv[k], _brute_interactions(lambda S: value(S, X[k]), 4), atol=1e-10)
    assert tree_interactions(object(), X[:3]) is None  # an unchecked family: the heuristic chooses


def test_a_tree_models_colour_is_its_planted_interaction(product_data):
    from sklearn.ensemble import GradientBoostingRegressor

    from explainers.interactions import tree_interactions

    X, y = product_data
    model = GradientBoostingRegressor(n_estimators=60, max_depth=3, random_state=0).fit(X, y)
    phi = np.zeros_like(X)  # the scatter's values do not choose the colour here
    dep = shap_dependence("x1", ["x0", "x1", "x2", "x3"], X, phi, np.arange(300), n_boot=10,
                          interactions=tree_interactions(model, X))
    assert (dep.color_feature, dep.by, dep.pick_share) == ("x2", "interaction", 1.0)
    assert dep.candidates[0][1] > 1.5 * dep.candidates[1][1]  # x2 ahead of x0 and x3
