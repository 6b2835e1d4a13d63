"""docs/methods.md, "Tests with exact oracles", T14 rank metrics, and the agreement rate."""
import math

import numpy as np
import pytest

from explainers import metrics


def test_t14_rank_metrics():
    a, b = [4, 3, 2, 1], [4, 2, 3, 1]
    assert metrics.spearman(a, b) == pytest.approx(0.8, abs=1e-9)
    assert metrics.kendall_tau_b(a, b) == pytest.approx(4 / 6, abs=1e-9)
    assert metrics.top_k_overlap(a, b, 2) == pytest.approx(0.5)
    assert metrics.jaccard_at_k(a, b, 2) == pytest.approx(1 / 3)


def test_t14_self_and_reversed():
    a = np.array([4.0, 3, 2, 1])
    assert metrics.spearman(a, a) == pytest.approx(1.0)
    assert metrics.kendall_tau_b(a, a) == pytest.approx(1.0)
    assert metrics.top_k_overlap(a, a, 3) == 1.0
    assert metrics.spearman(a, a[::-1]) == pytest.approx(-1.0)
    assert metrics.kendall_tau_b(a, a[::-1]) == pytest.approx(-1.0)


def test_top_k_breaks_ties_by_index_and_uses_magnitude():
    assert list(metrics.top_k([1.0, -3.0, 3.0, 0.5], 2)) == [1, 2]


def test_constant_vector_has_no_rank_correlation():
    assert math.isnan(metrics.spearman([1, 1, 1], [1, 2, 3]))


def test_sign_agreement_ignores_zeros():
    assert metrics.sign_agreement([1, -1, 0, 2], [1, 1, 5, 0]) == pytest.approx(0.5)


def test_agreement_rate_and_errors():
    assert metrics.agreement_rate([0, 1, 1, 0], [0, 1, 0, 0]) == pytest.approx(0.75)
    with pytest.raises(ValueError, match="equal"):
        metrics.agreement_rate([0, 1], [0, 1, 1])
    with pytest.raises(ValueError, match="differ in length"):
        metrics.spearman([1, 2], [1, 2, 3])


def test_top_k_overlap_is_on_magnitudes_everywhere():
    """The review's counter-example: the old text metric ranked signed values and said 0.0 here."""
    a, b = [-3.0, 1.0, 2.0], [3.0, 1.0, 2.0]
    assert metrics.top_k_overlap(a, b, 1) == 1.0
    assert metrics.compare_ranks(a, b, 1).top_k_overlap == 1.0


def _brute_force_tau_b(x, y):
    """Kendall's tau-b by counting every pair (Kendall 1945), independent of scipy."""
    n = len(x)
    conc = disc = tx = ty = 0
    for i in range(n):
        for j in range(i + 1, n):
            dx, dy = np.sign(x[i] - x[j]), np.sign(y[i] - y[j])
            if dx == 0 and dy == 0:
                continue
            if dx == 0:
                tx += 1
            elif dy == 0:
                ty += 1
            elif dx == dy:
                conc += 1
            else:
                disc += 1
    return (conc - disc) / math.sqrt((conc + disc + tx) * (conc + disc + ty))


def _average_ranks(v):
    v = np.asarray(v, float)
    return np.array([np.sum(v < x) + (np.sum(v == x) + 1) / 2 for x in v])


def test_compare_ranks_matches_brute_force_on_real_attributions(bc):
    """Spearman (Pearson of average ranks), tau-b (pair counting) and top-k (sorting by hand) on the
    |coefficient x value| attributions of a logistic regression for two breast-cancer rows."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import StandardScaler

    X, y, train, _ = bc
    Xs = StandardScaler().fit_transform(X)
    coef = LogisticRegression(max_iter=2000).fit(Xs[train], y.iloc[train]).coef_[0]
    a, b = coef * Xs[0], coef * Xs[1]
    r = metrics.compare_ranks(a, b, 5, signed=True)
    ra, rb = _average_ranks(np.abs(a)), _average_ranks(np.abs(b))
    assert r.spearman == pytest.approx(np.corrcoef(ra, rb)[0, 1], abs=1e-12)
    assert r.kendall_tau_b == pytest.approx(_brute_force_tau_b(np.abs(a), np.abs(b)), abs=1e-12)
    top_a = set(sorted(range(30), key=lambda i: -abs(a[i]))[:5])
    top_b = set(sorted(range(30), key=lambda i: -abs(b[i]))[:5])
    assert r.top_k_overlap == len(top_a & top_b) / 5
    assert r.jaccard_at_k == len(top_a & top_b) / len(top_a | top_b)
    assert r.sign_agreement == pytest.approx(np.mean(np.sign(a) == np.sign(b)))


def test_compare_ranks_defaults():
    assert [metrics.default_k(n) for n in (1, 4, 10, 30)] == [1, 1, 2, 5]
    one = metrics.compare_ranks([2.0], [1.0])
    assert math.isnan(one.spearman) and one.top_k_overlap == 1.0 and math.isnan(one.sign_agreement)
    with pytest.raises(ValueError, match="equal length"):
        metrics.compare_ranks([1, 2], [1, 2, 3])


def test_spearman_equals_scipy_on_ties_without_calling_it(monkeypatch):
    """Spearman's ρ is Pearson's r of average ranks (numpy alone, issue 27: scipy's spearmanr cost about 1 ms a call,
    ~35 calls a Persuasive row). Oracle: scipy.stats.spearmanr, asked before it is replaced by a call that fails;
    NaN still goes to scipy (nan)."""
    from scipy import stats

    rng = np.random.default_rng(0)
    cases = []
    for n in (2, 3, 5, 30, 108):
        for t in range(40):
            a = rng.integers(0, 4 if t % 2 else 1000, size=n).astype(float)
            b = rng.normal(size=n)
            b[rng.random(n) < 0.3] = 0.0  # ties, as |shown| has zeros for dropped features
            if np.ptp(a) > 0 and np.ptp(b) > 0:
                cases.append((a, b, float(stats.spearmanr(a, b).statistic)))
    nan_case = float(stats.spearmanr([1.0, np.nan, 3.0], [1.0, 2.0, 3.0]).statistic)
    monkeypatch.setattr(stats, "spearmanr", lambda *a, **k: pytest.fail("scipy's spearmanr was called"))
    assert len(cases) > 150
    for a, b, expected in cases:
        assert metrics.spearman(a, b) == pytest.approx(expected, abs=1e-12)
    monkeypatch.undo()
    assert math.isnan(nan_case) and math.isnan(metrics.spearman([1.0, np.nan, 3.0], [1.0, 2.0, 3.0]))
