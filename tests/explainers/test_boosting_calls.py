"""A gradient boosting model's outputs without its validation (``explainers._boosting_calls``) equal scikit-learn's
own, bit for bit; rows or models the shortcut cannot vouch for go to scikit-learn's own method.

Oracle: the estimator's own ``predict_proba`` / ``decision_function`` / ``predict`` on real data (breast cancer, iris,
diabetes) and a one-hot pipeline; equality with ``np.array_equal``, not a tolerance.
"""
import numpy as np
import pandas as pd
import pytest
from sklearn.compose import ColumnTransformer
from sklearn.datasets import load_breast_cancer, load_diabetes, load_iris
from sklearn.ensemble import GradientBoostingClassifier, GradientBoostingRegressor
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

from explainers._boosting_calls import boosting_outputs
from explainers._codec import TabularCodec
from explainers._forest_calls import model_call
from explainers.model_adapter import ModelAdapter


def _frame(loader):
    d = loader(as_frame=True)
    return d.data, d.target


@pytest.mark.parametrize("loader", [load_breast_cancer, load_iris], ids=["binary", "three classes"])
@pytest.mark.parametrize("method", ["predict_proba", "decision_function"])
def test_classifier_outputs_equal_sklearns_bit_for_bit(loader, method):
    X, y = _frame(loader)
    gb = GradientBoostingClassifier(n_estimators=40, max_depth=3, random_state=0).fit(X.iloc[::2], y.iloc[::2])
    for rows in (X.iloc[:1], X.iloc[1::2], X.to_numpy()[:7], X.to_numpy(dtype=np.float32)[:5]):
        ours = boosting_outputs(gb, rows, method)
        theirs = getattr(gb, method)(rows)
        assert ours is not None and ours.shape == theirs.shape and ours.dtype == theirs.dtype
        assert np.array_equal(ours, theirs)


def test_regressor_predictions_equal_sklearns_bit_for_bit():
    X, y = _frame(load_diabetes)
    gb = GradientBoostingRegressor(n_estimators=50, random_state=0, subsample=0.8).fit(X.iloc[::2], y.iloc[::2])
    ours = boosting_outputs(gb, X.iloc[1::2], "predict")
    assert ours is not None and ours.shape == (len(X.iloc[1::2]),)
    assert np.array_equal(ours, gb.predict(X.iloc[1::2]))
    assert boosting_outputs(gb, X.iloc[:3], "predict_proba") is None  # a regressor has no probabilities


def test_integer_columns_are_cast_as_validation_casts_them():
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.integers(0, 50, size=(300, 4)), columns=list("abcd"))
    y = (X["a"] + 3 * X["c"] > 90).astype(int)
    gb = GradientBoostingClassifier(n_estimators=20, random_state=0).fit(X, y)
    assert np.array_equal(boosting_outputs(gb, X, "predict_proba"), gb.predict_proba(X))


def test_a_one_hot_pipeline_is_transformed_once_and_summed_as_sklearn_does():
    X, y = _frame(load_breast_cancer)
    X = X.iloc[:, :6].assign(band=pd.cut(X.iloc[:, 0], 4, labels=["a", "b", "c", "d"]).astype(str))
    num = list(X.columns[:6])
    for sparse in (True, False):  # a sparse one-hot output goes to the booster's own method, not the pipeline's
        prep = ColumnTransformer([("num", StandardScaler(), num),
                                  ("cat", OneHotEncoder(handle_unknown="ignore", sparse_output=sparse), ["band"])],
                                 sparse_threshold=1.0 if sparse else 0.0)
        pipe = Pipeline([("prep", prep), ("gb", GradientBoostingClassifier(n_estimators=30, random_state=0))]).fit(X, y)
        assert np.array_equal(boosting_outputs(pipe, X.iloc[:50], "predict_proba"), pipe.predict_proba(X.iloc[:50]))
        adapter = ModelAdapter(pipe, TabularCodec(X))
        assert np.array_equal(adapter.outputs(adapter.codec.encode(X.iloc[:9])), pipe.predict_proba(X.iloc[:9]))


def test_rows_the_shortcut_cannot_vouch_for_get_sklearns_own_answer():
    X, y = _frame(load_breast_cancer)
    gb = GradientBoostingClassifier(n_estimators=10, random_state=0).fit(X, y)
    renamed = X.iloc[:3].rename(columns={X.columns[0]: "other"})
    assert boosting_outputs(gb, renamed, "predict_proba") is None  # names differ: sklearn's own check decides
    with pytest.raises(ValueError, match="feature names"):
        model_call(gb, renamed, "predict_proba")
    bad = X.iloc[:3].copy()
    bad.iloc[0, 0] = np.nan
    assert boosting_outputs(gb, bad, "predict_proba") is None
    with pytest.raises(ValueError, match="NaN"):
        model_call(gb, bad, "predict_proba")  # the model's own error, as before
    assert boosting_outputs(gb, X.to_numpy()[:3, :5], "predict_proba") is None
    with pytest.raises(ValueError, match="features"):
        model_call(gb, X.to_numpy()[:3, :5], "predict_proba")


def test_other_models_and_methods_are_left_to_sklearn():
    X, y = _frame(load_breast_cancer)

    class Mine(GradientBoostingClassifier):
        pass

    sub = Mine(n_estimators=5, random_state=0).fit(X, y)
    assert boosting_outputs(sub, X.iloc[:3], "predict_proba") is None
    assert boosting_outputs(GradientBoostingClassifier(), X.iloc[:3], "predict_proba") is None  # not fitted
    gb = GradientBoostingClassifier(n_estimators=5, random_state=0).fit(X, y)
    assert boosting_outputs(gb, X.iloc[:3], "predict") is None  # class labels: sklearn's own
    assert np.array_equal(model_call(gb, X.iloc[:3], "predict"), gb.predict(X.iloc[:3]))


@pytest.mark.parametrize("init", ["default", "zero", "stratified", "fitted"])
def test_the_init_estimators_rows_equal_sklearns_whatever_the_init(init):
    """A constant init (the default prior, ``"zero"``) is computed once per model and repeated; an init whose rows
    differ (a random dummy strategy, a fitted estimator) is left to scikit-learn's own ``_raw_predict``."""
    from sklearn.dummy import DummyClassifier
    from sklearn.linear_model import LogisticRegression

    from explainers import _boosting_calls

    X, y = _frame(load_breast_cancer)
    made = {"default": None, "zero": "zero", "stratified": DummyClassifier(strategy="stratified", random_state=0),
            "fitted": LogisticRegression(max_iter=5000)}[init]
    gb = GradientBoostingClassifier(n_estimators=20, max_depth=2, random_state=0, init=made).fit(X, y)
    for rows in (X.iloc[:1], X.iloc[3:40]):
        for method in ("predict_proba", "decision_function"):
            assert np.array_equal(boosting_outputs(gb, rows, method), getattr(gb, method)(rows))
    assert (_boosting_calls._INIT_ROWS[gb][1] is None) == (init in ("stratified", "fitted"))


def test_a_model_refitted_in_place_is_not_called_as_it_was():
    """The init row is kept per init estimator: a refit (another prior) is read again, so the mutation guard's
    fingerprint, which calls the model through here, sees the change."""
    X, y = _frame(load_breast_cancer)
    gb = GradientBoostingClassifier(n_estimators=10, max_depth=2, random_state=0).fit(X.iloc[:100], y.iloc[:100])
    before = boosting_outputs(gb, X.iloc[:20], "predict_proba")
    gb.fit(X.iloc[100:], y.iloc[100:])
    after = boosting_outputs(gb, X.iloc[:20], "predict_proba")
    assert np.array_equal(after, gb.predict_proba(X.iloc[:20])) and not np.array_equal(after, before)
