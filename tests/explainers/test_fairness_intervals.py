"""The intervals of the fairness gaps against independent computations: coverage of planted gaps, and the
percentiles of the Jeffreys draws against scipy's Beta distribution drawn separately."""
import numpy as np
import pytest
from scipy import stats

from explainers.fairness import fairness_report


def _sample(rng, sizes, selected):
    """Rows of groups "a", "b", ... of ``sizes`` rows, each row selected with its group's rate in ``selected``;
    labels alternate (the selection rate's interval is what is checked)."""
    g = np.concatenate([np.full(n, chr(97 + i)) for i, n in enumerate(sizes)])
    p = np.concatenate([rng.uniform(size=n) < q for n, q in zip(sizes, selected)]).astype(int)
    return np.arange(len(g)) % 2, p, g


def test_a_gap_beside_a_group_of_four_rows_is_covered_near_the_nominal_rate():
    """Planted: group a (4 rows) selected at 0.15, group b (2,000 rows) at 0.5, so the true gap is 0.35. Half of
    the samples see none of a's 4 rows selected (0.85⁴ = 0.52); a plug-in bootstrap then resamples a at 0 every
    time and its interval sits at 0.5 ± 0.02, so it covered 0.35 in about half of the samples (0.52 measured). The
    Jeffreys draws cover it at about the nominal rate: at least 0.87 of 120 samples (4 SE below 0.95)."""
    rng = np.random.default_rng(7)
    covered = []
    for _ in range(120):
        y, p, g = _sample(rng, (4, 2000), (0.15, 0.5))
        _, low, high = fairness_report(y, p, g, feature="group", n_draws=500, seed=int(rng.integers(1 << 31))
                                       ).difference["selection_rate"]
        covered.append(low <= 0.35 <= high)
    assert np.mean(covered) >= 0.87


def test_the_intervals_equal_the_percentiles_of_scipys_beta_draws():
    """Two groups: 0 of 4 selected and 300 of 600; the difference's and the ratio's 2.5 and 97.5 percentiles
    against 400,000 draws of scipy.stats.beta (another generator); the report drawn 200,000 times here, so that a
    percentile's Monte Carlo standard error is at most about 0.0025 (its tolerance 0.01)."""
    g = np.array(["a"] * 4 + ["b"] * 600)
    p = np.array([0] * 4 + [1] * 300 + [0] * 300)
    r = fairness_report(np.arange(604) % 2, p, g, feature="group", n_draws=200_000)
    a = stats.beta(0.5, 4.5).rvs(400_000, random_state=11)
    b = stats.beta(300.5, 300.5).rvs(400_000, random_state=12)
    hi, lo = np.maximum(a, b), np.minimum(a, b)
    value, low, high = r.difference["selection_rate"]
    assert value == 0.5
    assert [low, high] == pytest.approx(np.percentile(hi - lo, [2.5, 97.5]), abs=0.01)
    assert high - low > 0.3  # a's 4 rows leave its rate anywhere in [0, 0.41]: the gap is far from certain
    assert r.ratio["selection_rate"][1:] == pytest.approx(tuple(np.percentile(lo / hi, [2.5, 97.5])), abs=0.01)


def test_a_rate_that_a_group_has_no_rows_for_has_no_interval():
    """Group a has no positive rows, so no true positive rate: that gap's bounds are NaN, the others are not."""
    g = np.array(["a"] * 10 + ["b"] * 10)
    y = np.array([0] * 10 + [0, 1] * 5)
    p = np.array([0, 1] * 5 + [1, 1, 0, 1, 0, 0, 1, 0, 1, 1])
    r = fairness_report(y, p, g, feature="group")
    assert np.isnan(r.difference["true_positive_rate"][1:]).all()
    assert not np.isnan(r.difference["false_positive_rate"][1:]).any()
    assert not np.isnan(r.difference["selection_rate"][1:]).any()
