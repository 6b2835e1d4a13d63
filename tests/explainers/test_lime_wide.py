"""Tabular LIME stays within memory on a wide table (issue 27): ``check`` on a 10,000-column pair spent minutes in
LIME, whose ridge formed the d x d normal equations (800 MB at 10,000 columns, a 10¹² solve, five times a round) and
whose round drew and sent the model 5 x 1,000 x 10,000 cells at once.

Each test asserts a bound structurally (bytes tracemalloc sees, cells a model call gets), never a time, and that the
values are those of the unbounded computation.
"""
from __future__ import annotations

import tracemalloc

import numpy as np
import pandas as pd
from sklearn.linear_model import Ridge

from explainers import LimeExplainer
from explainers import lime_explainer
from explainers._lime_fits import ridge_fit
from explainers._lime_sampler import LimeSpace


def _fit_traced(Z, y, w):
    """``ridge_fit(Z, y, w)`` and the peak of the memory Python traced while it ran (bytes)."""
    tracemalloc.start()
    try:
        out = ridge_fit(Z, y, w)
        return out, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_ridge_with_more_features_than_samples_equals_sklearn_without_the_d_by_d_system():
    rng = np.random.default_rng(0)
    n, d = 60, 2_000
    Z, y, w = (rng.random((n, d)) < 0.5).astype(float), rng.normal(size=n), rng.random(n)
    (coef, intercept, score, local), peak = _fit_traced(Z, y, w)
    assert peak < d * d * 8 / 4  # a d x d matrix is 32 MB; the n x n one 29 kB
    ref = Ridge(alpha=1.0).fit(Z, y, sample_weight=w)
    np.testing.assert_allclose(coef, ref.coef_, atol=1e-10)
    assert abs(intercept - ref.intercept_) < 1e-10
    assert abs(local - (Z[0] @ ref.coef_ + ref.intercept_)) < 1e-10


def test_a_wide_neighbourhood_is_drawn_in_blocks_and_equals_the_whole_draw(monkeypatch):
    rng = np.random.default_rng(1)
    n, d = 1_000, 3_000
    space = LimeSpace(rng.normal(size=(100, d)), categorical=())
    row = rng.normal(size=d)
    tracemalloc.start()
    try:
        binary, inverse = space.sample(row, n, 7)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 4 * n * d * 8  # the two results are 2 x 24 MB; drawn whole, a dozen more arrays of that size
    from explainers import _lime_sampler

    monkeypatch.setattr(_lime_sampler, "BLOCK_CELLS", 7_777, raising=False)  # blocks of 7 columns
    b2, i2 = space.sample(row, n, 7)
    np.testing.assert_array_equal(b2, binary)
    np.testing.assert_array_equal(i2, inverse)


def test_a_wide_round_sends_the_model_bounded_calls_and_gives_the_same_fits(monkeypatch):
    rng = np.random.default_rng(2)
    n_rows, d = 80, 400
    X = pd.DataFrame(rng.normal(size=(n_rows, d)), columns=[f"f{j}" for j in range(d)])
    beta = rng.normal(size=d) / np.sqrt(d)
    shapes = []

    def proba(a):
        shapes.append(a.shape)
        p = 1 / (1 + np.exp(-(np.asarray(a) @ beta)))
        return np.column_stack([1 - p, p])

    lime = LimeExplainer(proba, training_data=X, class_names=("a", "b"), seed=0)
    whole = lime.explain(X.iloc[[0]], num_samples=500)
    # narrow enough: the round's neighbourhoods in one call (the row itself in one call of its own)
    assert max(s[0] * s[1] for s in shapes) == 5 * 499 * d
    shapes.clear()
    monkeypatch.setattr(lime_explainer, "ROUND_CELLS", 50_000, raising=False)  # 125 rows of 400 columns a call
    lime = LimeExplainer(proba, training_data=X, class_names=("a", "b"), seed=0)  # no outputs kept from `whole`
    wide = lime.explain(X.iloc[[0]], num_samples=500)
    assert sum(s[0] for s in shapes) == 1 + 6 * 499  # the row, then every neighbourhood's samples (held-out too)
    assert max(s[0] * s[1] for s in shapes) <= 50_000
    np.testing.assert_allclose(wide.values, whole.values, atol=1e-12)
    np.testing.assert_allclose(wide.params["standard_error"], whole.params["standard_error"], atol=1e-12)
    assert abs(wide.params["heldout_r2"] - whole.params["heldout_r2"]) < 1e-12
    assert abs(wide.fidelity.value - whole.fidelity.value) < 1e-12


def test_a_wide_binary_ridge_counts_in_float32_and_equals_sklearn():
    """Issue 27: the wide ridge's n x n system is built from counts of shared indicators (exact in float32) instead of
    a float64 centred, weighted copy of the n x d indicators: half the Gram's arithmetic, none of the copies. FAILED
    before: the copy and its temporary (2 x 8 bytes a cell) were held at once."""
    rng = np.random.default_rng(11)
    n, d = 150, 4_000
    Z = (rng.random((n, d)) < 0.7).astype(float)
    Z[0] = 1.0  # LIME's explained row
    y, w = rng.normal(size=n), np.exp(-rng.random(n))
    (coef, intercept, score, local), peak = _fit_traced(Z, y, w)
    assert peak < 0.75 * n * d * 8, peak  # below one float64 copy of Z (the float32 counts' copy is half of one)
    ref = Ridge(alpha=1.0).fit(Z, y, sample_weight=w)  # the oracle: scikit-learn's own solver
    np.testing.assert_allclose(coef, ref.coef_, atol=1e-10)
    assert abs(intercept - ref.intercept_) < 1e-10
    fitted = Z @ ref.coef_ + ref.intercept_
    assert abs(local - fitted[0]) < 1e-10
    assert np.isclose(score, ref.score(Z, y, sample_weight=w), atol=1e-10)
    half = Z * 0.5  # not indicators: the general path, the same solution
    np.testing.assert_allclose(ridge_fit(half, y, w)[0], Ridge(alpha=1.0).fit(half, y, sample_weight=w).coef_, atol=1e-10)


def test_a_wide_space_computes_percentiles_and_padding_for_all_columns_at_once_and_the_same_bins(monkeypatch):
    """Issue 27: LIME's training statistics on the 10,000-column pair took 13.8 profiled s, 3 of them 40,000
    ``np.pad`` calls and most of the rest a percentile, minimum and maximum per column. FAILED before: one
    ``np.percentile`` call per column."""
    from explainers import _lime_sampler

    rng = np.random.default_rng(12)
    train = rng.normal(size=(150, 400))
    train[:, 3] = 1.0  # one value: one bin
    train[:, 5] = rng.integers(0, 3, 150)  # ties: fewer edges
    train[:, 7] = np.round(train[:, 7])
    calls = []
    real = np.percentile
    monkeypatch.setattr(_lime_sampler.np, "percentile", lambda *a, **k: calls.append(1) or real(*a, **k))
    space = LimeSpace(train, categorical=(9, 11))
    monkeypatch.undo()
    assert len(calls) == 1
    for j, bins in space.bins.items():  # each column's own bins, as computed one column at a time
        want = _lime_sampler._column_bins(train[:, j])
        for attr in ("edges", "mins", "maxs", "means", "stds"):
            np.testing.assert_array_equal(getattr(bins, attr), getattr(want, attr))
    width = max(len(b.mins) for b in space.bins.values())
    for attr, padded in (("mins", space._mins), ("means", space._means), ("stds", space._stds)):
        want = np.array([np.pad(getattr(space.bins[j], attr), (0, width - len(space.bins[j].mins)))
                         for j in sorted(space.bins)])
        if attr == "stds":
            want[want == 0] = 1.0
        np.testing.assert_array_equal(padded, want)


def test_a_wide_neighbourhood_draws_a_blocks_levels_at_once_and_equals_the_per_column_draw(monkeypatch):
    """Issue 27: a 1,000 x 10,000 neighbourhood made 10,000 ``searchsorted`` calls and column writes to draw its
    levels and bins, six times a LIME row. The oracle is the per-column draw (one block holding every column, so the
    loop runs), from the same random stream. FAILED before: one ``searchsorted`` call per column."""
    from explainers import _lime_sampler

    rng = np.random.default_rng(13)
    n, d = 600, 1_200
    train = rng.normal(size=(200, d))
    train[:, 1] = rng.integers(0, 3, 200)  # a categorical column of 3 levels
    train[:, 2] = rng.integers(0, 40, 200)  # 40 levels: past BLOCK_LEVELS, drawn column by column
    train[:, 4] = 2.0  # one bin
    space = LimeSpace(train, categorical=(1, 2))
    row = train[5].copy()
    calls = []
    binary, inverse = space.sample(row, n, 3)
    monkeypatch.setattr(_lime_sampler, "BLOCK_CELLS", n * d + 1)  # one block: the per-column loop
    b2, i2 = LimeSpace(train, categorical=(1, 2)).sample(row, n, 3)
    np.testing.assert_array_equal(binary, b2)
    np.testing.assert_array_equal(inverse, i2)
    monkeypatch.undo()
    counted = LimeSpace(train, categorical=(1, 2))
    counted.cdfs = [_Counted(c, calls) for c in counted.cdfs]
    counted.sample(row, n, 3)
    assert len(calls) == 1  # the 40-level column only; before: 1,200


class _Counted(np.ndarray):
    """A cdf array that counts its ``searchsorted`` calls."""

    def __new__(cls, a, calls):
        out = np.asarray(a).view(cls)
        out.calls = calls
        return out

    def __array_finalize__(self, obj):
        self.calls = getattr(obj, "calls", None)

    def searchsorted(self, *a, **k):
        self.calls.append(1)
        return np.asarray(self).searchsorted(*a, **k)
