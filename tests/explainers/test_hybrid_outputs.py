"""The trees' shortcut for expectations over a background (``explainers.tree_shap.HybridOutputs``) against its
definition: each hybrid row ``(x_S, b_rest)`` built by hand and given to the model's own method, averaged.

The oracle shares nothing with the shortcut: not the trees' arrays, not the walk, not the link (it calls
``predict_proba`` / ``predict`` of the user's model, a Pipeline's preprocessing included). Data are real
(scikit-learn's breast cancer, diabetes and wine tables; the Adult census extract for one-hot columns).
"""
import numpy as np
import pandas as pd
import pytest
from sklearn.compose import ColumnTransformer
from sklearn.datasets import load_breast_cancer, load_diabetes, load_wine
from sklearn.ensemble import (GradientBoostingClassifier, GradientBoostingRegressor, HistGradientBoostingClassifier,
                              HistGradientBoostingRegressor, RandomForestClassifier)
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder

from explainers.model_adapter import ModelAdapter
from explainers.persuasive import masked_outputs
from explainers.tree_shap import HybridOutputs, forest_of
from tests.shared_data import adult_data

N_BG = 30


def _sets(d: int, seed: int = 0) -> list:
    """What the Persuasive page asks: nested top-k sets, their complements, the empty and full sets, and others."""
    rng = np.random.default_rng(seed)
    order = rng.permutation(d)
    return ([order[:k] for k in range(d + 1)] + [order[k:] for k in range(1, d)]
            + [rng.choice(d, size=int(rng.integers(1, d)), replace=False) for _ in range(6)])


def _oracle(method, X: pd.DataFrame, r: int, bg_rows, sets) -> np.ndarray:
    """mean over the background rows of ``method`` on each hybrid row, built one by one in the raw table."""
    out = []
    for keep in sets:
        rows = X.iloc[bg_rows].copy()
        for j in keep:
            rows.iloc[:, j] = X.iloc[r, j]
        out.append(np.mean(method(rows)))
    return np.array(out)


def _check(model, X: pd.DataFrame, method, index: int, rows=(3, 77)):
    adapter = ModelAdapter.for_table(model, X)
    hybrid = HybridOutputs.of(adapter, index)
    assert hybrid is not None
    Z = np.asarray(adapter.codec.encode(X), dtype=float)
    bg_rows = np.random.default_rng(1).choice(len(X), N_BG, replace=False)
    sets = _sets(X.shape[1])
    for r in rows:
        got = hybrid(Z[r], sets, Z[bg_rows])
        np.testing.assert_allclose(got, _oracle(method, X, r, bg_rows, sets), rtol=0, atol=1e-12)
        # and the grid path of masked_outputs on the model's own calls gives the same numbers bit for bit
        grid = masked_outputs(lambda a: adapter.outputs(a)[:, index], Z[r], sets, Z[bg_rows])
        np.testing.assert_array_equal(got, grid)
    return hybrid


def _table(loader):
    X, y = loader(return_X_y=True, as_frame=True)
    return X.astype(float), y


def test_gradient_boosting_classifier_probability():
    X, y = _table(load_breast_cancer)
    X = X.iloc[:, :12]
    model = GradientBoostingClassifier(n_estimators=40, max_depth=4, random_state=0).fit(X, y)
    _check(model, X, lambda R: model.predict_proba(R)[:, 1], 1)


def test_hist_gradient_boosting_classifier_with_missing_values():
    X, y = _table(load_breast_cancer)
    X = X.iloc[:, :10].mask(np.random.default_rng(2).random((len(X), 10)) < 0.15)
    model = HistGradientBoostingClassifier(max_iter=40, random_state=0).fit(X, y)
    _check(model, X, lambda R: model.predict_proba(R)[:, 1], 1, rows=(0, 5, 40))


def test_three_classes_probability_of_the_last():
    X, y = _table(load_wine)
    model = HistGradientBoostingClassifier(max_iter=20, random_state=0).fit(X, y)
    _check(model, X, lambda R: model.predict_proba(R)[:, 2], 2)
    gb = GradientBoostingClassifier(n_estimators=15, max_depth=3, random_state=0).fit(X, y)
    _check(gb, X, lambda R: gb.predict_proba(R)[:, 0], 0)


@pytest.mark.parametrize("cls", [GradientBoostingRegressor, HistGradientBoostingRegressor])
def test_regressors(cls):
    X, y = _table(load_diabetes)
    model = cls(random_state=0, **({"n_estimators": 40} if cls is GradientBoostingRegressor else {"max_iter": 40}))
    model.fit(X, y)
    _check(model, X, model.predict, 0)


def test_one_hot_pipeline_raw_columns_move_with_their_children():
    """A raw column kept from the row keeps all its one-hot children: the hybrid row of raw columns."""
    raw = adult_data().iloc[:1500]
    keep = ["age", "education", "marital-status", "occupation", "sex", "hours-per-week", "capital-gain"]
    cats = ["education", "marital-status", "occupation", "sex"]
    X = raw[keep].astype({c: float for c in keep if c not in cats})
    y = (raw.income == ">50K").astype(int)
    pre = ColumnTransformer([("cat", OneHotEncoder(handle_unknown="ignore", sparse_output=False), cats)],
                            remainder="passthrough")
    for final in (HistGradientBoostingClassifier(max_iter=30, random_state=0),
                  GradientBoostingClassifier(n_estimators=25, max_depth=4, random_state=0)):
        pipe = make_pipeline(pre, final).fit(X, y)
        _check(pipe, X, lambda R: pipe.predict_proba(R)[:, 1], 1, rows=(0, 9))


def test_what_it_does_not_read_gives_none_and_masked_outputs_builds_the_rows():
    X, y = _table(load_breast_cancer)
    X = X.iloc[:, :6]
    forest = RandomForestClassifier(n_estimators=10, random_state=0).fit(X, y)
    assert HybridOutputs.of(ModelAdapter.for_table(forest, X), 1) is None
    cat = X.assign(band=pd.cut(load_breast_cancer(as_frame=True).data["worst concave points"], 8, labels=False))
    hgb_cat = HistGradientBoostingClassifier(max_iter=30, categorical_features=[6], random_state=0).fit(cat, y)
    assert any(t.is_cat is not None for t in forest_of(hgb_cat).trees)  # it splits on the categories
    assert HybridOutputs.of(ModelAdapter.for_table(hgb_cat, cat), 1) is None
    # a classic tree given a NaN: None, and masked_outputs computes the rows itself (the model's own error or value)
    gb = GradientBoostingClassifier(n_estimators=5, random_state=0).fit(X, y)
    adapter = ModelAdapter.for_table(gb, X)
    hybrid = HybridOutputs.of(adapter, 1)
    Z = np.asarray(adapter.codec.encode(X), dtype=float)
    x = Z[0].copy()
    x[2] = np.nan
    assert hybrid(x, [np.arange(3)], Z[:10]) is None
    inf = Z[0].copy()
    inf[1] = np.inf
    assert hybrid(inf, [np.arange(3)], Z[:10]) is None

    class Fn:
        calls = 0

        def __call__(self, a):
            Fn.calls += 1
            return adapter.outputs(a)[:, 1]

        def expected_outputs(self, x, keep_sets, background):
            return None

    got = masked_outputs(Fn(), Z[0], [np.arange(3), np.array([], int)], Z[:10])
    assert Fn.calls == 1
    np.testing.assert_array_equal(got, masked_outputs(lambda a: adapter.outputs(a)[:, 1], Z[0],
                                                      [np.arange(3), np.array([], int)], Z[:10]))


def test_a_model_refitted_in_place_is_read_again():
    X, y = _table(load_breast_cancer)
    X = X.iloc[:, :8]
    model = HistGradientBoostingClassifier(max_iter=10, random_state=0).fit(X.iloc[:200], y.iloc[:200])
    hybrid = HybridOutputs.of(ModelAdapter.for_table(model, X), 1)
    model.fit(X.iloc[200:], y.iloc[200:])
    Z = X.to_numpy()
    bg_rows = np.arange(0, 60, 2)
    sets = _sets(X.shape[1])
    np.testing.assert_allclose(hybrid(Z[3], sets, Z[bg_rows]),
                               _oracle(lambda R: model.predict_proba(R)[:, 1], X, 3, bg_rows, sets), rtol=0, atol=1e-12)
