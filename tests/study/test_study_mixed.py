"""Issue 16: the main contrast (over-reliance by condition) as a logistic mixed model with participant
and item random intercepts. Oracles: the closed-form log odds ratio of a 2x2 table (the exact
logistic-regression estimate when there is no random variation), and the known generating effect."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from study.mixed import over_reliance_contrast


def _log(n_per_arm: int, n_items: int, effect: float, sd_p: float, sd_i: float, seed: int, base: float = 0.0):
    rng = np.random.default_rng(seed)
    item_u = rng.normal(0, sd_i, n_items)
    rows = []
    for p in range(2 * n_per_arm):
        cond = "persuasive" if p % 2 else "descriptive"
        u = rng.normal(0, sd_p)
        for i in range(n_items):
            lp = base + (effect if cond == "persuasive" else 0.0) + u + item_u[i]
            follow = rng.random() < 1 / (1 + math.exp(-lp))
            for phase, resp in (("initial", "B"), ("final", "A" if follow else "B")):
                rows.append(dict(participant_id=f"p{p}", condition=cond, trial_index=i, item_id=f"i{i}", phase=phase,
                                 response=resp, model_prediction="A", truth="B", model_correct=False, fidelity=None))
    return pd.DataFrame(rows)


def test_without_random_variation_matches_the_2x2_log_odds_ratio():
    log = _log(60, 10, 1.0, 0.0, 0.0, seed=1)
    final = log[log["phase"] == "final"]
    k = final.groupby("condition")["response"].apply(lambda s: int((s == "A").sum()))
    n = final.groupby("condition").size()
    want = math.log(k["persuasive"] / (n["persuasive"] - k["persuasive"])) - \
        math.log(k["descriptive"] / (n["descriptive"] - k["descriptive"]))
    (c,) = over_reliance_contrast(log)
    assert (c.condition, c.reference, c.n_trials, c.n_participants, c.n_items) == ("persuasive", "descriptive", 1200, 120, 10)
    assert c.effect == pytest.approx(want, abs=0.08)
    assert c.low < c.effect < c.high and c.odds_ratio[0] == pytest.approx(math.exp(c.effect))


def test_recovers_the_generating_effect_with_crossed_random_intercepts():
    (c,) = over_reliance_contrast(_log(40, 8, 1.2, 0.7, 0.5, seed=2))
    assert abs(c.effect - 1.2) < 3 * c.sd and c.low < 1.2 < c.high
    none, = over_reliance_contrast(_log(40, 8, 0.0, 0.7, 0.5, seed=3))
    assert none.low < 0 < none.high


def test_needs_two_conditions_with_wrong_advice():
    log = _log(5, 4, 0.5, 0.0, 0.0, seed=4)
    assert over_reliance_contrast(log[log["condition"] == "persuasive"]) == []
    with pytest.raises(ValueError, match="reference condition 'none'"):
        over_reliance_contrast(log, reference="none")
