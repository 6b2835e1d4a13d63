"""Issue 16: a two-stage trial asks the participant's own decision, then shows the model's advice
with the condition's explanation and asks the final decision and confidence; each stage is stored
with its own timing, and a reload (here: a new server process) between the stages never loses the
first decision."""

from __future__ import annotations

import pandas as pd

from study import analysis, export, flow, runtime
from tests.study.conftest import db_url  # noqa: F401  (fixture)
from tests.study.live_study import STUDY, enrol_via_page, participant, serve_study, submit


def _text_of(component) -> str:
    """Every string in a rendered Dash component tree."""
    if isinstance(component, str):
        return component
    children = getattr(component, "children", None)
    if children is None:
        return ""
    if not isinstance(children, (list, tuple)):
        children = [children]
    return " ".join(_text_of(c) for c in children)


def test_reload_between_stages_keeps_the_first_decision(db_url, tmp_path, monkeypatch):  # noqa: F811
    from app.views.study import render

    serve_study(db_url, tmp_path, monkeypatch)
    token = enrol_via_page("low")
    assert submit(token, 0, "instructions") == (token, "")
    assert submit(token, 1, "forward", {"response": "benign"}, rt_ms=900.0) == (token, "")
    before = _text_of(render(STUDY, token))
    assert "What is your answer" in before and "The model predicts" not in before  # stage 1: no advice yet
    assert submit(token, 1, "initial", {"response": "benign"}, rt_ms=2100.0) == (token, "")

    runtime.reset()  # the reload lands on another worker: nothing in memory survives
    p = participant(token)
    assert flow.current(runtime.engine(), runtime.get_study(STUDY), p)[1:] == (flow.Step("trial", 0, 0), "final")
    after = _text_of(render(STUDY, token))
    assert "The model predicts" in after and "final answer" in after  # stage 2: advice, then final answer
    # the first decision cannot be replaced by a resent or changed stage-1 answer
    assert submit(token, 1, "initial", {"response": "malignant"}) == (token, "")
    assert submit(token, 1, "final", {"response": "malignant", "confidence": 80}, rt_ms=3300.0) == (token, "")

    trials = pd.DataFrame(export.table_rows(runtime.engine(), "trial_log", STUDY))
    dec = analysis.decision_table(trials)
    assert len(dec) == 1
    row = dec.iloc[0]
    assert (row["initial"], row["final"], row["confidence"]) == ("benign", "malignant", 80.0)
    assert (row["rt_initial_ms"], row["rt_final_ms"]) == (2100.0, 3300.0)
    assert row["server_timestamp_initial"] <= row["server_timestamp_final"]
    assert row["switched"] == (row["model_prediction"] == "malignant")
