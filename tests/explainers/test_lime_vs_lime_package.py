"""Tabular LIME's vectorised path against the lime package itself (issue 23), on real models: the breast cancer
gradient boosting and a UCI Adult pipeline with categorical columns (one-hot encoder + gradient boosting).

Oracles are ``lime.lime_tabular.LimeTabularExplainer`` run directly: its neighbourhood (``__data_inverse``) for the
same seed, and, with many samples, its ``explain_instance`` weights for *other* seeds, which must agree with ours
within the two standard errors (a distributional check that does not rely on sharing random draws).
"""
import numpy as np
import pandas as pd
import pytest
from lime.lime_tabular import LimeTabularExplainer
from sklearn.compose import ColumnTransformer
from sklearn.ensemble import GradientBoostingClassifier
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import OneHotEncoder

from explainers import LimeExplainer

ADULT = ["age", "workclass", "fnlwgt", "education", "education-num", "marital-status", "occupation",
         "relationship", "race", "sex", "capital-gain", "capital-loss", "hours-per-week", "native-country", "income"]
CATS = ["workclass", "education", "marital-status", "occupation", "relationship", "race", "sex", "native-country"]


@pytest.fixture(scope="module")
def adult(shared_data):
    """Adult's 14 columns (strings as level codes, '?' a level of its own), a fitted pipeline, level names."""
    df = pd.read_csv(shared_data / "adult" / "adult.data", header=None, names=ADULT, skipinitialspace=True)
    df = df.dropna(how="all").sample(3000, random_state=0).reset_index(drop=True)
    y = (df.pop("income") == ">50K").astype(int).to_numpy()
    names = {}
    for c in CATS:
        cat = df[c].astype("category")
        names[df.columns.get_loc(c)] = [str(v) for v in cat.cat.categories]
        df[c] = cat.cat.codes
    X = df.astype(float)
    cat_idx = sorted(names)
    prep = ColumnTransformer([("cat", OneHotEncoder(handle_unknown="ignore"), cat_idx)], remainder="passthrough")
    model = Pipeline([("prep", prep), ("gb", GradientBoostingClassifier(n_estimators=60, random_state=0))])
    model.fit(X.to_numpy(), y)
    return X, model, names


def _lime_package(train, cats, names, seed, kernel_width=None):
    return LimeTabularExplainer(train, feature_names=[str(j) for j in range(train.shape[1])], class_names=["0", "1"],
                                categorical_features=cats, categorical_names=names, discretize_continuous=True,
                                discretizer="quartile", kernel_width=kernel_width, random_state=seed)


def _weights(exp, d):
    w = np.zeros(d)
    for j, v in exp.local_exp[1]:
        w[j] = v
    return w


def test_neighbourhood_is_lime_data_inverse_for_the_same_seed_on_adult(adult):
    """Binary representation identical, sampled values equal to rounding (truncated normal's inverse CDF)."""
    X, model, names = adult
    ours = LimeExplainer(model.predict_proba, training_data=X, class_names=("<=50K", ">50K"),
                         categorical_names=names)
    for row, seed in ((0, 0), (7, 11)):
        row_t = ours._to_lime(X.iloc[[row]].to_numpy())[0]
        binary, inverse = ours._space.sample(row_t, 3000, seed)
        ref = _lime_package(ours._train, sorted(names), names, seed)
        data, inv = ref._LimeTabularExplainer__data_inverse(row_t, 3000)
        np.testing.assert_array_equal(binary, data)
        np.testing.assert_allclose(inverse, inv, rtol=1e-9, atol=1e-9)
        assert np.unique(binary[:, sorted(names)]).tolist() == [0.0, 1.0]  # the categorical columns really vary


def _z_scores(ours_values, ours_se, lime_fits):
    ref, ref_se = lime_fits.mean(axis=0), lime_fits.std(axis=0, ddof=1) / np.sqrt(len(lime_fits))
    return (ours_values - ref) / np.sqrt(ours_se ** 2 + ref_se ** 2)


def test_many_samples_agree_with_lime_explain_instance_on_breast_cancer(bc, gb_model):
    """Ours (seeds 0-4, 4,000 samples a fit) vs lime's explain_instance (seeds 100-109): within the standard errors."""
    X, _, train, _ = bc
    predict = lambda a: gb_model.predict_proba(pd.DataFrame(a, columns=X.columns))  # noqa: E731
    ours = LimeExplainer(predict, training_data=X.iloc[train], class_names=("benign", "malignant"))
    train_t = X.iloc[train].to_numpy(dtype=float)
    for row in (3, 40):
        got = ours.explain(X.iloc[[row]], num_samples=4000)
        fits = np.array([_weights(_lime_package(train_t, [], {}, s).explain_instance(
            X.iloc[row].to_numpy(dtype=float), predict, labels=(1,), num_features=30, num_samples=4000), 30)
            for s in range(100, 110)])
        z = _z_scores(got.values, np.array(got.params["standard_error"]), fits)
        # SEs from 5 and 10 fits: z is roughly t with ~8 df (E z² ≈ 1.3, P(|z| > 4.5) ≈ 0.2 %)
        assert np.mean(z ** 2) < 2 and np.max(np.abs(z)) < 4.5, z
        assert np.corrcoef(got.values, fits.mean(axis=0))[0, 1] > 0.95


def test_many_samples_agree_with_lime_explain_instance_on_an_adult_pipeline(adult):
    X, model, names = adult
    ours = LimeExplainer(model.predict_proba, training_data=X, class_names=("<=50K", ">50K"), categorical_names=names)
    for row in (1, 5):
        got = ours.explain(X.iloc[[row]], num_samples=4000)
        row_t = ours._to_lime(X.iloc[[row]].to_numpy())[0]
        fits = np.array([_weights(_lime_package(ours._train, sorted(names), names, s).explain_instance(
            row_t, model.predict_proba, labels=(1,), num_features=14, num_samples=4000), 14) for s in range(100, 110)])
        z = _z_scores(got.values, np.array(got.params["standard_error"]), fits)
        assert np.mean(z ** 2) < 2 and np.max(np.abs(z)) < 4.5, z
        assert np.corrcoef(got.values, fits.mean(axis=0))[0, 1] > 0.95


def test_one_fit_is_lime_explain_instance_for_the_same_seed_on_adult(adult):
    """Same seed, same size: our fit's weights, intercept, score and local prediction are lime's (1e-9)."""
    X, model, names = adult
    ours = LimeExplainer(model.predict_proba, training_data=X, class_names=("<=50K", ">50K"), categorical_names=names)
    at = ours._row_at(X.iloc[2].to_numpy(dtype=float))
    row_t = at[0]
    (coef, intercept, score, local, _), = ours._fit_round(at, [5], 2000)
    exp = _lime_package(ours._train, sorted(names), names, 5).explain_instance(
        row_t, model.predict_proba, labels=(1,), num_features=14, num_samples=2000)
    np.testing.assert_allclose(coef, _weights(exp, 14), rtol=0, atol=1e-9)
    assert intercept == pytest.approx(exp.intercept[1], abs=1e-9) and score == pytest.approx(exp.score, abs=1e-9)
    assert local == pytest.approx(float(np.ravel(exp.local_pred)[0]), abs=1e-9)
