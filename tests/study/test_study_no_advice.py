"""Issue 16: a no-advice arm (``explanation: none``): the participant decides once, without the model;
nothing of the model is shown or logged as shown; reliance measures are undefined there (n = 0,
NaN) and accuracy is compared across arms."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from study import analysis, export, flow, runtime
from tests.study.conftest import db_url  # noqa: F401  (fixture)
from tests.study.live_study import DATA, STUDY, enrol_via_page, participant, serve_study, submit
from tests.study.test_study_two_stage import _text_of

RELIANCE = ("agreement", "switch_fraction", "over_reliance", "under_reliance", "rair", "rsr",
            "initial_accuracy")


def _log(rows):
    cols = ["participant_id", "condition", "trial_index", "item_id", "phase", "response", "model_prediction",
            "truth", "model_correct", "fidelity"]
    return pd.DataFrame([dict(zip(cols, r)) for r in rows])


def test_reliance_is_undefined_and_accuracy_is_compared_on_a_fixed_table():
    log = _log([
        # advised arm: p1 item a (model right), item b (model wrong, followed), item c (model wrong, resisted)
        ("p1", "adv", 0, "a", "initial", "x", "x", "x", True, 1.0), ("p1", "adv", 0, "a", "final", "x", "x", "x", True, 1.0),
        ("p1", "adv", 1, "b", "initial", "x", "y", "x", False, 1.0), ("p1", "adv", 1, "b", "final", "y", "y", "x", False, 1.0),
        ("p1", "adv", 2, "c", "initial", "y", "x", "y", False, 1.0), ("p1", "adv", 2, "c", "final", "y", "x", "y", False, 1.0),
        # no-advice arm: one decision per trial, no model prediction logged; right on 2 of 3
        ("p2", "alone", 0, "a", "final", "x", None, "x", None, None),
        ("p2", "alone", 1, "b", "final", "y", None, "x", None, None),
        ("p2", "alone", 2, "c", "final", "y", None, "y", None, None),
    ])
    table = analysis.reliance_by_condition(log).set_index(["condition", "measure"])
    for m in RELIANCE:
        row = table.loc[("alone", m)]
        assert row["n"] == 0 and math.isnan(row["mean"]) and math.isnan(row["ci_low"]), m
    assert table.loc[("alone", "accuracy"), "mean"] == pytest.approx(2 / 3) and table.loc[("alone", "accuracy"), "n"] == 3
    # advised arm by hand: over-reliance 1 of 2 wrong-advice trials; accuracy: a right, b wrong, c right
    assert table.loc[("adv", "over_reliance"), ["mean", "n"]].tolist() == [0.5, 2]
    assert table.loc[("adv", "accuracy"), "mean"] == pytest.approx(2 / 3)
    assert table.loc[("adv", "agreement"), ["mean", "n"]].tolist() == [pytest.approx(2 / 3), 3]
    pp = analysis.per_participant(log).set_index("participant_id")
    assert math.isnan(pp.loc["p2", "over_reliance"]) and pp.loc["p2", "team_accuracy"] == pytest.approx(2 / 3)


def test_no_advice_trial_asks_one_decision_shows_no_model_and_logs_no_advice(db_url, tmp_path, monkeypatch):  # noqa: F811
    from app.views.study import render

    text = (DATA / "small_study.yaml").read_text().replace("{id: none, explanation: prediction}",
                                                           "{id: none, explanation: none}")
    study = serve_study(db_url, tmp_path, monkeypatch, text=text)
    assert flow.trial_phases(study, "none") == ["final"]
    assert flow.trial_phases(study, "descriptive") == ["forward", "initial", "final"]
    for _ in range(6):  # enrol until someone lands in the no-advice arm (blocks of 3 arms)
        token = enrol_via_page("low")
        if participant(token).condition_order[0] == "none":
            break
    p = participant(token)
    assert p.condition_order[0] == "none"
    assert submit(token, 0, "instructions") == (token, "")
    page = _text_of(render(STUDY, token))
    assert "What is your answer" in page and "The model predicts" not in page and "confident" in page
    assert submit(token, 1, "initial", {"response": "benign"})[1] != ""  # the advised phases do not exist here
    assert submit(token, 1, "final", {"response": "benign", "confidence": 40}) == (token, "")
    log = pd.DataFrame(export.table_rows(runtime.engine(), "trial_log", STUDY))
    mine = log[log["participant_id"] == p.id]
    assert mine["phase"].tolist() == ["final"] and mine["model_prediction"].isna().all()
    assert mine["explanation_id"].isna().all() and mine["truth"].notna().all()


def _fixed_log():
    return _log([
        ("p1", "adv", 0, "a", "initial", "x", "x", "x", True, 1.0), ("p1", "adv", 0, "a", "final", "x", "x", "x", True, 1.0),
        ("p1", "adv", 1, "b", "initial", "x", "y", "x", False, 1.0), ("p1", "adv", 1, "b", "final", "y", "y", "x", False, 1.0),
        ("p1", "adv", 2, "c", "initial", "y", "x", "y", False, 1.0), ("p1", "adv", 2, "c", "final", "y", "x", "y", False, 1.0),
        ("p2", "alone", 0, "a", "final", "x", None, "x", None, None),
        ("p2", "alone", 1, "b", "final", "y", None, "x", None, None),
    ])


def test_rair_rsr_baseline_the_plot_the_json_and_the_page_say_why_a_measure_is_undefined():
    from app.views import figures_study
    from app.views.study_research import _undefined
    from app.cli.study_simulate import headline
    from study.schema import parse_study

    table = analysis.reliance_by_condition(_fixed_log())
    t = table.set_index(["condition", "measure"])
    # by hand, advised arm: a first answer right and advice right (neither); b first right, advice wrong,
    # followed; c first right, advice wrong, kept -> RSR 1/2; no first answer wrong -> RAIR has no trial
    assert t.loc[("adv", "rsr"), ["mean", "n"]].tolist() == [0.5, 2]
    assert t.loc[("adv", "rair"), "n"] == 0 and math.isnan(t.loc[("adv", "rair"), "mean"])
    assert t.loc[("alone", "rair"), "n"] == 0 and t.loc[("alone", "rsr"), "n"] == 0
    assert t.loc[("alone", "accuracy"), ["mean", "n"]].tolist() == [0.5, 2]  # the baseline: a right, b wrong
    fig = figures_study.appropriateness(table)
    assert fig.data == () and "adv, alone" in fig.layout.annotations[0].text  # neither has both measures
    js = headline(table)
    assert js["alone"]["rair"] == [None, None, None] and js["adv"]["rsr"][0] == 0.5
    study = parse_study((DATA / "small_study.yaml").read_text().replace("{id: none, explanation: prediction}",
                                                                        "{id: none, explanation: none}"))
    assert _undefined(study, "none") == "undefined (no advice)"
    assert _undefined(study, "descriptive") == "undefined (no trials of that kind)"
