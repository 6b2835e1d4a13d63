"""Permutation feature importance (issue 24's proof of the table of methods, issue 25's view).

Independent oracles: scikit-learn's ``sklearn.inspection.permutation_importance`` on the same seed (it shuffles
one column per model call; Candor stacks a column's repeats into one call, with its own loop), and a planted
model that never reads one column, whose importance is then exactly 0 in every repeat.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.compose import ColumnTransformer
from sklearn.datasets import load_breast_cancer, make_regression
from sklearn.ensemble import GradientBoostingClassifier
from sklearn.inspection import permutation_importance
from sklearn.linear_model import LinearRegression
from sklearn.pipeline import make_pipeline

from explainers.permutation_importance import PermutationImportanceExplainer
from explainers.types._importance import PermutationImportance


@pytest.fixture(scope="module")
def cancer():
    data = load_breast_cancer(as_frame=True)
    X, y = data.data, data.target.to_numpy()
    model = GradientBoostingClassifier(n_estimators=30, max_depth=2, random_state=0).fit(X.iloc[:400], y[:400])
    return model, X.iloc[400:], y[400:]


@pytest.mark.parametrize("seed", [0, 7])
def test_equals_scikit_learn_on_the_same_seed(cancer, seed):
    model, X, y = cancer
    ours = PermutationImportanceExplainer(lambda a: model.predict_proba(a)[:, 1], scoring="roc_auc", n_repeats=5,
                                          seed=seed).explain(X, y)
    theirs = permutation_importance(model, X, y, scoring="roc_auc", n_repeats=5, random_state=seed)
    np.testing.assert_allclose(ours.repeats, theirs.importances, atol=1e-12)
    np.testing.assert_allclose(ours.importances, theirs.importances_mean, atol=1e-12)
    np.testing.assert_allclose(ours.standard_error, theirs.importances.std(axis=1, ddof=1) / np.sqrt(5), atol=1e-12)
    assert ours.importances.max() > 0.005  # the model relies on some feature: not all zeros
    assert (ours.scoring, ours.n_repeats, ours.seed, ours.n_rows) == ("roc_auc", 5, seed, len(X))


def test_accuracy_and_r2_scorings_equal_scikit_learn(cancer):
    model, X, y = cancer
    ours = PermutationImportanceExplainer(lambda a: model.predict(a).astype(float), scoring="accuracy", n_repeats=3,
                                          seed=1).explain(X, y)
    theirs = permutation_importance(model, X, y, scoring="accuracy", n_repeats=3, random_state=1)
    np.testing.assert_allclose(ours.repeats, theirs.importances, atol=1e-12)
    Xr, yr = make_regression(n_samples=120, n_features=4, noise=1.0, random_state=0)
    Xr = pd.DataFrame(Xr, columns=list("abcd"))
    reg = LinearRegression().fit(Xr, yr)
    ours = PermutationImportanceExplainer(reg.predict, scoring="r2", n_repeats=4, seed=3).explain(Xr, yr)
    theirs = permutation_importance(reg, Xr, yr, scoring="r2", n_repeats=4, random_state=3)
    np.testing.assert_allclose(ours.importances, theirs.importances_mean, atol=1e-12)


def test_a_column_the_model_never_reads_has_importance_zero():
    X, y = make_regression(n_samples=200, n_features=3, n_informative=2, shuffle=False, noise=0.5, random_state=0)
    X = pd.DataFrame(X, columns=["signal_a", "signal_b", "ignored"])
    planted = make_pipeline(ColumnTransformer([("keep", "passthrough", ["signal_a", "signal_b"])]),
                            LinearRegression()).fit(X, y)
    r = PermutationImportanceExplainer(planted.predict, scoring="r2", n_repeats=6, seed=0).explain(X, y)
    assert r.repeats[2].tolist() == [0.0] * 6 and r.importances[2] == 0.0 and r.standard_error[2] == 0.0
    assert r.importances[0] > 0.1 and r.importances[1] > 0.1  # the columns it reads matter
    assert np.all(r.standard_error[:2] > 0) and np.all(r.standard_error[:2] < r.importances[:2])


def test_round_trips_through_its_dict_and_refuses_what_it_cannot_score(cancer):
    model, X, y = cancer
    r = PermutationImportanceExplainer(lambda a: model.predict_proba(a)[:, 1], scoring="roc_auc", n_repeats=2,
                                       seed=0).explain(X.iloc[:40], y[:40], rows="held-out rows")
    back = PermutationImportance.from_dict(r.to_dict())
    assert back.to_dict() == r.to_dict() and back.repeats.shape == (30, 2) and "40 held-out rows" in back.source
    one_class = np.ones(len(X))
    assert "both the explained class" in PermutationImportanceExplainer.is_compatible(one_class, "roc_auc")
    with pytest.raises(ValueError, match="both the explained class"):
        PermutationImportanceExplainer(lambda a: np.zeros(len(a)), scoring="roc_auc").explain(X, one_class)
    with pytest.raises(ValueError, match="scoring must be one of"):
        PermutationImportanceExplainer(lambda a: a, scoring="f1")


def test_roc_auc_equals_scikit_learn_with_ties():
    from sklearn.metrics import roc_auc_score

    from explainers.permutation_importance import roc_auc

    rng = np.random.default_rng(0)
    for _ in range(20):
        y = rng.integers(0, 2, 60)
        out = np.round(rng.normal(size=60) + y, 1)  # rounded: many ties
        assert abs(roc_auc(y, out) - roc_auc_score(y, out)) < 1e-12
    assert roc_auc(np.array(["no", "yes", "yes"]), [0.1, 0.9, 0.1]) == 0.75  # the larger label is the positive
