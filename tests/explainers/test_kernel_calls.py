"""A binary RBF SVC's decision function in matrix form (``explainers._kernel_calls``) equals scikit-learn's own.

Oracle: the estimator's own ``decision_function`` (libsvm), on real UCI Adult rows through a one-hot Pipeline
(standardised numbers, the app's ModelAdapter as permutation SHAP calls it) and on breast cancer. Equal to rounding
(1e-9 of 1 + |value|), not bit for bit, and libsvm is asked for only the checked rows of a large call.
"""
import numpy as np
import pandas as pd
import pytest
from sklearn.compose import ColumnTransformer
from sklearn.datasets import load_breast_cancer, load_iris
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler
from sklearn.svm import SVC, NuSVC

from explainers import _kernel_calls
from explainers._codec import TabularCodec
from explainers._kernel_calls import CHECK_ROWS, svc_outputs
from explainers.model_adapter import ModelAdapter
from tests.shared_data import adult_data


@pytest.fixture(scope="module")
def adult():
    df = adult_data().sample(1500, random_state=0).reset_index(drop=True)
    y = (df.pop("income").str.rstrip(".") == ">50K").to_numpy()
    strings = [c for c in df.columns if not pd.api.types.is_numeric_dtype(df[c])]
    numbers = [c for c in df.columns if c not in strings]
    prep = ColumnTransformer([("num", StandardScaler(), numbers),
                              ("str", OneHotEncoder(handle_unknown="ignore", sparse_output=False), strings)])
    pipe = Pipeline([("prep", prep), ("svc", SVC())]).fit(df.iloc[:1000], y[:1000])
    return df, pipe


def _counting(monkeypatch):
    """Count the rows libsvm's own decision function is asked for (any SVC)."""
    seen = {"rows": 0}
    own = SVC.decision_function

    def counted(self, X):
        seen["rows"] += len(X)
        return own(self, X)

    monkeypatch.setattr(SVC, "decision_function", counted)
    return seen


def test_adult_pipeline_outputs_match_libsvm_and_libsvm_sees_only_the_checked_rows(adult, monkeypatch):
    df, pipe = adult
    codec = TabularCodec(df)
    adapter = ModelAdapter(pipe, codec)
    rows = df.iloc[1000:]
    # coalition rows as permutation SHAP builds them: each row's columns mixed with a background row's
    rng = np.random.default_rng(0)
    Z = codec.encode(rows).to_numpy(dtype=float)
    bg = codec.encode(df.iloc[:100]).to_numpy(dtype=float)
    mixed = np.where(rng.random(Z.shape) < 0.5, Z, bg[rng.integers(0, 100, len(Z))])
    expected = pipe.decision_function(codec.decode(mixed))
    seen = _counting(monkeypatch)
    got = adapter.outputs(pd.DataFrame(mixed, columns=codec.names))
    assert got.shape == (len(mixed), 1)
    np.testing.assert_allclose(got[:, 0], expected, rtol=1e-10, atol=1e-10)
    assert seen["rows"] == CHECK_ROWS  # libsvm computed the checked rows only, not all 500


@pytest.mark.parametrize("est", [SVC(gamma=0.01), SVC(C=10.0, class_weight="balanced"), NuSVC(nu=0.3)],
                         ids=["svc-gamma", "svc-weighted", "nusvc"])
def test_breast_cancer_svcs_match_their_own_decision_function(est):
    d = load_breast_cancer()
    X = StandardScaler().fit_transform(d.data)
    est.fit(X[::2], d.target[::2])
    got = svc_outputs(est, X[1::2], "decision_function")
    assert got is not None
    np.testing.assert_allclose(got, est.decision_function(X[1::2]), rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("case", ["few rows", "predict", "multiclass", "poly kernel", "subclass"])
def test_other_models_and_calls_are_left_to_the_model(case):
    d = load_iris() if case == "multiclass" else load_breast_cancer()
    X = StandardScaler().fit_transform(d.data)
    y = d.target

    class Mine(SVC):
        pass

    est = {"poly kernel": SVC(kernel="poly"), "subclass": Mine()}.get(case, SVC()).fit(X, y)
    rows = X[:10] if case == "few rows" else X
    assert svc_outputs(est, rows, "predict" if case == "predict" else "decision_function") is None


def test_a_call_whose_checked_rows_differ_is_the_models_own(adult, monkeypatch):
    df, pipe = adult
    rows = df.iloc[1000:1200]
    monkeypatch.setattr(_kernel_calls, "_kernel_sum", lambda svc, X: np.zeros(len(X)))  # a wrong computation
    assert np.array_equal(svc_outputs(pipe, rows, "decision_function"), pipe.decision_function(rows))
