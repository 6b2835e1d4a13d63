"""A forest's outputs tree by tree (``explainers._forest_calls``) equal scikit-learn's own, bit for bit, and every
other model is called as itself.

Oracle: the estimator's own ``predict_proba`` / ``predict`` (joblib over the trees), on real data (breast cancer,
diabetes, iris) and a one-hot pipeline; equality with ``np.array_equal``, not a tolerance.
"""
import numpy as np
import pandas as pd
import pytest
from sklearn.compose import ColumnTransformer
from sklearn.datasets import load_breast_cancer, load_diabetes, load_iris
from sklearn.ensemble import (ExtraTreesClassifier, ExtraTreesRegressor, GradientBoostingClassifier,
                              RandomForestClassifier, RandomForestRegressor)
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

from explainers._codec import TabularCodec
from explainers._forest_calls import forest_outputs, model_call
from explainers.model_adapter import ModelAdapter


def _frame(loader):
    d = loader(as_frame=True)
    return d.data, d.target


@pytest.mark.parametrize("forest", [RandomForestClassifier(60, random_state=0, max_samples=0.7),
                                    ExtraTreesClassifier(40, random_state=1, class_weight="balanced")],
                         ids=["rf", "extra-trees"])
@pytest.mark.parametrize("loader", [load_breast_cancer, load_iris], ids=["binary", "three classes"])
def test_classifier_probabilities_equal_sklearns_bit_for_bit(forest, loader):
    X, y = _frame(loader)
    forest.fit(X.iloc[::2], y.iloc[::2])
    for rows in (X.iloc[:1], X.iloc[1::2], X.to_numpy()[:7]):
        ours = forest_outputs(forest, rows, "predict_proba")
        assert ours is not None and np.array_equal(ours, forest.predict_proba(rows))


@pytest.mark.parametrize("forest", [RandomForestRegressor(50, random_state=0), ExtraTreesRegressor(30, random_state=0)],
                         ids=["rf", "extra-trees"])
def test_regressor_predictions_equal_sklearns_bit_for_bit(forest):
    X, y = _frame(load_diabetes)
    forest.fit(X.iloc[::2], y.iloc[::2])
    ours = forest_outputs(forest, X.iloc[1::2], "predict")
    assert ours is not None and ours.shape == (len(X.iloc[1::2]),)
    assert np.array_equal(ours, forest.predict(X.iloc[1::2]))


def test_a_pipeline_ending_in_a_forest_is_transformed_then_summed_as_sklearn_does():
    X, y = _frame(load_breast_cancer)
    X = X.iloc[:, :6].assign(band=pd.cut(X.iloc[:, 0], 4, labels=["a", "b", "c", "d"]).astype(str))
    num = list(X.columns[:6])
    pipe = Pipeline([("prep", ColumnTransformer([("num", StandardScaler(), num),
                                                 ("cat", OneHotEncoder(handle_unknown="ignore"), ["band"])])),
                     ("rf", RandomForestClassifier(40, random_state=0))]).fit(X, y)
    assert np.array_equal(forest_outputs(pipe, X.iloc[:50], "predict_proba"), pipe.predict_proba(X.iloc[:50]))
    adapter = ModelAdapter(pipe, TabularCodec(X))  # the adapter takes this path: the same outputs as sklearn's
    assert np.array_equal(adapter.outputs(adapter.codec.encode(X.iloc[:9])), pipe.predict_proba(X.iloc[:9]))


def test_every_other_model_is_called_as_itself():
    X, y = _frame(load_breast_cancer)

    class Shifted(RandomForestClassifier):  # a subclass may change predict_proba: never bypassed
        def predict_proba(self, X):
            return super().predict_proba(X) * 0 + 0.5

    for model in (GradientBoostingClassifier(n_estimators=5).fit(X, y), Shifted(5, random_state=0).fit(X, y)):
        assert forest_outputs(model, X.iloc[:3], "predict_proba") is None
        assert np.array_equal(model_call(model, X.iloc[:3], "predict_proba"), model.predict_proba(X.iloc[:3]))
    multi = RandomForestRegressor(5, random_state=0).fit(X, np.c_[y, y])  # two outputs: sklearn's own call
    assert forest_outputs(multi, X.iloc[:3], "predict") is None
    assert forest_outputs(RandomForestClassifier(5), X.iloc[:3], "predict_proba") is None  # unfitted: sklearn raises
