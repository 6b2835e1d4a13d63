"""Permutation SHAP against brute force on a k-NN and an MLP: unbiased values, 1.96-SE intervals that cover,
rows with few differing columns enumerated (issue 23: model-agnostic SHAP of a k-NN on Adult took seconds a row).

Real data: UCI Adult (``shared/data/adult``, :mod:`tests.shared_data`), 9 raw columns (5 numeric, 4 categorical,
one-hot encoded in a Pipeline). Oracle: interventional Shapley values of the raw columns by brute force over all
2^9 coalitions (:func:`tests.shapley_oracle.brute_force_shapley`, the Pipeline's own ``predict_proba``), on the same
30 background rows.
"""
import warnings

import numpy as np
import pytest
from sklearn.compose import ColumnTransformer
from sklearn.neighbors import KNeighborsClassifier
from sklearn.neural_network import MLPClassifier
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

from explainers._codec import TabularCodec
from explainers._permutation import permutation_shap
from explainers.model_adapter import ModelAdapter
from tests.shapley_oracle import brute_force_shapley
from tests.shared_data import adult_data

NUM = ["age", "fnlwgt", "education-num", "hours-per-week", "capital-gain"]
CAT = ["workclass", "marital-status", "occupation", "sex"]
ROWS = (2600, 2650, 2700, 2750)
SEEDS = 40


@pytest.fixture(scope="module")
def adult9():
    df = adult_data().sample(3000, random_state=1).reset_index(drop=True)
    frame = df[NUM + CAT].copy()
    for c in CAT:
        frame[c] = frame[c].fillna("missing")
    y = (df["income"] == ">50K").to_numpy()
    prep = ColumnTransformer([("num", StandardScaler(), NUM), ("cat", OneHotEncoder(handle_unknown="ignore"), CAT)])
    models = {"knn": Pipeline([("prep", prep), ("knn", KNeighborsClassifier(n_neighbors=15))]),
              "mlp": Pipeline([("prep", prep), ("mlp", MLPClassifier((16,), max_iter=300, random_state=0))])}
    codec = TabularCodec(frame)
    Z = codec.encode(frame).to_numpy(dtype=float)
    bg = np.arange(30)
    out = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, pipe in models.items():
            pipe.fit(frame.iloc[:2500], y[:2500])
            oracle = {r: brute_force_shapley(lambda rows, p=pipe: p.predict_proba(rows)[:, 1], frame.iloc[[r]],
                                             frame.iloc[bg]) for r in ROWS}
            out[name] = (ModelAdapter(pipe, codec).outputs, Z, bg, oracle)
    return out


@pytest.mark.parametrize("name", ["knn", "mlp"])
def test_intervals_cover_the_brute_force_values_at_the_nominal_rate(adult9, name):
    """Over 4 rows x 40 seeds, 95 % intervals (1.96 SE) cover the brute-force value about 95 % of the time,
    and the mean of the 40 runs is within 4 of its own standard errors of it (no bias)."""
    f, Z, bg, oracle = adult9[name]
    hits, cases = 0, 0
    for r in ROWS:
        runs = [permutation_shap(f, Z[r], Z[bg], rel_tol=0.0, abs_tol=1e-15, max_orderings=32, seed=s)
                for s in range(SEEDS)]
        vals = np.stack([res.values[:, 1] for res in runs])
        se = np.stack([res.standard_error[:, 1] for res in runs])
        assert all(res.orderings == 32 for res in runs)
        np.testing.assert_allclose(vals.sum(axis=1), oracle[r].sum(), atol=1e-9)  # additive, every run
        sampled = se > 0  # features only enumerated rows move are exact: their error is float rounding
        assert (np.abs(vals - oracle[r])[~sampled] < 1e-9).all()
        hits += int((np.abs(vals - oracle[r]) <= 1.96 * se)[sampled].sum())
        cases += int(sampled.sum())
        spread = vals.std(axis=0, ddof=1) / np.sqrt(SEEDS)
        assert (np.abs(vals.mean(axis=0) - oracle[r]) <= 4 * spread + 1e-9).all()
    print(f"{name}: {hits} of {cases} intervals cover ({hits / cases:.3f})")
    assert cases >= 300
    assert 0.90 <= hits / cases <= 0.99, (hits, cases)


def test_rows_differing_on_few_columns_are_enumerated_exactly(adult9):
    """A background row differing from x on at most 8 of the 9 columns is enumerated by 64 orderings
    (2^8 coalitions cost less than 2x the rows its walks would meet): with every row so, the values are the
    brute-force ones and the standard errors 0."""
    f, Z, bg, oracle = adult9["knn"]
    assert any((Z[bg] != Z[r]).sum(axis=1).max() <= 8 for r in ROWS)
    for r in ROWS:
        differ = (Z[bg] != Z[r]).sum(axis=1)
        res = permutation_shap(f, Z[r], Z[bg], rel_tol=0.0, abs_tol=1e-15, max_orderings=64, seed=0)
        if differ.max() <= 8:
            assert res.converged and not res.standard_error.any()
            np.testing.assert_allclose(res.values[:, 1], oracle[r], atol=1e-9)
        else:
            assert np.isfinite(res.standard_error).all()
