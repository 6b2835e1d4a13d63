"""Candor's Tree SHAP against brute force over every coalition, per model family (tolerance 1e-6).

The oracle (:func:`tests.shapley_oracle.brute_force_shapley`) enumerates coalitions of raw columns and calls the
model itself, so it shares nothing with the tree code: not its split tests, not its leaf values. Data are real
(scikit-learn's breast cancer, diabetes and wine tables; the Adult census extract for one-hot columns).
"""
import numpy as np
import pandas as pd
import pytest
from sklearn.compose import ColumnTransformer
from sklearn.datasets import load_breast_cancer, load_diabetes, load_wine
from sklearn.ensemble import (ExtraTreesClassifier, ExtraTreesRegressor, GradientBoostingClassifier,
                              GradientBoostingRegressor, HistGradientBoostingClassifier,
                              HistGradientBoostingRegressor, RandomForestClassifier, RandomForestRegressor)
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

from explainers.tree_shap import TreeShap
from tests.shapley_oracle import additive_output, brute_force_shapley

TOL = 1e-6
N_BG = 25


def _table(loader, d):
    X, y = loader(return_X_y=True, as_frame=True)
    return X.iloc[:, :d].astype(float), y


def _check(model, X: pd.DataFrame, rows=(7, 42), groups=None, raw=None):
    """Our values for ``rows`` equal brute force on every output; efficiency holds; the output is the model's."""
    rng = np.random.default_rng(0)
    bg = X.iloc[rng.choice(len(X), N_BG, replace=False)]
    explained = model if raw is None else raw
    ts = TreeShap(model, bg if raw is None else raw[:-1].transform(bg), groups=groups)
    f = additive_output(explained)
    inputs = X if raw is None else raw[:-1].transform(X)
    np.testing.assert_allclose(ts.output_of(inputs), f(X), atol=1e-9)
    V = ts.shap_values(inputs.iloc[list(rows)] if hasattr(inputs, "iloc") else inputs[list(rows)])
    for i, r in enumerate(rows):
        x = X.iloc[[r]]
        for k in range(V.shape[2]):
            expect = brute_force_shapley(lambda Z: f(Z)[:, k], x, bg)
            np.testing.assert_allclose(V[i, :, k], expect, atol=TOL, rtol=0)
    np.testing.assert_allclose(ts.expected_value + V.sum(axis=1), f(X.iloc[list(rows)]), atol=1e-9)
    return V


@pytest.mark.parametrize("depth", [3, 6, 12])
def test_gradient_boosting_classifier_margin(depth):
    X, y = _table(load_breast_cancer, 8)
    _check(GradientBoostingClassifier(n_estimators=20, max_depth=depth, random_state=0).fit(X, y), X)


def test_gradient_boosting_multiclass_scores():
    X, y = _table(load_wine, 7)
    V = _check(GradientBoostingClassifier(n_estimators=15, max_depth=4, random_state=0).fit(X, y), X)
    assert V.shape[2] == 3


@pytest.mark.parametrize("depth", [3, 5, 8, 12])
def test_hist_gradient_boosting_classifier(depth):
    X, y = _table(load_breast_cancer, 8)
    model = HistGradientBoostingClassifier(max_iter=20, max_depth=depth, max_leaf_nodes=None, random_state=0)
    _check(model.fit(X, y), X)


@pytest.mark.parametrize("depth", [5, 12])
def test_hist_gradient_boosting_regressor(depth):
    X, y = _table(load_diabetes, 8)
    model = HistGradientBoostingRegressor(max_iter=20, max_depth=depth, max_leaf_nodes=None, random_state=0)
    _check(model.fit(X, y), X)


def test_hist_gradient_boosting_with_missing_values():
    X, y = _table(load_breast_cancer, 7)
    X = X.copy()
    rng = np.random.default_rng(1)
    X = X.mask(rng.random(X.shape) < 0.2)  # 20 % of cells missing, in rows and background alike
    model = HistGradientBoostingClassifier(max_iter=20, max_depth=6, random_state=0).fit(X, y)
    assert X.iloc[[7, 42]].isna().any().any()
    _check(model, X)


def test_hist_gradient_boosting_categorical_from_dtype():
    X, y = _table(load_diabetes, 6)
    X = X.copy()
    X["sex"] = pd.Categorical(np.where(X["sex"] > 0, "m", "f"))
    X["bmi_band"] = pd.Categorical(pd.qcut(X["bmi"], 5, labels=list("abcde")).astype(str))
    X = X.drop(columns=["bmi"])
    model = HistGradientBoostingRegressor(max_iter=20, max_depth=6, categorical_features="from_dtype",
                                          random_state=0).fit(X, y)
    assert model._preprocessor is not None  # categorical columns encoded and moved first
    rng = np.random.default_rng(0)
    bg = X.iloc[rng.choice(len(X), N_BG, replace=False)]
    ts = TreeShap(model, bg)
    for r in (0, 7, 42):
        expect = brute_force_shapley(lambda Z: model.predict(Z), X.iloc[[r]], bg)
        np.testing.assert_allclose(ts.shap_values(X.iloc[[r]])[0, :, 0], expect, atol=TOL, rtol=0)


def test_hist_gradient_boosting_categorical_codes_with_missing():
    X, y = _table(load_breast_cancer, 6)
    X = X.copy()
    X.iloc[:, 0] = pd.qcut(X.iloc[:, 0], 8, labels=False).astype(float)
    X.iloc[::9, 0] = np.nan
    model = HistGradientBoostingClassifier(max_iter=20, max_depth=6, categorical_features=[0],
                                           random_state=0).fit(X, y)
    _check(model, X, rows=(0, 9, 42))


def test_random_forest_probability_and_extra_trees():
    X, y = _table(load_breast_cancer, 8)
    _check(RandomForestClassifier(n_estimators=25, random_state=0).fit(X, y), X)
    _check(ExtraTreesClassifier(n_estimators=25, random_state=0).fit(X, y), X)


def test_weighted_regression_trees():
    """Trees fitted with unequal sample weights: shap 0.51 is off by up to 1.6 on these (see test below)."""
    X, y = _table(load_diabetes, 8)
    w = np.random.default_rng(3).uniform(0, 2, len(y))
    _check(DecisionTreeRegressor(max_depth=8, random_state=0).fit(X, y, sample_weight=w), X)
    _check(RandomForestRegressor(n_estimators=15, max_depth=8, random_state=0).fit(X, y), X)
    _check(GradientBoostingRegressor(n_estimators=15, subsample=0.8, max_depth=5, random_state=0).fit(X, y), X)
    _check(ExtraTreesRegressor(n_estimators=15, bootstrap=True, max_depth=8, random_state=0).fit(X, y), X)


def test_decision_tree_with_missing_values():
    X, y = _table(load_breast_cancer, 7)
    X = X.mask(np.random.default_rng(2).random(X.shape) < 0.15)
    _check(DecisionTreeClassifier(max_depth=8, random_state=0).fit(X, y), X, rows=(1, 8, 40))


def test_one_hot_pipeline_raw_columns_as_players(adult_small):
    """A raw column's one-hot children as one player: the raw column's Shapley value, by brute force over
    raw columns through the whole Pipeline."""
    X, y = adult_small
    cats = [c for c in X.columns if not pd.api.types.is_numeric_dtype(X[c])]
    pre = ColumnTransformer([("cat", OneHotEncoder(handle_unknown="ignore", sparse_output=False), cats)],
                            remainder="passthrough")
    pipe = make_pipeline(pre, GradientBoostingClassifier(n_estimators=25, max_depth=4, random_state=0)).fit(X, y)
    names = pre.get_feature_names_out()
    groups = np.array([list(X.columns).index(n.split("__", 1)[1].rsplit("_", 1)[0] if n.startswith("cat__")
                                             else n.split("__", 1)[1]) for n in names])
    rng = np.random.default_rng(0)
    bg = X.iloc[rng.choice(len(X), N_BG, replace=False)]
    ts = TreeShap(pipe[-1], pre.transform(bg), groups=groups)
    f = lambda Z: pipe.decision_function(Z)  # noqa: E731
    for r in (0, 5, 11):
        expect = brute_force_shapley(f, X.iloc[[r]], bg)
        got = ts.shap_values(pre.transform(X.iloc[[r]]))[0, :, 0]
        np.testing.assert_allclose(got, expect, atol=TOL, rtol=0)
    # the signed sum of children's values differs from it when the model has interactions
    per_child = TreeShap(pipe[-1], pre.transform(bg)).shap_values(pre.transform(X.iloc[[0]]))[0, :, 0]
    summed = np.bincount(groups, weights=per_child, minlength=X.shape[1])
    assert np.abs(summed - ts.shap_values(pre.transform(X.iloc[[0]]))[0, :, 0]).max() > 1e-4


ADULT = ["age", "workclass", "fnlwgt", "education", "education-num", "marital-status", "occupation",
         "relationship", "race", "sex", "capital-gain", "capital-loss", "hours-per-week", "native-country", "income"]


@pytest.fixture(scope="module")
def adult_small(shared_data):
    """2,000 rows of the real Adult census extract, 7 columns (4 categorical)."""
    raw = pd.read_csv(shared_data / "adult" / "adult.data", header=None, names=ADULT, skipinitialspace=True,
                      nrows=2000)
    keep = ["age", "education", "marital-status", "occupation", "sex", "hours-per-week", "capital-gain"]
    X = raw[keep].astype({c: str for c in ("education", "marital-status", "occupation", "sex")})
    return X.astype({c: float for c in ("age", "hours-per-week", "capital-gain")}), (raw.income == ">50K").astype(int)


def test_shap_probability_output_is_not_shapley_on_boosting():
    """The evidence for not using shap's probability output on a boosted model: 17-19 % off brute force."""
    import shap
    X, y = _table(load_breast_cancer, 8)
    model = GradientBoostingClassifier(n_estimators=30, max_depth=3, random_state=0).fit(X, y)
    bg = X.iloc[np.random.default_rng(0).choice(len(X), N_BG, replace=False)]
    ex = shap.TreeExplainer(model, data=bg, feature_perturbation="interventional", model_output="probability")
    x = X.iloc[[7]]
    theirs = np.asarray(ex.shap_values(x), float).reshape(-1, 8) if np.ndim(ex.shap_values(x)) < 3 else None
    expect = brute_force_shapley(lambda Z: model.predict_proba(Z)[:, 1], x, bg)
    assert np.abs(theirs[-1] - expect).max() > 1e-3


def test_the_bundled_sample_model_all_30_columns(gb_model, bc):
    """A boosted classifier on all 30 breast-cancer columns against brute force tree by tree (each tree's own
    columns enumerated, scored by scikit-learn's tree.predict): exact on every row tried. shap's log-odds output
    misses by 0.21 on one (row, background row) pair of this kind, so it is no oracle here."""
    from tests.shapley_oracle import brute_force_boosted_shapley

    X, _, train, test = bc
    bg = X.iloc[train].sample(n=100, random_state=3)
    ts = TreeShap(gb_model, bg)
    V = ts.shap_values(X.iloc[test[:6]])
    for i, r in enumerate(test[:6]):
        expect = brute_force_boosted_shapley(gb_model, X.iloc[r].to_numpy(), bg.to_numpy())
        np.testing.assert_allclose(V[i, :, 0], expect, atol=TOL, rtol=0)


def test_a_forest_too_large_for_the_exact_path_is_refused_and_sampled(monkeypatch):
    """Over the size guard the exact path refuses before reading paths; SHAP says so and samples instead."""
    import explainers.tree_shap._interventional as inter
    from explainers import ModelAdapter, ShapExplainer

    X, y = _table(load_breast_cancer, 6)
    model = RandomForestClassifier(n_estimators=5, random_state=0).fit(X, y)
    cells = sum(int((t.tree_.children_left < 0).sum()) * t.tree_.max_depth for t in model.estimators_)
    monkeypatch.setattr(inter, "MAX_PATH_CELLS", cells - 1)
    with pytest.raises(ValueError, match=f"{cells:,} leaf-path cells"):
        TreeShap(model, X.iloc[:10])
    e = ShapExplainer(ModelAdapter.for_table(model, X), background=X, background_size=20, max_orderings=16)
    assert e.algorithm == "permutation" and "exact Tree SHAP not used" in e.source
    monkeypatch.setattr(inter, "MAX_PATH_CELLS", cells)
    assert TreeShap(model, X.iloc[:10]).n_players == 6


def test_a_hist_gradient_boosting_pipeline_is_explained_in_its_own_float64_inputs():
    """HistGradientBoosting compares float64 inputs: rounding a Pipeline's output to float32 first (right for the
    classic trees) moved rows across thresholds, and their values then missed the model's prediction."""
    from explainers import ShapExplainer
    from explainers._codec import TabularCodec
    from explainers.model_adapter import ModelAdapter
    from sklearn.preprocessing import StandardScaler

    X, y = load_diabetes(return_X_y=True, as_frame=True)
    pipe = make_pipeline(StandardScaler(), HistGradientBoostingRegressor(max_depth=8, random_state=0)).fit(X, y)
    e = ShapExplainer(ModelAdapter(pipe, TabularCodec(X)), background=X, target_index=0)
    out = e.explain_outputs(X)
    assert e.algorithm == "tree" and out.params["tree_rows_recomputed"] == 0
    np.testing.assert_allclose(out.base_values + out.values.sum(axis=1), pipe.predict(X)[:, None], atol=1e-9)


def test_one_row_is_summed_in_compiled_code_once_numba_is_loaded(monkeypatch):
    """A server that has loaded numba (a large batch, the Persuasive page's expectations) sums one row's leaf games
    in compiled code too: same values as brute force; without numba loaded, one row never imports it
    (tests/app/test_lazy_imports.py)."""
    import numba  # noqa: F401  (loaded, as in such a server)

    from explainers.tree_shap import _compiled, _interventional

    monkeypatch.setattr(_interventional, "COMPILED_MIN_ROWS", 64)
    monkeypatch.setattr(_interventional, "COMPILED_WHEN_LOADED", True)
    calls, own = [], _compiled.leaf_sums
    monkeypatch.setattr(_compiled, "leaf_sums", lambda *a: calls.append(1) or own(*a))
    X, y = _table(load_breast_cancer, 8)
    V = _check(HistGradientBoostingClassifier(max_iter=30, max_depth=5, random_state=0).fit(X, y), X, rows=(7,))
    assert calls and V.shape == (1, 8, 1)
    calls.clear()
    monkeypatch.setattr(_interventional, "COMPILED_WHEN_LOADED", False)
    _check(HistGradientBoostingClassifier(max_iter=30, max_depth=5, random_state=0).fit(X, y), X, rows=(7,))
    assert calls == []  # the numpy sums below COMPILED_MIN_ROWS
