"""Issue 16: reliance measures against hand-computed values on a fixed response table; intervals
that respect their range (Wilson against the closed form solved here; bootstrap against an
enumerated bootstrap distribution)."""

from __future__ import annotations

import math
import numpy as np
import pandas as pd
import pytest
from scipy import stats

from study import analysis
from explainers.intervals import bootstrap_mean, wilson


def _wilson_closed_form(k: int, n: int, z: float) -> tuple[float, float]:
    """Wilson (1927): the p with |p_hat - p| = z sqrt(p (1 - p) / n), i.e. the roots of
    (1 + z^2/n) p^2 - (2 p_hat + z^2/n) p + p_hat^2 = 0, solved with numpy.roots."""
    ph = k / n
    roots = np.sort(np.real(np.roots([1 + z * z / n, -(2 * ph + z * z / n), ph * ph])))
    return float(roots[0]), float(roots[1])


@pytest.mark.parametrize("k,n", [(2, 3), (0, 5), (5, 5), (1, 10), (37, 120), (500, 1000)])
def test_wilson_matches_closed_form_and_stays_in_range(k, n):
    z = stats.norm.ppf(0.975)
    est, lo, hi = wilson(k, n)
    want_lo, want_hi = _wilson_closed_form(k, n, z)
    assert est == pytest.approx(k / n)
    assert lo == pytest.approx(max(want_lo, 0.0), abs=1e-12) and hi == pytest.approx(min(want_hi, 1.0), abs=1e-12)
    assert 0.0 <= lo <= est <= hi <= 1.0


def test_wilson_at_two_of_three_is_not_the_old_t_interval():
    # the example: 0.667 shown as [-3.569, 4.902]; Wilson at 2/3 is [0.2077, 0.9385]
    _, lo, hi = wilson(2, 3)
    assert (round(lo, 4), round(hi, 4)) == (0.2077, 0.9385)
    assert all(math.isnan(v) for v in wilson(0, 0))
    with pytest.raises(ValueError, match="0 <= k <= n"):
        wilson(4, 3)


def test_bootstrap_mean_against_enumerated_distribution():
    # two values {0, 1}: the resampled mean is 0, 0.5, 1 with probabilities 1/4, 1/2, 1/4,
    # so the 2.5% and 97.5% percentiles are 0 and 1 exactly
    mean, lo, hi, n = bootstrap_mean([0.0, 1.0])
    assert (mean, lo, hi, n) == (0.5, 0.0, 1.0, 2)
    # constant values: every resample has the same mean
    assert bootstrap_mean([4.0, 4.0, 4.0])[:3] == (4.0, 4.0, 4.0)
    # within the range of the values, seeded, NaN-free inputs only
    x = [1.0, 2.0, 7.0, None, float("nan"), 3.0]
    a, b = bootstrap_mean(x), bootstrap_mean(x)
    assert a == b and a[3] == 4 and 1.0 <= a[1] <= a[0] <= a[2] <= 7.0


# A fixed response table: two conditions, two participants each, decisions on four items.
# Items i1, i2 the model gets right (truth A, advice A); i3, i4 it gets wrong (truth B, advice A).
#   participant  cond  item  initial  final
RESPONSES = """
    p1  desc  i1  A  A
    p1  desc  i2  B  A
    p1  desc  i3  B  B
    p1  desc  i4  B  A
    p2  desc  i1  B  B
    p2  desc  i2  A  A
    p2  desc  i3  A  A
    p2  desc  i4  B  B
    p3  pers  i1  B  A
    p3  pers  i2  B  A
    p3  pers  i3  B  A
    p3  pers  i4  B  A
    p4  pers  i1  A  A
    p4  pers  i2  A  A
    p4  pers  i3  B  A
    p4  pers  i4  A  A
"""
TRUTH = {"i1": "A", "i2": "A", "i3": "B", "i4": "B"}


def _trial_log() -> pd.DataFrame:
    rows = []
    for t, line in enumerate(RESPONSES.strip().splitlines()):
        pid, cond, item, initial, final = line.split()
        for phase, resp in (("initial", initial), ("final", final)):
            rows.append(dict(participant_id=pid, condition=cond, trial_index=t, item_id=item, phase=phase,
                             response=resp, model_prediction="A", truth=TRUTH[item],
                             model_correct=TRUTH[item] == "A", fidelity=None, correct=None,
                             confidence=70.0 if phase == "final" else None))
    return pd.DataFrame(rows)


# Hand-computed from the table above:
#   desc: final == advice on 5 of 8 (p1: i1 i2 i4; p2: i2 i3)
#         initial != advice on 5 (p1: i2 i3 i4; p2: i1 i4), switched to advice on 2 (p1: i2, i4)
#         model wrong on 4 (i3, i4 x2), followed on 2 (p1 i4, p2 i3) -> over-reliance 2/4
#         model right on 4, rejected on 1 (p2 i1) -> under-reliance 1/4
#         RAIR (Schemmer et al. 2023): first answer wrong, advice right on 2 (p1 i2, p2 i1);
#           switched to the advice on 1 (p1 i2) -> 1/2
#         RSR: first answer right, advice wrong on 3 (p1 i3, p1 i4, p2 i4); kept on 2 (p1 i3, p2 i4) -> 2/3
#           (p2 i3: first answer A and advice A both wrong, in neither denominator)
#         accuracy before advice: p1 i1 i3 i4, p2 i2 i4 = 5/8; after: p1 i1 i2 i3, p2 i2 i4 = 5/8
#   pers: final == advice on 8 of 8; initial != advice on 5 (p3 all 4, p4 i3), all switched: 5/5
#         over-reliance 4/4, under-reliance 0/4
#         RAIR: first wrong, advice right on 2 (p3 i1, i2), both switched -> 2/2
#         RSR: first right, advice wrong on 3 (p3 i3, i4, p4 i3), none kept -> 0/3
#         accuracy before: p3 i3 i4, p4 i1 i2 i3 = 5/8; after: i1 i2 x2 = 4/8
# as (successes, trials) so the Wilson interval's n is checked too
EXPECTED = {
    "desc": {"agreement": (5, 8), "switch_fraction": (2, 5), "over_reliance": (2, 4), "under_reliance": (1, 4),
             "rair": (1, 2), "rsr": (2, 3), "initial_accuracy": (5, 8), "accuracy": (5, 8)},
    "pers": {"agreement": (8, 8), "switch_fraction": (5, 5), "over_reliance": (4, 4), "under_reliance": (0, 4),
             "rair": (2, 2), "rsr": (0, 3), "initial_accuracy": (5, 8), "accuracy": (4, 8)},
}


def test_reliance_by_condition_matches_hand_computation():
    got = analysis.reliance_by_condition(_trial_log()).set_index(["condition", "measure"])
    z = stats.norm.ppf(0.975)
    for cond, measures in EXPECTED.items():
        for m, (k, n) in measures.items():
            row = got.loc[(cond, m)]
            assert (row["mean"], row["n"]) == (pytest.approx(k / n), n), (cond, m)
            lo, hi = _wilson_closed_form(k, n, z)
            assert row["ci_low"] == pytest.approx(max(lo, 0.0), abs=1e-12)
            assert row["ci_high"] == pytest.approx(min(hi, 1.0), abs=1e-12)
            assert row["n_participants"] == (1 if (cond, m) == ("pers", "rair") else 2), (cond, m)  # RAIR: p3 only


def test_reliance_per_participant_matches_hand_computation():
    # participant p1 of the table: initial A,B,B,B; advice A; final A,A,B,A; truth A,A,B,B
    r = analysis.reliance(list("ABBB"), list("AAAA"), list("AABA"), truth=list("AABB"))
    assert (r.agreement, r.switch, r.over_reliance, r.under_reliance) == (0.75, 2 / 3, 0.5, 0.0)
    assert (r.initial_accuracy, r.team_accuracy) == (0.75, 0.75)
    # RAIR: i2 (first B wrong, advice A right) switched: 1/1; RSR: i3 kept B, i4 followed A: 1/2
    assert (r.rair, r.rsr) == (1.0, 0.5)


# Schemmer et al. (2023) on three classes, counted by hand. Each line: initial, advice, final, truth.
#   t1 C A A A  first wrong, advice right, switched          -> RAIR case, hit
#   t2 C A B A  first wrong, advice right, moved to B         -> RAIR case, miss (did not take the advice)
#   t3 B A B A  first wrong, advice right, kept               -> RAIR case, miss
#   t4 A B A A  first right, advice wrong, kept               -> RSR case, hit
#   t5 A B C A  first right, advice wrong, moved to C         -> RSR case, miss (did not keep it)
#   t6 A B B A  first right, advice wrong, followed           -> RSR case, miss
#   t7 A A A A  agree at first: neither; t8 B C C A: both wrong: neither
# RAIR = 1/3, RSR = 1/3; switch fraction: initial != advice on t1-t6, t8 (7), final == advice on t1, t6, t8 -> 3/7
THREE_CLASS = """
    C A A A
    C A B A
    B A B A
    A B A A
    A B C A
    A B B A
    A A A A
    B C C A
"""


def test_rair_and_rsr_on_a_hand_counted_three_class_table():
    i, m, f, t = zip(*(line.split() for line in THREE_CLASS.strip().splitlines()))
    r = analysis.reliance(i, m, f, truth=t)
    assert (r.rair, r.rsr, r.switch) == (pytest.approx(1 / 3), pytest.approx(1 / 3), pytest.approx(3 / 7))
    log = pd.DataFrame([dict(participant_id="p", condition="c", trial_index=k, item_id=f"i{k}", phase=ph,
                             response=resp, model_prediction=m[k], truth=t[k], model_correct=m[k] == t[k],
                             fidelity=None, correct=None, confidence=None)
                        for k in range(len(i)) for ph, resp in (("initial", i[k]), ("final", f[k]))])
    table = analysis.reliance_by_condition(log).set_index("measure")
    assert table.loc["rair", ["mean", "n"]].tolist() == [pytest.approx(1 / 3), 3]
    assert table.loc["rsr", ["mean", "n"]].tolist() == [pytest.approx(1 / 3), 3]
    assert (table.loc["rair", "ci_low"], table.loc["rair", "ci_high"]) == wilson(1, 3)[1:]


def test_no_measure_equals_final_accuracy_by_construction():
    # the old "appropriate reliance" (followed right advice or rejected wrong advice) is final accuracy
    # itself in two classes (171 of 240 in both arms of the bundled example); it is not reported apart
    assert "appropriate_reliance" not in analysis.PROPORTIONS
    assert not hasattr(analysis.reliance(["A"], ["A"], ["A"], ["A"]), "appropriate_reliance")


def test_weight_of_advice_hand_values():
    # trial 1: 10 -> 20 with advice 30: (20-10)/(30-10) = 0.5; trial 2: adopts advice: 1;
    # trial 3: moves away from advice: -0.5, capped to 0; trial 4: advice == initial, left out
    # trial 5: overshoots: (130-100)/(120-100) = 1.5, capped to 1
    woa, n = analysis.weight_of_advice([10, 50, 40, 7, 100], [30, 60, 60, 7, 120], [20, 60, 30, 9, 130])
    assert n == 4 and woa == pytest.approx((0.5 + 1 + 0 + 1) / 4)
    assert math.isnan(analysis.weight_of_advice([1], [1], [2])[0])
    with pytest.raises(ValueError, match="equal lengths"):
        analysis.weight_of_advice([1, 2], [1], [1])


def test_summary_confidence_is_bootstrapped_within_its_range():
    s = analysis.summary_by_condition(_trial_log(), pd.DataFrame()).set_index(["condition", "measure"])
    row = s.loc[("desc", "confidence")]
    assert (row["mean"], row["ci_low"], row["ci_high"], row["n"]) == (70.0, 70.0, 70.0, 2)
    props = s[s.index.get_level_values("measure") != "confidence"]
    assert ((props["ci_low"] >= 0) & (props["ci_high"] <= 1)).all()


def test_weight_of_advice_per_trial_and_by_condition_with_the_standard_exclusion():
    # per trial by hand: (20-10)/(30-10) = 0.5; (60-50)/(60-50) = 1; advice == first estimate -> excluded;
    # (5-0)/(-10-0) = -0.5 -> capped to 0; (130-100)/(120-100) = 1.5 -> capped to 1
    w = analysis.woa_per_trial([10, 50, 7, 0, 100], [30, 60, 7, -10, 120], [20, 60, 9, 5, 130])
    assert w[[0, 1, 3, 4]].tolist() == [0.5, 1.0, 0.0, 1.0] and math.isnan(w[2])
    rows = []
    for pid, cond, trials in (("p1", "a", [(10, 30, 20), (50, 60, 60)]),      # mean 0.75
                              ("p2", "a", [(7, 7, 9), (0, -10, 5)]),          # one excluded; mean 0.0
                              ("p3", "b", [(100, 120, 130)])):                # 1.0
        for t, (i, a, f) in enumerate(trials):
            for phase, r in (("initial", i), ("final", f)):
                rows.append(dict(participant_id=pid, condition=cond, trial_index=t, item_id=f"i{t}", phase=phase,
                                 response=str(r), model_prediction=str(a), truth=None, model_correct=None,
                                 fidelity=None))
    out = analysis.woa_by_condition(pd.DataFrame(rows)).set_index("condition")
    assert out.loc["a", "mean"] == pytest.approx(0.375)  # mean of the participants' means 0.75 and 0.0
    assert out.loc["a", ["n_trials", "n_excluded", "n_participants"]].tolist() == [3, 1, 2]
    # bootstrap over two participants: every resample mean is 0, 0.375 or 0.75
    assert out.loc["a", "ci_low"] == 0.0 and out.loc["a", "ci_high"] == 0.75
    assert out.loc["b", "mean"] == 1.0 and math.isnan(out.loc["b", "ci_low"])  # one participant: no interval


def test_bootstrap_mean_covers_the_mean_of_small_samples_near_the_nominal_rate():
    """Planted: 5 values from an exponential distribution of mean 1, 400 samples. The plain percentile interval
    covered the mean in 0.78 of them (too narrow at small n); the expanded one (Hesterberg 2015) in at least
    0.84 (0.87 measured; SE about 0.017)."""
    rng = np.random.default_rng(5)
    covered = [bootstrap_mean(rng.exponential(1.0, 5).tolist(), seed=i) for i in range(400)]
    assert np.mean([lo <= 1.0 <= hi for _, lo, hi, _ in covered]) >= 0.84
