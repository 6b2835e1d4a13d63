"""The persuasive measures stay linear in the columns (issue 27): ``check`` on a 10,000-column table used to die
in the Persuasive step on a 10,001 x 10,001 matrix.

Each test asserts the bound structurally (rows or cells handed to the model, bytes allocated), never a time. They
FAILED before the bounds: a deletion curve over 3,000 features handed the model 3,001 rows, AOPC over 300 ranks
601 masked sets, ``masked_outputs`` 24 million cells in one grid, and ``restricted_r2`` on every column formed the
(p + 1) x (p + 1) normal equations (18 MB at 1,500 columns; 800 MB at 10,000).
"""
from __future__ import annotations

import tracemalloc

import numpy as np

from explainers.persuasive import _erasure, _masking, _measures


class Spy:
    """A linear model ``g(X) = X @ beta`` that records the shape of every call."""

    def __init__(self, beta):
        self.beta, self.shapes = np.asarray(beta, float), []

    def __call__(self, X):
        self.shapes.append(np.shape(X))
        return np.asarray(X, float) @ self.beta


def test_a_curve_over_3000_features_has_at_most_201_points():
    rng = np.random.default_rng(0)
    d = 3_000
    g, x, base = Spy(rng.normal(size=d)), rng.normal(size=d), np.zeros(d)
    order = np.argsort(-np.abs(g.beta * x))
    dele = _erasure.deletion_curve(g, x, order, base)
    assert g.shapes == [(_erasure.MAX_CURVE_STEPS + 1, d)]
    assert np.isclose(dele[0], g(x[None])[0]) and dele[-1] == 0.0  # still from g(x) to g(baseline)
    steps = _erasure.curve_steps(d)
    want = [float(g.beta[order[k:]] @ x[order[k:]]) for k in steps]  # g with the first k features deleted
    np.testing.assert_allclose(dele, want, atol=1e-9)
    small = Spy(rng.normal(size=5))  # a narrow table keeps one point per feature, as before
    assert _erasure.deletion_curve(small, np.ones(5), np.arange(5), np.zeros(5)).shape == (6,)


def test_aopc_past_200_ranks_uses_erasers_bins():
    rng = np.random.default_rng(1)
    d, bg = 300, rng.normal(size=(20, 300))
    g, x = Spy(rng.normal(size=d)), rng.normal(size=d)
    order = np.argsort(-np.abs(g.beta * x))
    comp, suff = _erasure.aopc(g, x, order, bg)
    rows = sum(s[0] for s in g.shapes)
    assert rows <= (2 * len(_erasure.AOPC_BINS) + 1) * len(bg) + 1  # 11 masked sets and g(x), not 601
    # g linear: removing r_{:k} lowers g by beta_r . (x_r - mean bg_r); averaged over the bins' k
    ks = sorted({max(1, int(np.ceil(f * d))) for f in _erasure.AOPC_BINS})
    drop = [float(g.beta[order[:k]] @ (x[order[:k]] - bg.mean(axis=0)[order[:k]])) for k in ks]
    assert np.isclose(comp, np.mean(drop))
    assert np.isfinite(suff)


def test_masked_outputs_builds_at_most_its_cell_bound_at_once():
    rng = np.random.default_rng(2)
    d, bg = 3_000, rng.normal(size=(100, 3_000))
    g, x = Spy(rng.normal(size=d)), rng.normal(size=d)
    sets = [np.arange(d)] + [rng.choice(d, size=k, replace=False) for k in range(1, 81)]
    got = _masking.masked_outputs(g, x, sets, bg)
    assert max(r * c for r, c in g.shapes) <= _masking.GRID_CELLS  # the old single grid: 24.3 million cells
    mean_bg = bg.mean(axis=0)
    want = [float(g.beta[s] @ x[s] + np.delete(g.beta, s) @ np.delete(mean_bg, s)) for s in sets]
    np.testing.assert_allclose(got, want, atol=1e-9)


def test_restricted_r2_on_every_column_never_forms_the_p_by_p_matrix():
    rng = np.random.default_rng(3)
    n, p = 200, 1_500
    Z = rng.normal(size=(n, p))
    y = Z[:, :3] @ np.array([1.0, -2.0, 0.5]) + 0.1 * rng.normal(size=n)
    nb = _measures.Neighborhood(Z, y, np.exp(-rng.random(n)))
    tracemalloc.start()
    r2 = _measures.restricted_r2(nb, range(p))
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < 8 * (p + 1) ** 2 / 2, peak  # under half of one (p + 1)² float matrix (18 MB)
    assert np.isclose(r2, 1.0)  # more columns than samples: the fit interpolates
    few = _measures.restricted_r2(nb, [0, 1, 2])  # the same fit as the weighted normal equations on few columns
    A = np.column_stack([np.ones(n), Z[:, :3]])
    coef = np.linalg.solve(A.T @ (A * nb.w[:, None]), (A * nb.w[:, None]).T @ y)
    mean = np.average(y, weights=nb.w)
    want = 1 - np.sum(nb.w * (y - A @ coef) ** 2) / np.sum(nb.w * (y - mean) ** 2)
    assert np.isclose(few, want, rtol=1e-10)


def test_r2_on_every_column_is_fitted_once_per_neighbourhood(monkeypatch):
    """Issue 27: the parent explanation shows every column, so its restricted R² is the full one; on the
    10,000-column pair the Persuasive step fitted that 500 x 10,001 least squares three times (about two thirds of
    its 55 CPU s, profiled)."""
    rng = np.random.default_rng(3)
    d = 50
    nb = _measures.make_neighborhood(lambda X: np.asarray(X, float) @ rng.normal(size=d), rng.normal(size=d),
                                     np.ones(d), num_samples=80, seed=0)  # more rows than columns: solved
    calls = []
    real = np.linalg.lstsq
    monkeypatch.setattr(np.linalg, "lstsq", lambda *a, **k: calls.append(a[0].shape) or real(*a, **k))
    every = _measures.restricted_r2(nb, range(d))
    assert _measures.restricted_r2(nb, list(range(d))[::-1]) == every == _measures._full_r2(nb)
    assert calls == [(80, d + 1)]
    want = _measures.restricted_r2(nb, range(d - 1))  # a subset is still fitted on its own
    assert calls[-1] == (80, d) and want <= every + 1e-12


def _lstsq_r2(Z, y, w, features):
    """The weighted R² of the minimum-norm least squares on ``features`` with an intercept, solved whole (the oracle)."""
    A = np.column_stack([np.ones(len(y)), Z[:, features]]) * np.sqrt(w)[:, None]
    coef = np.linalg.lstsq(A, y * np.sqrt(w), rcond=None)[0]
    fitted = np.column_stack([np.ones(len(y)), Z[:, features]]) @ coef
    return 1 - np.sum(w * (y - fitted) ** 2) / np.sum(w * (y - np.average(y, weights=w)) ** 2)


def test_r2_on_more_columns_than_rows_is_not_solved_when_the_rows_are_independent(monkeypatch):
    """Issue 27: on the 10,000-column pair the full R² was a 500 x 10,001 least squares, the Persuasive step's
    slowest part; with more columns than rows and independent rows it interpolates (R² = 1). FAILED before: the
    whole system went to ``numpy.linalg.lstsq``."""
    rng = np.random.default_rng(4)
    n, p = 120, 3_000
    Z = rng.normal(size=(n, p))
    y = Z[:, :3] @ np.array([1.0, -2.0, 0.5]) + 0.3 * rng.normal(size=n)
    w = np.exp(-rng.random(n))
    want, few = _lstsq_r2(Z, y, w, np.arange(p)), _lstsq_r2(Z, y, w, np.arange(5))  # the oracle, before the spy
    calls = []
    real = np.linalg.lstsq
    monkeypatch.setattr(np.linalg, "lstsq", lambda *a, **k: calls.append(a[0].shape) or real(*a, **k))
    nb = _measures.Neighborhood(Z, y, w)
    assert _measures.restricted_r2(nb, range(p)) == 1.0
    assert abs(want - 1.0) < 1e-9
    assert _measures.restricted_r2(nb, range(0, p, 2)) == 1.0 and calls == []  # 1,500 columns: still wider than n
    assert np.isclose(_measures.restricted_r2(nb, range(5)), few, rtol=1e-10)
    assert calls == [(n, 6)]  # narrower than n: solved as before


def test_r2_on_more_columns_than_rows_is_solved_when_rows_repeat():
    """Repeated rows with different outputs cannot be interpolated: rank below n, the shortcut must not answer."""
    rng = np.random.default_rng(5)
    n, p = 120, 3_000
    Z = rng.normal(size=(n, p))
    Z[60:] = Z[:60]  # rank 60
    y, w = rng.normal(size=n), np.exp(-rng.random(n))
    got = _measures.restricted_r2(_measures.Neighborhood(Z, y, w), range(p))
    want = _lstsq_r2(Z, y, w, np.arange(p))
    assert want < 0.9 and np.isclose(got, want, rtol=1e-9)
    one = Z.copy()
    one[:, 1:] = 0.0  # rank 2 (the intercept and one column), as wide as before
    got = _measures.restricted_r2(_measures.Neighborhood(one, y, w), range(p))
    assert np.isclose(got, _lstsq_r2(one, y, w, np.arange(p)), rtol=1e-9) and got < 0.5
