"""A scikit-learn model fitted on float64 columns is given the array its validation makes (``explainers._array_input``):
the same outputs bit for bit, without scikit-learn's per-column dtype checks (issue 27: about 70 ms of every call on
10,000 columns), and one fitted on integer columns (a one-hot table read from a CSV: issue 23); models that may read a
column by name, tables of mixed dtypes, and integer rows holding a missing value are called as before.

Oracle: the estimator's own method on the DataFrame the adapter decodes (``adapter.raw``: what it was called with
before); equality with ``np.array_equal``, not a tolerance. (The same rows sliced from another frame can differ in the
last bit: BLAS sums in the order of the memory layout.)
"""
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.compose import ColumnTransformer
from sklearn.datasets import load_breast_cancer, load_iris
from sklearn.ensemble import GradientBoostingClassifier, HistGradientBoostingClassifier, RandomForestClassifier
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import FunctionTransformer, StandardScaler
from sklearn.svm import LinearSVC
from sklearn.utils import validation

from explainers.model_adapter import ModelAdapter


def _frame(loader):
    d = loader(as_frame=True)
    return d.data, d.target


@pytest.fixture
def dtype_checks(monkeypatch):
    """Counts scikit-learn's per-column dtype checks of a DataFrame (one per column a call)."""
    seen = []
    real = validation._pandas_dtype_needs_early_conversion

    def counting(dtype):
        seen.append(dtype)
        return real(dtype)
    monkeypatch.setattr(validation, "_pandas_dtype_needs_early_conversion", counting)
    return seen


MODELS = [
    ("logistic", lambda: LogisticRegression(max_iter=200), ("predict_proba", "predict")),
    ("scaled logistic", lambda: Pipeline([("s", StandardScaler()), ("m", LogisticRegression(max_iter=500))]),
     ("predict_proba", "predict")),
    ("linear svc margin", lambda: LinearSVC(), ("decision_function", "predict")),
    ("forest", lambda: RandomForestClassifier(30, random_state=0), ("predict_proba", "predict")),
    ("boosted", lambda: HistGradientBoostingClassifier(max_iter=20, random_state=0), ("predict_proba", "predict")),
]


@pytest.mark.parametrize("make, methods", [m[1:] for m in MODELS], ids=[m[0] for m in MODELS])
@pytest.mark.parametrize("loader", [load_breast_cancer, load_iris], ids=["binary", "three classes"])
def test_outputs_equal_the_models_own_bit_for_bit_with_no_per_column_check(make, methods, loader, dtype_checks):
    adapter, Z = _calls_equal_on_the_array(make, *_frame(loader), methods, dtype_checks)
    assert np.array_equal(adapter.outputs(Z), adapter.outputs(Z.to_numpy()))


def _calls_equal_on_the_array(make, X, y, methods, dtype_checks):
    """Fit ``make()`` on half of ``X``; each method on the other half's encoded rows is given the array (no per-column
    dtype check, no warning) and equals the model's own call on the table (oracle). Returns (adapter, those rows)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # convergence
        model = make().fit(X.iloc[::2], y.iloc[::2])
    adapter = ModelAdapter.for_table(model, X)
    assert adapter._array_input is not None
    Z = adapter.codec.encode(X.iloc[1::2])
    for method in methods:
        adapter._call(Z.iloc[:3], method)  # its first use checks it on the probe (the DataFrame's checks run there)
        dtype_checks.clear()
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # no "X does not have valid feature names" reaches the user
            ours = np.asarray(adapter._call(Z, method))
        assert dtype_checks == []  # the model was given the array: no per-column dtype check
        theirs = np.asarray(getattr(model, method)(adapter.raw(Z)))
        assert ours.dtype == theirs.dtype and np.array_equal(ours, theirs)
    return adapter, Z


def test_a_regressor_and_the_guards_fingerprint_too():
    X, y = _frame(load_breast_cancer)
    model = Ridge().fit(X, y)
    adapter = ModelAdapter.for_table(model, X)
    Z = adapter.codec.encode(X)
    assert adapter._array_input is not None
    assert np.array_equal(adapter.outputs(Z)[:, 0], model.predict(adapter.raw(Z)))
    assert adapter.fingerprint(Z.iloc[:20]) == adapter.fingerprint(Z.iloc[:20])


def _name_reader(X):
    return Pipeline([("pick", ColumnTransformer([("keep", "passthrough", list(X.columns[:5]))])),
                     ("m", LogisticRegression(max_iter=200))])


def _squares(X):
    return Pipeline([("f", FunctionTransformer(lambda t: t ** 2)), ("m", LogisticRegression(max_iter=200))])


@pytest.mark.parametrize("case", ["column transformer", "function transformer", "integer column", "fitted on an array"])
def test_models_that_may_read_names_and_tables_not_all_float64_are_given_the_table(case, monkeypatch):
    X, y = _frame(load_breast_cancer)
    if case == "integer column":
        X = X.assign(**{X.columns[0]: (X.iloc[:, 0] * 10).round().astype(np.int64)})
    fit_on = X.to_numpy() if case == "fitted on an array" else X
    make = {"column transformer": _name_reader, "function transformer": _squares}.get(
        case, lambda X: LogisticRegression(max_iter=200))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = make(X).fit(fit_on, y)
    adapter = ModelAdapter.for_table(model, X)
    assert adapter._array_input is None
    given, real = [], type(model).predict_proba

    def spy(self, data):
        given.append(type(data))
        return real(self, data)
    monkeypatch.setattr(type(model), "predict_proba", spy)
    Z = adapter.codec.encode(X.iloc[:40])
    out = adapter.outputs(Z)
    assert given == [np.ndarray if case == "fitted on an array" else pd.DataFrame]  # as before: the table it knows
    assert np.array_equal(out, real(model, adapter.raw(Z)))


def test_a_method_that_differs_on_the_array_keeps_the_dataframe(monkeypatch):
    X, y = _frame(load_breast_cancer)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # convergence: the outputs are compared, not the fit
        model = LogisticRegression(max_iter=200).fit(X, y)
    adapter = ModelAdapter.for_table(model, X)
    real = type(model).predict_proba

    def by_type(self, data):  # a model that answers otherwise when not given a DataFrame
        out = real(self, data)
        return out if isinstance(data, pd.DataFrame) else out + 1.0
    monkeypatch.setattr(type(model), "predict_proba", by_type)
    Z = adapter.codec.encode(X.iloc[:10])
    assert np.array_equal(adapter.outputs(Z), model.predict_proba(adapter.raw(Z)))
    assert adapter._array_input._same == {"predict_proba": False}


def _integer_table():
    """Breast cancer's measurements times 100, rounded, as int64 columns, beside three one-hot int64 columns of a
    binned feature (the shape of a one-hot table read from a CSV)."""
    X, y = _frame(load_breast_cancer)
    ints = (X * 100).round().astype(np.int64)
    size = pd.get_dummies(pd.qcut(X["mean radius"], 3, labels=["small", "mid", "large"]), prefix="radius", dtype=np.int64)
    return pd.concat([ints, size], axis=1), y


INTEGER_MODELS = [
    ("boosted", lambda: GradientBoostingClassifier(n_estimators=30, random_state=0), ("predict_proba", "decision_function")),
    ("forest", lambda: RandomForestClassifier(30, random_state=0), ("predict_proba", "predict")),
    ("logistic", lambda: LogisticRegression(max_iter=300), ("predict_proba", "decision_function")),
]


@pytest.mark.parametrize("make, methods", [m[1:] for m in INTEGER_MODELS], ids=[m[0] for m in INTEGER_MODELS])
def test_an_integer_table_is_given_its_array_with_the_same_outputs(make, methods, dtype_checks):
    X, y = _integer_table()
    assert set(X.dtypes) == {np.dtype(np.int64)} and X.shape[1] == 33
    adapter, Z = _calls_equal_on_the_array(make, X, y, methods, dtype_checks)
    if "decision_function" in methods:  # the adapter's own method (Tree and Linear SHAP's margins) is the same call
        assert np.array_equal(adapter.decision_function(Z), adapter.model.decision_function(adapter.raw(Z)))


def test_integer_rows_holding_a_missing_value_are_given_the_table(monkeypatch):
    X, y = _integer_table()
    model = HistGradientBoostingClassifier(max_iter=20, random_state=0).fit(X, y)
    adapter = ModelAdapter.for_table(model, X)
    assert adapter._array_input is not None
    given, real = [], type(model).predict_proba

    def spy(self, data):
        given.append(type(data).__name__)
        return real(self, data)
    monkeypatch.setattr(type(model), "predict_proba", spy)
    Z = adapter.codec.encode(X.iloc[:40]).to_numpy().copy()
    adapter.outputs(Z)  # checks the method on the probe (two calls), then the array (one)
    assert given[-1] == "ndarray"
    Z[3, 0] = np.nan  # a missing value: that column decodes as float64 beside 32 int64 columns
    table = adapter.raw(Z)
    assert set(table.dtypes) == {np.dtype(np.int64), np.dtype(np.float64)}
    out = adapter.outputs(Z)
    assert given[-1] == "DataFrame"
    assert np.array_equal(out, real(model, table)) and np.isfinite(out).all()
