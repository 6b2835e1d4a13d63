"""A HistGradientBoosting model's outputs in one compiled walk (``explainers._hist_calls``) equal scikit-learn's own,
bit for bit; models or rows it does not vouch for, or a process without numba, get scikit-learn's own method.

Oracle: the estimator's own ``predict_proba`` / ``decision_function`` / ``predict`` on real data (breast cancer with
missing values, wine, diabetes) and a one-hot pipeline on the Adult census extract; ``np.array_equal``, no tolerance.
"""
import sys

import numpy as np
import pandas as pd
import pytest
from sklearn.compose import ColumnTransformer
from sklearn.datasets import load_breast_cancer, load_diabetes, load_wine
from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder

import numba  # noqa: F401  (the path is taken only once numba is loaded)
from explainers._forest_calls import model_call
from explainers._hist_calls import hist_outputs
from tests.shared_data import adult_data


def _frame(loader):
    d = loader(as_frame=True)
    return d.data.astype(float), d.target


def _same(model, rows, method):
    ours = hist_outputs(model, rows, method)
    theirs = getattr(model, method)(rows)
    assert ours is not None and ours.shape == theirs.shape and ours.dtype == theirs.dtype
    assert np.array_equal(ours, theirs)


@pytest.mark.parametrize("method", ["predict_proba", "decision_function"])
def test_binary_classifier_with_missing_values(method):
    X, y = _frame(load_breast_cancer)
    X = X.mask(np.random.default_rng(0).random(X.shape) < 0.1)
    hgb = HistGradientBoostingClassifier(max_iter=50, random_state=0).fit(X.iloc[::2], y.iloc[::2])
    for rows in (X.iloc[:1], X.iloc[1::2]):
        _same(hgb, rows, method)
    arrays = HistGradientBoostingClassifier(max_iter=30, random_state=0).fit(X.to_numpy(), y)
    _same(arrays, X.to_numpy()[:9], method)


@pytest.mark.parametrize("method", ["predict_proba", "decision_function"])
def test_three_classes(method):
    X, y = _frame(load_wine)
    hgb = HistGradientBoostingClassifier(max_iter=20, random_state=0).fit(X, y)
    _same(hgb, X, method)


@pytest.mark.parametrize("loss", ["squared_error", "poisson"])
def test_regressors_and_their_link(loss):
    X, y = _frame(load_diabetes)
    hgb = HistGradientBoostingRegressor(max_iter=40, loss=loss, random_state=0).fit(X, y)
    _same(hgb, X.iloc[:50], "predict")


def test_one_hot_pipeline():
    raw = adult_data().iloc[:2000].dropna()
    cats = ["workclass", "education", "marital-status", "occupation", "sex"]
    X = raw[cats + ["age", "hours-per-week", "capital-gain"]]
    pre = ColumnTransformer([("cat", OneHotEncoder(handle_unknown="ignore", sparse_output=False), cats)],
                            remainder="passthrough")
    pipe = make_pipeline(pre, HistGradientBoostingClassifier(max_iter=40, random_state=0)).fit(X, raw.income)
    _same(pipe, X.iloc[:300], "predict_proba")
    assert np.array_equal(model_call(pipe, X.iloc[:7], "predict_proba"), pipe.predict_proba(X.iloc[:7]))


def test_what_it_does_not_vouch_for_is_left_to_sklearn(monkeypatch):
    X, y = _frame(load_breast_cancer)
    hgb = HistGradientBoostingClassifier(max_iter=10, random_state=0).fit(X, y)
    assert hist_outputs(hgb, X.to_numpy()[:3], "predict_proba") is None  # fitted on names, given an array
    assert hist_outputs(hgb, X.iloc[:3, ::-1], "predict_proba") is None  # other column order
    assert hist_outputs(hgb, X.iloc[:3], "predict") is None  # a method it does not compute
    cat = X.iloc[:, :5].assign(band=pd.cut(X["worst concave points"], 8, labels=False))
    with_cats = HistGradientBoostingClassifier(max_iter=30, categorical_features=[5], random_state=0).fit(cat, y)
    assert hist_outputs(with_cats, cat.iloc[:3], "predict_proba") is None
    monkeypatch.delitem(sys.modules, "numba")  # a process that never loaded numba does not load it for this
    assert hist_outputs(hgb, X.iloc[:3], "predict_proba") is None


def test_a_large_call_is_left_to_sklearns_threads(monkeypatch):
    from explainers import _hist_calls

    X, y = _frame(load_breast_cancer)
    hgb = HistGradientBoostingClassifier(max_iter=10, random_state=0).fit(X, y)
    monkeypatch.setattr(_hist_calls, "COMPILED_MAX_ROWS", 5)
    assert hist_outputs(hgb, X.iloc[:6], "predict_proba") is None
    _same(hgb, X.iloc[:5], "predict_proba")


def test_a_model_refitted_or_grown_in_place_is_walked_as_it_is_now():
    """The trees are read again after a refit or a warm start (more trees in the same list): the mutation guard's
    fingerprint, which calls the model through this walk, sees the change."""
    X, y = _frame(load_breast_cancer)
    hgb = HistGradientBoostingClassifier(max_iter=5, random_state=0, warm_start=True).fit(X, y)
    before = hist_outputs(hgb, X.iloc[:20], "predict_proba")
    hgb.set_params(max_iter=15).fit(X, y)  # warm start: ten more trees appended to the same list
    grown = hist_outputs(hgb, X.iloc[:20], "predict_proba")
    assert np.array_equal(grown, hgb.predict_proba(X.iloc[:20])) and not np.array_equal(grown, before)
    hgb.set_params(warm_start=False, max_iter=5).fit(X.iloc[::2], y.iloc[::2])
    _same(hgb, X.iloc[:20], "predict_proba")
