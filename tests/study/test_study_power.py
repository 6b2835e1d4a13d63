"""Issue 16: ``python -m app study power FILE --effect D``, simulation-based power of the over-reliance
contrast, tested as the results page tests it (trials of model-wrong advice, clustered in participants).
Oracles: the closed form of the simulated decision-maker's over-reliance, (1 - a) + a·w; statsmodels'
GEE (independence, clustered sandwich) for the Wald z; and the normal-theory power of that Wald test
for participants whose follows are Binomial(m, q)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy import stats

from study.cli import main
from study.power import baseline, cluster_wald, power_curve, simulate_over_reliance
from study.simulate import RelianceModel

FIXED = RelianceModel(accuracy=0.7, accuracy_sd=0.0, shift_sd=0.0)  # no between-person spread: closed forms hold


def test_simulated_over_reliance_matches_closed_form():
    rng = np.random.default_rng(1)
    x = simulate_over_reliance(rng, 20_000, np.array([True] * 4 + [False] * 8), FIXED, 0.25)
    q = (1 - 0.7) + 0.7 * 0.25  # follows wrong advice: first answer already wrong, or switches
    assert x.mean() == pytest.approx(q, abs=4 * math.sqrt(q * (1 - q) / 4 / 20_000))
    assert x.var() == pytest.approx(q * (1 - q) / 4, rel=0.05)  # Binomial(4, q) / 4


def _wald_power(q1: float, q2: float, m: int, n: int, alpha: float) -> float:
    """Power of the Wald test of logit(q2) - logit(q1) with n participants of m Binomial trials per arm."""
    se = math.sqrt(1 / (n * m * q1 * (1 - q1)) + 1 / (n * m * q2 * (1 - q2)))
    d = abs(math.log(q2 / (1 - q2)) - math.log(q1 / (1 - q1))) / se
    z = stats.norm.ppf(1 - alpha / 2)
    return float(stats.norm.cdf(d - z) + stats.norm.cdf(-d - z))


@pytest.mark.parametrize("n", [15, 30])
def test_power_matches_the_wald_tests_normal_theory(n):
    wrong = [True] * 4 + [False] * 8
    effect = 0.2
    (pt,) = power_curve(wrong, effect, [n], simulations=3000, seed=n, model=FIXED)
    q1 = 0.3 + 0.7 * FIXED.switch["descriptive"]["wrong"]
    want = _wald_power(q1, q1 + effect, 4, n, 0.05)
    assert pt.power == pytest.approx(want, abs=0.04)
    assert 0 <= pt.low <= pt.power <= pt.high <= 1


def test_cluster_wald_is_statsmodels_gee_with_clustered_sandwich():
    import pandas as pd
    import statsmodels.api as sm

    rng = np.random.default_rng(7)
    n, m = 60, 4
    y1, y2 = rng.binomial(m, 0.45, n), rng.binomial(m, 0.6, n)
    rows = [(f"{g}{i}", g, int(t < y)) for g, ys in ((0, y1), (1, y2)) for i, y in enumerate(ys) for t in range(m)]
    d = pd.DataFrame(rows, columns=["pid", "arm", "followed"])
    fit = sm.GEE(d["followed"], sm.add_constant(d["arm"].astype(float)), groups=d["pid"],
                 family=sm.families.Binomial(), cov_struct=sm.cov_struct.Independence()).fit()
    z_gee = fit.params["arm"] / fit.bse["arm"]
    # cluster_wald adds half a count per arm and the n/(n-1) factor: equal up to those small terms
    assert cluster_wald(y1, y2, m) == pytest.approx(z_gee * math.sqrt((n - 1) / n), rel=0.02)
    q1, q2, w1, w2 = baseline(FIXED, ("descriptive", "persuasive"), 0.2)
    assert (q1, q2) == pytest.approx((0.3 + 0.7 * w1, 0.3 + 0.7 * w2)) and q2 - q1 == pytest.approx(0.2)


def test_no_effect_gives_the_tests_size_and_power_grows_with_n():
    size = power_curve([True] * 4 + [False] * 8, 0.0, [40], simulations=3000, seed=3, model=FIXED)[0]
    assert 0.035 <= size.power <= 0.065
    curve = power_curve([True] * 4 + [False] * 8, 0.15, [10, 40, 160], simulations=400, seed=4)
    assert [p.power for p in curve] == sorted(p.power for p in curve) and curve[-1].power > 0.9


def test_power_refuses_a_design_without_model_errors():
    with pytest.raises(ValueError, match="over-reliance cannot be measured"):
        power_curve([False] * 6, 0.2, [10])
    with pytest.raises(ValueError, match=r"expected a value in \(0, 1\)"):
        power_curve([True, False], 0.9, [10])


def test_power_cli_on_the_bundled_example(capsys):
    from pathlib import Path

    import study

    example = Path(study.__file__).parent / "examples" / "reliance-breast-cancer.yaml"
    assert main(["power", str(example), "--effect", "0.2", "--participants", "10,40", "--simulations", "200"]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    got = json.loads(out[-1])
    assert set(got) == {"10", "40"} and got["10"][0] < got["40"][0]
    assert "model wrong on 4 of 12 stimuli" in out[0] and "persuasive - descriptive = +0.2" in out[0]
    q1, q2, _w1, _w2 = baseline(RelianceModel(), ("descriptive", "persuasive"), 0.2)
    assert out[1].startswith("baseline") and f"descriptive over-reliance {q1:.3f}" in out[1] and f"{q2:.3f}" in out[1]
    assert "GEE" in out[2] and "mixed model" in out[2]
