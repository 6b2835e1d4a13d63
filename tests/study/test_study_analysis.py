"""Analysis oracles (docs/methods.md, "Tests with exact oracles", T15(a)), scoring and the by-condition summary."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from study import analysis, export, store
from study.instruments import JIAN2000, score
from study.simulate import run_participant


def test_t15a_agreement_and_switch():
    r = analysis.reliance(list("ABBA"), list("AAAB"), list("AABB"))
    assert r.n == 4
    assert r.agreement == pytest.approx(3 / 4, abs=1e-9)
    assert r.switch == pytest.approx(2 / 3, abs=1e-9)
    assert math.isnan(r.over_reliance) and math.isnan(r.team_accuracy)


def test_reliance_against_truth():
    # model wrong on trials 3 and 4 (truth B, A); final agrees with the wrong model on trial 4 only.
    r = analysis.reliance(list("ABBA"), list("AAAB"), list("AABB"), truth=list("AABA"))
    assert r.over_reliance == pytest.approx(1 / 2)   # trial 4 followed the wrong model; trial 3 did not
    assert r.under_reliance == pytest.approx(0 / 2)  # both right-model trials were followed
    assert r.team_accuracy == pytest.approx(3 / 4)   # A,A,B correct; B vs truth A wrong
    none_wrong = analysis.reliance(["A"], ["A"], ["A"], truth=["A"])
    assert math.isnan(none_wrong.over_reliance) and none_wrong.under_reliance == 0.0
    with pytest.raises(ValueError, match="equal lengths"):
        analysis.reliance(["A"], ["A", "B"], ["A"])


def test_jian_scoring_reverse_codes_distrust():
    answers = {label: 6 for label in JIAN2000.labels}
    answers.update({label: 2 for label in JIAN2000.reverse})
    s = score(answers, scale_points=7, reverse=JIAN2000.reverse, instrument="jian2000")
    assert s == {"total": 6.0, "sum": 72.0, "n_items": 12, "trust": 6.0, "distrust": 2.0}
    with pytest.raises(ValueError, match="integer in 1..7"):
        score({"wary": 0}, scale_points=7)


def _frames(engine):
    return (pd.DataFrame(export.table_rows(engine, "trial_log")),
            pd.DataFrame(export.table_rows(engine, "questionnaire_responses")))


def test_summary_matches_hand_computation(engine, study):
    store.register_study(engine, study)
    for i in range(9):
        run_participant(engine, study, seed=100 + i, stratum="low")
    trials, responses = _frames(engine)
    pp = analysis.per_participant(trials)
    assert len(pp) == 9 and set(pp["condition"]) == set(study.condition_ids)
    dec = analysis.decision_table(trials)
    assert len(dec) == 9 * 6
    one = dec[dec["participant_id"] == pp["participant_id"].iloc[0]]
    expected = analysis.reliance(one["initial"], one["model_prediction"], one["final"], one["truth"])
    row = pp.iloc[0]
    assert row["agreement"] == pytest.approx(expected.agreement)
    assert row["over_reliance"] == pytest.approx(expected.over_reliance)
    assert row["mean_fidelity"] == pytest.approx({"none": math.nan, "descriptive": 0.95, "persuasive": 0.6}[row["condition"]],
                                                 nan_ok=True)
    summary = analysis.summary_by_condition(trials, responses)
    agree = summary[summary["measure"] == "agreement"].set_index("condition")
    for cond, g in pp.groupby("condition"):
        assert agree.loc[cond, "mean"] == pytest.approx(g["agreement"].mean())
        assert agree.loc[cond, "n"] == 6 * len(g) and agree.loc[cond, "n_participants"] == len(g)  # Wilson over trials
    trust = summary[summary["measure"] == "jian2000.trust"].set_index("condition")["mean"]
    assert trust["persuasive"] > trust["none"]  # simulated persuasive participants report more trust
    scores = analysis.questionnaire_scores(responses)
    assert len(scores) == 9 * 3 and set(scores["questionnaire_id"]) == {"jian2000", "hoffman2018_satisfaction", "effort"}


def test_calibration_correlation(engine, study):
    store.register_study(engine, study)
    for i in range(9):
        run_participant(engine, study, seed=200 + i, stratum="high")
    trials, responses = _frames(engine)
    cal = analysis.calibration(trials, responses)
    pts = cal["points"]
    assert cal["n"] == len(pts) == int((pts["condition"] != "none").sum())  # "none" shows no explanation
    assert -1 <= cal["r"] <= 1 and cal["ci_low"] <= cal["r"] <= cal["ci_high"]
    assert cal["r"] < 0  # simulated: lower-fidelity persuasive explanations earn more trust
