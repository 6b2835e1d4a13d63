"""Permutation SHAP on any budget of orderings (issue 23: odd budgets crashed with "need at least one array").

Oracle: interventional Shapley values by brute-force enumeration of every coalition
(:func:`tests.shapley_oracle.brute_force_shapley`, itertools and Shapley's formula, the model's own
``predict_proba``), on a gradient-boosting classifier fitted to 12 columns of scikit-learn's breast cancer
table (d = 12 players, as the issue's 13-word sentence).
"""
import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import load_breast_cancer
from sklearn.ensemble import GradientBoostingClassifier

from explainers import ShapExplainer
from explainers._permutation import permutation_shap, permutation_shap_rows
from tests.shapley_oracle import brute_force_shapley

D = 12


@pytest.fixture(scope="module")
def twelve():
    """GB on 12 breast-cancer columns, a 20-row background, a held-out row and its brute-force values."""
    data = load_breast_cancer(as_frame=True)
    X, y = data.data.iloc[:, :D], data.target
    model = GradientBoostingClassifier(n_estimators=40, max_depth=3, random_state=0).fit(X.iloc[:450], y.iloc[:450])
    bg, x = X.iloc[:20], X.iloc[[500]]
    oracle = brute_force_shapley(lambda rows: model.predict_proba(rows)[:, 1], x, bg)
    f = lambda a: model.predict_proba(pd.DataFrame(a, columns=X.columns))  # noqa: E731
    return model, X, f, x.to_numpy(dtype=float)[0], bg.to_numpy(dtype=float), oracle


# budget -> orderings walked: pairs are never split, one ordering alone when the budget holds no pair
WALKED = {1: 1, 2: 2, 3: 2, 41: 40, 500: 500}


@pytest.mark.parametrize("budget", sorted(WALKED))
def test_every_budget_returns_additive_values_and_says_how_many_orderings_it_walked(twelve, budget):
    _, _, f, x, bg, _ = twelve
    res = permutation_shap(f, x, bg, rel_tol=0.0, abs_tol=1e-15, max_orderings=budget, seed=1)
    assert res.orderings == WALKED[budget] <= budget
    if budget == 500:  # 2^12 coalitions per background row cost less than 500 walks of 11: every row enumerated
        assert res.converged is True and res.stopped_by == "tolerance" and not res.standard_error.any()
        return
    assert res.converged is False and res.stopped_by == "max_orderings"
    assert res.values.shape == (D, 2) and np.isfinite(res.values).all()
    np.testing.assert_allclose(res.base + res.values.sum(axis=0), f(x[None, :])[0], atol=1e-12)
    if res.orderings < 4:  # fewer than two antithetic pairs: the spread is unknown, not zero
        assert np.isnan(res.standard_error).all()
    else:  # a feature the trees never split on moves no model row: its contributions are exactly 0, and so is its SE
        used = np.abs(res.values) > 0
        assert np.isfinite(res.standard_error).all() and used.any() and (res.standard_error[used] > 0).all()


@pytest.mark.parametrize("budget", [1, 2, 3])
def test_budgets_below_two_pairs_are_unbiased_estimates_of_the_brute_force_values(twelve, budget):
    """Over 300 seeds the mean of the one-ordering (or one-pair) estimates is within 4 SE of the Shapley value."""
    _, _, f, x, bg, oracle = twelve
    runs = np.stack([permutation_shap(f, x, bg, rel_tol=0.0, abs_tol=1e-15, max_orderings=budget,
                                      seed=s).values[:, 1] for s in range(300)])
    se = runs.std(axis=0, ddof=1) / np.sqrt(len(runs))
    assert (np.abs(runs.mean(axis=0) - oracle) <= 4 * se + 1e-12).all()


@pytest.mark.parametrize("budget", [41, 500])
def test_odd_and_large_budgets_agree_with_brute_force_within_four_standard_errors(twelve, budget):
    _, _, f, x, bg, oracle = twelve
    res = permutation_shap(f, x, bg, rel_tol=0.0, abs_tol=1e-15, max_orderings=budget, seed=2)
    err = np.abs(res.values[:, 1] - oracle)
    assert (err <= 4 * res.standard_error[:, 1] + 1e-12).all()  # + float rounding of a feature the trees never use


def test_rows_and_the_explainer_accept_odd_and_tiny_budgets(twelve):
    model, X, f, _, bg, _ = twelve
    vals, base, se, info = permutation_shap_rows(f, X.iloc[500:503].to_numpy(dtype=float), bg, rel_tol=0.0,
                                                 max_orderings=41)
    assert vals.shape == (3, D, 2) and list(info["orderings"]) == [40, 40, 40] and np.isfinite(se).all()
    for budget, walked in ((1, 1), (41, 40)):
        e = ShapExplainer(model, background=X.iloc[:450], background_size=20, algorithm="permutation",
                          rel_tol=1e-9, max_orderings=budget)
        ex = e.explain(X.iloc[[510]])
        assert ex.params["orderings"] == walked and ex.params["converged"] is False
        assert ex.additivity_gap < 1e-9
        se = np.asarray(ex.params["standard_error"])
        assert np.isnan(se).all() if walked == 1 else (np.isfinite(se).all() and (se > 0).all())
