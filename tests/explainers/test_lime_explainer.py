"""LIME: weighted R² by hand, LIME's own oracle (T15 d), seeded determinism."""
import numpy as np
import pandas as pd
import pytest
from lime.lime_tabular import LimeTabularExplainer
from sklearn.linear_model import LinearRegression

from explainers import LimeExplainer, weighted_r2


def test_weighted_r2_by_hand():
    y, y_hat, w = np.array([1.0, 2, 3]), np.array([1.0, 2, 4]), np.array([1.0, 1, 2])
    mean = (1 + 2 + 6) / 4
    expected = 1 - 2 * 1 / ((1 - mean) ** 2 + (2 - mean) ** 2 + 2 * (3 - mean) ** 2)
    assert weighted_r2(y, y_hat, w) == pytest.approx(expected, abs=1e-12)
    assert weighted_r2(y, y, w) == 1.0


def test_t15d_lime_recovers_a_linear_function_exactly(rng):
    w = np.array([2.0, -1.0, 0.5])
    X = rng.normal(size=(200, 3))
    exp = LimeTabularExplainer(X, mode="regression", discretize_continuous=False, random_state=0).explain_instance(
        X[0], lambda a: a @ w, num_features=3, num_samples=500, model_regressor=LinearRegression())
    assert exp.score == pytest.approx(1.0, abs=1e-9)


@pytest.fixture(scope="module")
def lime_explainer(bc, gb_model):
    X, _, train, _ = bc
    predict = lambda a: gb_model.predict_proba(pd.DataFrame(a, columns=X.columns))  # noqa: E731
    return LimeExplainer(predict, training_data=X.iloc[train], class_names=("benign", "malignant"), num_samples=600)


def test_lime_explanation_is_seeded_and_complete(bc, gb_model, lime_explainer):
    X = bc[0]
    a, b = lime_explainer.explain(X.iloc[[3]]), lime_explainer.explain(X.iloc[[3]])
    np.testing.assert_array_equal(a.values, b.values)
    assert a.values.shape == (30,) and np.count_nonzero(a.values) == 30
    assert a.prediction == pytest.approx(gb_model.predict_proba(X.iloc[[3]])[0, 1])
    assert a.fidelity.metric == "r2" and a.fidelity.split == "neighborhood" and 0 < a.fidelity.value < 1
    assert -1 < a.params["heldout_r2"] <= 1
    assert a.params["kernel_width"] == pytest.approx(0.75 * np.sqrt(30))


def test_lime_refuses_missing_values(bc, lime_explainer):
    row = bc[0].iloc[0].to_numpy(dtype=float).copy()
    row[2] = np.nan
    with pytest.raises(ValueError, match="missing"):
        lime_explainer.explain(row)


def test_built_once_explainer_gives_what_a_fresh_one_gives_in_any_order(bc, gb_model):
    """LIME's explainer is built once per seed; each row must still equal a freshly built explainer's."""
    X, _, train, _ = bc
    predict = lambda a: gb_model.predict_proba(pd.DataFrame(a, columns=X.columns))  # noqa: E731
    shared = LimeExplainer(predict, training_data=X.iloc[train], class_names=("benign", "malignant"), seed=3)
    for row in (4, 9, 4):
        fresh = LimeExplainer(predict, training_data=X.iloc[train], class_names=("benign", "malignant"), seed=3)
        a, b = shared.explain(X.iloc[[row]]), fresh.explain(X.iloc[[row]])
        np.testing.assert_array_equal(a.values, b.values)
        assert a.fidelity.value == b.fidelity.value and a.params["heldout_r2"] == b.params["heldout_r2"]


def test_big_training_tables_are_summarised_by_a_seeded_sample(bc, gb_model):
    X, _, train, _ = bc
    predict = lambda a: gb_model.predict_proba(pd.DataFrame(a, columns=X.columns))  # noqa: E731
    big = LimeExplainer(predict, training_data=X, class_names=("b", "m"), max_training_rows=100)
    assert big._train.shape == (100, 30)
    assert big.source.endswith("training statistics from a seeded sample of 100 of 569 rows")
    same = LimeExplainer(predict, training_data=X, class_names=("b", "m"), max_training_rows=100)
    np.testing.assert_array_equal(big._train, same._train)  # seeded
    assert "seeded sample" not in LimeExplainer(predict, training_data=X, class_names=("b", "m")).source
