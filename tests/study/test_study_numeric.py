"""Issue 16: a numeric (regression-style) trial through the server's participant flow: the participant
gives a number, sees the model's number, gives a final number; both are stored as numbers with the
model's advice and the target, and the weight of advice per condition equals the hand value."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from study import analysis, export, runtime
from study.truth import number_text
from tests.study.conftest import db_url  # noqa: F401  (fixture)
from tests.study.live_study import STUDY, app_once, participant, serve_study, submit

NUMERIC = """id: trust-pilot
model: {id: linear, answer: numeric, range: [-1000, 1000]}
stimuli: [{id: r1, row: 1}, {id: r2, row: 2}, {id: r3, row: 3}]
conditions: [{id: descriptive, explanation: descriptive}, {id: prediction, explanation: prediction}]
tasks: [decision_with_advice]
randomisation: {seed: 1, no_wrong_first: 0}
"""


@pytest.fixture
def regression_workspace(tmp_path):
    """A linear regressor on a small table, installed as the served workspace (the sample is put back after)."""
    from skops.io import dump
    from sklearn.linear_model import LinearRegression

    from app import services
    from workspace.workspace import load_user_workspace

    app_once()
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(40, 3)), columns=["a", "b", "c"])
    y = 10 * X["a"] - 5 * X["b"] + 2 * X["c"] + 50 + rng.normal(0, 1, 40)
    dump(LinearRegression().fit(X, y), tmp_path / "linear.skops")
    X.assign(y=y).to_csv(tmp_path / "table.csv", index=False)
    before = services.workspace()
    ws = load_user_workspace(tmp_path / "linear.skops", tmp_path / "table.csv", "y")
    services.init(ws, warm=False)
    try:
        yield ws
    finally:
        services.init(before, warm=False)


def test_numeric_trial_stores_numbers_and_weight_of_advice_is_the_hand_value(db_url, tmp_path, monkeypatch,  # noqa: F811
                                                                           regression_workspace):
    from app.views.study import render
    from tests.study.test_study_two_stage import _text_of

    ws = regression_workspace
    serve_study(db_url, tmp_path, monkeypatch, text=NUMERIC)
    token, err = submit(None, "consent", None, {"consent": ["yes"]})
    assert err == "" and token
    assert submit(token, 0, "instructions") == (token, "")
    p = participant(token)
    step = 1
    for t, (_block, _cond, item) in enumerate(p.stimulus_order and [(0, p.condition_order[0], i)
                                                                       for i in p.stimulus_order[0]]):
        row = int(item[1:])
        advice = float(number_text(float(ws.output(ws.X.iloc[[row]])[0])))
        page = _text_of(render(STUDY, token))
        assert "A number from -1,000 to 1,000" in page and "The model predicts" not in page
        assert submit(token, step, "initial", {"response": "ten"})[1].startswith("Please give a number")
        assert submit(token, step, "initial", {"response": 5000})[1].startswith("Please give a number")
        assert submit(token, step, "initial", {"response": advice - 10}) == (token, "")
        assert f"The model predicts: {number_text(advice)}" in _text_of(render(STUDY, token))
        final = advice - 10 + (2.5 if t == 0 else 5.0)  # weights 0.25, then 0.5 and 0.5
        assert submit(token, step, "final", {"response": final, "confidence": 60}) == (token, "")
        step += 1
    log = pd.DataFrame(export.table_rows(runtime.engine(), "trial_log", STUDY))
    mine = log[log["participant_id"] == p.id].sort_values(["trial_index", "phase"])
    assert len(mine) == 6 and mine["correct"].isna().all() and mine["model_correct"].isna().all()
    first = mine[mine["trial_index"] == 0]
    row0 = int(first["item_id"].iloc[0][1:])
    assert first["truth"].iloc[0] == number_text(ws.y[row0])
    assert float(first.loc[first["phase"] == "initial", "response"].iloc[0]) == pytest.approx(
        float(first["model_prediction"].iloc[0]) - 10)
    w = analysis.woa_by_condition(log).set_index("condition")
    assert w.loc[p.condition_order[0], "mean"] == pytest.approx((0.25 + 0.5 + 0.5) / 3)
    assert w.loc[p.condition_order[0], ["n_trials", "n_excluded", "n_participants"]].tolist() == [3, 0, 1]
    s = analysis.summary_by_condition(log, pd.DataFrame(), numeric=True)
    assert set(s["measure"]) == {"weight_of_advice", "confidence"}
    # simulated participants answer numeric trials through the same flow
    from app.cli.study_simulate import run_one
    from study.simulate import RelianceModel

    study = runtime.get_study(STUDY)
    for i in range(2):
        run_one(study, i, 11, RelianceModel())
    log = pd.DataFrame(export.table_rows(runtime.engine(), "trial_log", STUDY))
    assert len(log) == 3 * 6 and log["response"].map(float).between(-1000, 1000).all()
    w = analysis.woa_by_condition(log)
    assert w["mean"].between(0, 1).all() and w["n_trials"].sum() + w["n_excluded"].sum() == 9


def test_numeric_study_file_errors_name_their_lines():
    from study.schema import validate_text

    bad = NUMERIC.replace("range: [-1000, 1000]}", "range: [5, 1], outputs: [a, b]}") \
        .replace("{id: r1, row: 1}", "{id: r1, row: 1, truth: high, model_correct: true}") \
        .replace("tasks: [decision_with_advice]", "tasks: [forward_prediction, decision_with_advice]")
    got = sorted((e.line, e.path) for e in validate_text(bad))
    assert got == [(2, "model.outputs"), (2, "model.range"), (3, "stimuli[0].model_correct"),
                   (3, "stimuli[0].truth"), (5, "tasks")]
