"""The server-side participant flow: step list, phase order, repeats ignored, steps ahead refused."""

from __future__ import annotations

import pytest
from sqlalchemy import func, select

from study import flow, store
from study.models import TrialLog
from study.schema import parse_study
from study.simulate import stimulus_context


def _reload(engine, study, token):
    return store.participant_by_token(engine, study.id, token)


def test_step_list_between(engine, study):
    store.register_study(engine, study)
    p, _ = store.enrol(engine, study, stratum="low")
    kinds = [(s.kind, s.trial_index, s.questionnaire_id) for s in flow.steps(study, p)]
    assert kinds == ([("instructions", None, None)] + [("trial", t, None) for t in range(3)] + [("attention", 2, None)]
                     + [("trial", t, None) for t in range(3, 6)]
                     + [("questionnaire", None, q) for q in ("jian2000", "hoffman2018_satisfaction", "effort")]
                     + [("done", None, None)])
    assert flow.trial_phases(study) == ["forward", "initial", "final"]


def test_step_list_within(engine, example_text):
    within = parse_study(example_text.replace("design: between", "design: within").replace("[3, 6]", "[6]"))
    store.register_study(engine, within)
    p, _ = store.enrol(engine, within, stratum="high")
    steps = flow.steps(within, p)
    questionnaires = [(s.block_index, s.questionnaire_id) for s in steps if s.kind == "questionnaire"]
    assert questionnaires == [(b, q) for b in range(3) for q in ("jian2000", "hoffman2018_satisfaction", "effort")]
    assert [s.block_index for s in steps if s.kind == "trial"] == [0, 0, 1, 1, 2, 2]


def test_submit_order_repeats_and_completion(engine, study):
    store.register_study(engine, study)
    p, token = store.enrol(engine, study, stratum="low")
    assert flow.current(engine, study, p)[:2] == (0, flow.Step("instructions"))
    with pytest.raises(ValueError, match="not the participant's current step"):
        flow.submit(engine, study, p, 1, phase="forward", response="benign")
    assert flow.submit(engine, study, p, 0).progress == 1
    p = _reload(engine, study, token)
    assert flow.submit(engine, study, p, 0).ignored  # a resent "Continue"
    item = store.trial_plan(p)[0][2]
    ctx = stimulus_context(study, item, p.condition)
    with pytest.raises(ValueError, match="phase 'forward' comes before 'final'"):
        flow.submit(engine, study, p, 1, phase="final", response="benign", context=ctx)
    for phase in ("forward", "initial"):
        out = flow.submit(engine, study, p, 1, phase=phase, response="benign", context=ctx)
        assert out.stored and out.progress == 1
        assert flow.current(engine, study, _reload(engine, study, token))[2] != phase
    again = flow.submit(engine, study, p, 1, phase="initial", response="malignant", context=ctx)
    assert again.ignored and not again.stored
    assert flow.submit(engine, study, p, 1, phase="final", response="benign", context=ctx).progress == 2
    with engine.connect() as conn:
        assert conn.scalar(select(func.count()).select_from(TrialLog)) == 3
    # walk to the end
    p = _reload(engine, study, token)
    while True:
        i, step, phase = flow.current(engine, study, p)
        if step.kind == "done":
            break
        if step.kind == "trial":
            ctx = stimulus_context(study, store.trial_plan(p)[step.trial_index][2], p.condition)
            flow.submit(engine, study, p, i, phase=phase, response="benign", context=ctx)
        elif step.kind == "attention":
            flow.submit(engine, study, p, i, response="blue")
        else:
            q = next(x for x in study.questionnaires if x.id == step.questionnaire_id)
            flow.submit(engine, study, p, i, response={it.label: 3 for it in q.items})
        p = _reload(engine, study, token)
    assert p.status == "completed" and p.completion_code and p.progress == len(flow.steps(study, p)) - 1
