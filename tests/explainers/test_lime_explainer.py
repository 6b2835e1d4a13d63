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


# --- sampling error (issue 13): oracles are LIME fits run with the lime library directly -------------

def _direct_lime(bc, gb_model, row, seeds, n):
    """LIME's weights for ``row`` with a fresh ``LimeTabularExplainer(random_state=s)`` per seed, shape (len(seeds), 30)."""
    X, _, train, _ = bc
    predict = lambda a: gb_model.predict_proba(pd.DataFrame(a, columns=X.columns))  # noqa: E731
    out = []
    for s in seeds:
        exp = LimeTabularExplainer(X.iloc[train].to_numpy(dtype=float), feature_names=list(X.columns),
                                   class_names=["benign", "malignant"], discretize_continuous=True,
                                   discretizer="quartile", random_state=s).explain_instance(
            X.iloc[row].to_numpy(dtype=float), predict, labels=(1,), num_features=30, num_samples=n)
        w = np.zeros(30)
        for j, v in exp.local_exp[1]:
            w[j] = v
        out.append(w)
    return np.array(out)


def test_lime_values_and_standard_error_are_the_mean_and_spread_of_independent_lime_fits(bc, gb_model, lime_explainer):
    """Values = mean of lime's own fits with seeds 0..4; SE = their sample SD / sqrt(5) (lime run directly)."""
    X = bc[0]
    got = lime_explainer.explain(X.iloc[[3]], num_samples=300)
    direct = _direct_lime(bc, gb_model, 3, range(5), 300)
    np.testing.assert_allclose(got.values, direct.mean(axis=0), rtol=0, atol=1e-12)
    np.testing.assert_allclose(got.params["standard_error"], direct.std(axis=0, ddof=1) / np.sqrt(5), rtol=0, atol=1e-12)
    assert got.params["repeats"] == 5 and got.params["num_samples"] == 300 and got.params["total_samples"] == 1500
    assert isinstance(got.params["converged"], bool) and len(got.params["standard_error"]) == 30


def test_lime_standard_error_matches_the_spread_over_many_independent_seeds(bc, gb_model, lime_explainer):
    """The SE claimed from 5 fits ≈ the SD of one fit over 40 other seeds (lime directly) / sqrt(5)."""
    X = bc[0]
    got = np.array(lime_explainer.explain(X.iloc[[3]], num_samples=300).params["standard_error"])
    empirical = _direct_lime(bc, gb_model, 3, range(100, 140), 300).std(axis=0, ddof=1) / np.sqrt(5)
    ratio = np.median(got / empirical)
    assert 0.7 < ratio < 1.4, ratio


def test_lime_grows_the_neighborhood_exactly_until_the_stated_tolerance_is_met(bc, gb_model):
    """The stopping size, recomputed with lime directly: from n = 150, stop once max SE ≤ 5 % of max |mean|, else
    grow n by the least 2^k (k ≥ 1) with 2^k ≥ (max SE / tolerance)² (an SE falls as 1/√n)."""
    X, _, train, _ = bc
    predict = lambda a: gb_model.predict_proba(pd.DataFrame(a, columns=X.columns))  # noqa: E731
    lime = LimeExplainer(predict, training_data=X.iloc[train], class_names=("benign", "malignant"), num_samples=150,
                         rel_tolerance=0.05, time_budget_s=600, max_samples=4800)
    got = lime.explain(X.iloc[[4]])
    n, expected, path = 150, None, []
    while n <= 4800:
        path.append(n)
        fits = _direct_lime(bc, gb_model, 4, range(5), n)
        se, tol = fits.std(axis=0, ddof=1) / np.sqrt(5), 0.05 * np.abs(fits.mean(axis=0)).max()
        if se.max() <= tol:
            expected = n
            break
        k = 1
        while 2 ** k < (se.max() / tol) ** 2:
            k += 1
        while k > 1 and n * 2 ** k > 4800:
            k -= 1
        n *= 2 ** k
    assert expected is not None and expected > 150  # the case exercises at least one growth
    assert got.params["num_samples"] == expected and got.params["converged"] is True
    assert got.params["total_samples"] == 5 * sum(path)


def test_lime_refuses_settings_that_cannot_give_a_standard_error(bc, gb_model):
    X, _, train, _ = bc
    predict = lambda a: gb_model.predict_proba(pd.DataFrame(a, columns=X.columns))  # noqa: E731
    with pytest.raises(ValueError, match="repeats must be at least 2"):
        LimeExplainer(predict, training_data=X.iloc[train], class_names=("b", "m"), repeats=1)
    with pytest.raises(ValueError, match="num_samples <= max_samples"):
        LimeExplainer(predict, training_data=X.iloc[train], class_names=("b", "m"), num_samples=5000, max_samples=1000)


def test_ridge_fits_run_on_one_blas_thread_without_listing_the_libraries_each_round(bc, lime_explainer, monkeypatch):
    """Listing the loaded libraries (a new ``ThreadpoolController``, as ``threadpool_limits`` makes) cost about 18 ms
    of every LIME round on Adult's one-hot pipeline; the limit itself must hold during every ridge fit."""
    import scipy.linalg  # noqa: F401  (the ridge's BLAS, listed by the probe below)
    import threadpoolctl

    from explainers import lime_explainer as module

    lime_explainer.explain(bc[0].iloc[[4]])  # whatever a first explanation makes once, made before counting
    probe = threadpoolctl.ThreadpoolController()
    made, threads, own_init, own_fit = [], [], threadpoolctl.ThreadpoolController.__init__, module.ridge_fit

    def counted_init(self, *args, **kwargs):
        made.append(1)
        own_init(self, *args, **kwargs)

    def watched_fit(*args, **kwargs):
        threads.append({i["num_threads"] for i in probe.info() if i["user_api"] == "blas"})
        return own_fit(*args, **kwargs)

    monkeypatch.setattr(threadpoolctl.ThreadpoolController, "__init__", counted_init)
    monkeypatch.setattr(module, "ridge_fit", watched_fit)
    for row in (5, 6):
        lime_explainer.explain(bc[0].iloc[[row]])
    assert len(threads) >= 10 and all(t == {1} for t in threads)  # 5 fits a round, every BLAS on one thread
    assert made == []  # no controller made for a round (before: one each)
