"""Permutation SHAP calls the model once per batch of many orderings and evaluates each distinct row once
(issue 23, "the explanation engine": model-agnostic SHAP of an MLP on Adult took seconds a row).

Real data: UCI Adult (``shared/data/adult``, :mod:`tests.shared_data`), 8 of its raw columns, 4 of them
categorical, one-hot encoded in a Pipeline ending in an MLPClassifier. Oracles: interventional Shapley
values of the raw columns by brute force over all 2^8 coalitions (:func:`tests.shapley_oracle.brute_force_shapley`,
the Pipeline's own ``predict_proba`` on raw DataFrames), and the same walk with every row evaluated.
"""
import warnings

import numpy as np
import pytest
from sklearn.compose import ColumnTransformer
from sklearn.neural_network import MLPClassifier
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

from explainers import ShapExplainer
from explainers import _permutation, _permutation_game
from explainers._codec import TabularCodec
from explainers.model_adapter import ModelAdapter
from tests.shapley_oracle import brute_force_shapley
from tests.shared_data import adult_data

NUM = ["age", "education-num", "hours-per-week", "capital-gain"]
CAT = ["workclass", "marital-status", "occupation", "sex"]


@pytest.fixture(scope="module")
def adult_mlp():
    df = adult_data().sample(3000, random_state=0).reset_index(drop=True)
    frame = df[NUM + CAT].copy()
    for c in CAT:
        frame[c] = frame[c].fillna("missing")
    y = (df["income"] == ">50K").to_numpy()
    prep = ColumnTransformer([("num", StandardScaler(), NUM), ("cat", OneHotEncoder(handle_unknown="ignore"), CAT)])
    pipe = Pipeline([("prep", prep), ("mlp", MLPClassifier((16,), max_iter=300, random_state=0))])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pipe.fit(frame.iloc[:2500], y[:2500])
    codec = TabularCodec(frame)
    return pipe, frame, ModelAdapter(pipe, codec), codec.encode(frame)


def test_values_on_adult_equal_brute_force_within_four_standard_errors(adult_mlp):
    pipe, frame, adapter, Z = adult_mlp
    e = ShapExplainer(adapter, background=Z.iloc[:2500], background_size=40, algorithm="permutation",
                      rel_tol=1e-9)
    assert e.algorithm == "permutation" and e.feature_names == tuple(frame.columns)
    bg_raw = frame.loc[e.background.index]
    for r in (2600, 2700, 2800):
        oracle = brute_force_shapley(lambda rows: pipe.predict_proba(rows)[:, 1], frame.iloc[[r]], bg_raw)
        x = e.explain(Z.iloc[[r]])
        se = np.asarray(x.params["standard_error"])
        # 8 columns: a background row's 2^|D_r| <= 256 coalitions soon cost less than its walks, so the rows are
        # enumerated (standard error 0) and the values are the brute-force ones up to float rounding
        assert x.params["orderings"] <= 512 and np.isfinite(se).all()
        assert (np.abs(x.values - oracle) <= 4 * se + 1e-9).all(), (x.values - oracle) / se
        assert x.additivity_gap < 1e-9


def test_each_distinct_row_is_evaluated_once_in_few_calls_with_the_values_of_the_full_walk(adult_mlp, monkeypatch):
    """Adult rows share most values with background rows, so most coalition rows repeat: the keyed walk
    evaluates a fraction of them, in a few calls spanning many orderings, and gives the same numbers."""
    _, _, adapter, Z = adult_mlp
    x, bg = Z.iloc[2650].to_numpy(dtype=float), Z.iloc[:40].to_numpy(dtype=float)
    seen = {"calls": 0, "rows": 0}

    def f(a):
        seen["calls"] += 1
        seen["rows"] += len(a)
        return adapter.outputs(a)

    # 32 orderings: background rows with |D_r| <= 7 are enumerated (2^7 <= 32 * 6 + 2), the others walked
    keyed = _permutation.permutation_shap(f, x, bg, rel_tol=0.0, abs_tol=1e-15, max_orderings=32,
                                          max_rows=100_000)
    keyed_seen = dict(seen)
    differ = (bg != x).sum(axis=1)
    assert (np.exp2(differ) > 32 * (differ - 1) + 2).any() and (np.exp2(differ) <= 16 * (differ - 1) + 2).any()
    assert keyed.orderings == 32 and np.isfinite(keyed.standard_error).all()
    assert keyed_seen["calls"] <= 2 + 2  # f(background), f(x), then one call per round: 8, 8 pairs
    seen.update(calls=0, rows=0)
    monkeypatch.setattr(_permutation_game, "_KEY_BITS", 0)  # every row of the walk evaluated, as before
    full = _permutation.permutation_shap(f, x, bg, rel_tol=0.0, abs_tol=1e-15, max_orderings=32,
                                         max_rows=100_000)
    assert keyed_seen["rows"] < 0.9 * seen["rows"]  # 1,749 of 2,163: most rows are enumerated either way
    np.testing.assert_allclose(keyed.values, full.values, rtol=0, atol=1e-12)
    np.testing.assert_allclose(keyed.standard_error, full.standard_error, rtol=0, atol=1e-12)


def test_continuous_columns_fall_back_to_the_full_walk_with_the_same_values(monkeypatch):
    """No repeats to find (continuous columns): the walk is not keyed, and keyed it gives the same values."""
    rng = np.random.default_rng(0)
    X, w = rng.normal(size=(41, 12)), rng.normal(size=12)  # 2^12 subsets: 64 orderings hardly repeat one
    f = lambda a: np.column_stack([np.tanh(a @ w), np.sin(a).sum(1)])  # noqa: E731
    full = _permutation.permutation_shap(f, X[0], X[1:], rel_tol=0.0, max_orderings=64, seed=4)
    assert not _permutation._CoalitionValues(f, X[0], X[1:], 20_000, 2, 64).keyed
    monkeypatch.setattr(_permutation_game, "KEYED_MAX_SHARE", 2.0)  # key it anyway
    assert _permutation._CoalitionValues(f, X[0], X[1:], 20_000, 2, 64).keyed
    keyed = _permutation.permutation_shap(f, X[0], X[1:], rel_tol=0.0, max_orderings=64, seed=4)
    np.testing.assert_allclose(keyed.values, full.values, rtol=0, atol=1e-12)
    np.testing.assert_allclose(keyed.base + keyed.values.sum(0), f(X[:1])[0], atol=1e-12)


def test_no_model_row_goes_to_the_model_twice_and_the_values_are_brute_force(adult_mlp):
    """Pairs of different background rows that give the same model row (x itself once a walk has added every
    column where its background row differs; x with one column set to a common level) are evaluated once: across
    every call, x and the background rows included, no row is passed twice. At 64 orderings every background row
    (at most 8 differing columns) is enumerated, so the values are the brute-force ones."""
    pipe, frame, adapter, Z = adult_mlp
    x, bg = Z.iloc[2650].to_numpy(dtype=float), Z.iloc[:40].to_numpy(dtype=float)
    passed = []

    def f(a):
        passed.append(np.array(a, dtype=float))
        return adapter.outputs(a)

    res = _permutation.permutation_shap(f, x, bg, rel_tol=0.0, abs_tol=1e-15, max_orderings=64, max_rows=100_000)
    rows = np.concatenate(passed)
    assert len(np.unique(rows, axis=0)) == len(rows), f"{len(rows) - len(np.unique(rows, axis=0))} rows repeated"
    oracle = brute_force_shapley(lambda t: pipe.predict_proba(t)[:, 1], frame.iloc[[2650]], frame.iloc[:40])
    assert res.converged and not res.standard_error.any()
    np.testing.assert_allclose(res.values[:, 1], oracle, rtol=0, atol=1e-9)


def test_model_rows_are_rebuilt_from_their_codes():
    """The int64 code of a pair (coalition, background row) gives back the row ``where(S, x, bg[r])`` (NaNs, values
    equal to x's, repeated levels), and pairs share a code exactly when their rows are equal."""
    rng = np.random.default_rng(3)
    bg = rng.integers(0, 4, size=(30, 6)).astype(float)
    bg[rng.random(bg.shape) < 0.1] = np.nan
    bg[:, 5] = rng.normal(size=30)  # a continuous column: every value its own level
    x = np.array([1.0, np.nan, 2.0, 0.0, 3.0, 0.5])
    v = _permutation_game._CoalitionValues(lambda a: a[:, :1], x, bg, 1000, 1, 16, row_cost_s=1.0)
    assert v.keyed and v.content is not None
    coalitions, r = rng.integers(0, 2 ** 6, size=600), rng.integers(0, 30, size=600)
    expected = np.where((coalitions[:, None] >> np.arange(6)) & 1 == 1, x, bg[r])
    keys = v._keys(coalitions, r)
    np.testing.assert_array_equal(v._rows(keys), expected)
    same_row = ((expected[:, None] == expected[None]) | (np.isnan(expected[:, None]) & np.isnan(expected[None]))
                ).all(axis=2)
    same_key = keys[:, None] == keys[None]
    assert same_row[same_key].all()  # one code, one row: never two rows under one code
    plain = ~np.isnan(expected).any(axis=1)  # (x's NaN and a background row's NaN: one float, two codes)
    assert same_key[np.ix_(plain, plain)][same_row[np.ix_(plain, plain)]].all()
    assert len(np.unique(keys)) < len(keys)
