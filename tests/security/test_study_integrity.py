"""Issue 11, kinds 3 and 11 (study parts): a participant is never stuck, a running study cannot be
altered by a model switch, and a '%' in DATABASE_URL does not stop study mode."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from sqlalchemy import inspect, select

from app import services
from study import flow, runtime, store
from study.db import make_engine, open_database
from study.models import TrialLog
from study.simulate import stimulus_context
from tests.study.conftest import db_url, engine, study  # noqa: F401  (fixtures)
from tests.study.live_study import enrol_via_page, participant, serve_study, submit


def _at_final(engine, study):  # noqa: F811
    store.register_study(engine, study)
    p, token = store.enrol(engine, study, stratum="low")
    ctx = stimulus_context(study, store.trial_plan(p)[0][2], p.condition_order[0])
    flow.submit(engine, study, p, 0)
    for phase in ("forward", "initial"):
        p = store.participant_by_token(engine, study.id, token)
        flow.submit(engine, study, p, 1, phase=phase, response="benign", context=ctx)
    return store.participant_by_token(engine, study.id, token), token, ctx


def test_crash_between_answer_and_progress_does_not_strand_the_participant(engine, study, monkeypatch):  # noqa: F811
    """Attack/fault: the server dies after storing a trial's last answer and before counting the
    step. Before, the participant was stuck for good (the trial had no phase left to ask, and a
    resend was ignored). Now both writes are one transaction: nothing was stored, the participant
    is asked the final answer again, and submitting it moves them on."""
    p, token, ctx = _at_final(engine, study)

    def crash(*_a, **_k):
        raise RuntimeError("server killed between the answer and the progress update")

    monkeypatch.setattr(store, "advance", crash)
    with pytest.raises(RuntimeError):
        flow.submit(engine, study, p, 1, phase="final", response="malignant", context=ctx, confidence=70.0)
    monkeypatch.undo()
    p = store.participant_by_token(engine, study.id, token)
    i, step, phase = flow.current(engine, study, p)
    assert (i, step.kind, phase) == (1, "trial", "final")
    assert flow.logged_phases(engine, p.id, 0) == {"forward", "initial"}
    out = flow.submit(engine, study, p, 1, phase="final", response="malignant", context=ctx, confidence=70.0)
    assert out.stored and out.progress == 2
    assert flow.current(engine, study, store.participant_by_token(engine, study.id, token))[0] == 2


def test_a_participant_already_stranded_is_moved_on(engine, study):  # noqa: F811
    """Data written by the old code: every phase logged, step not counted. Showing the page counts
    the step (the participant is not left on a trial with nothing to answer), and a resent final
    answer does too."""
    p, token, ctx = _at_final(engine, study)
    store.record_trial(engine, study, p, trial_index=0, phase="final", response="benign", context=ctx)
    i, step, phase = flow.current(engine, study, store.participant_by_token(engine, study.id, token))
    assert (i, step.kind, step.trial_index, phase) == (2, "trial", 1, "forward")
    assert store.participant_by_token(engine, study.id, token).progress == 2

    q, token2, ctx2 = _at_final(engine, study)
    store.record_trial(engine, study, q, trial_index=0, phase="final", response="benign", context=ctx2)
    again = flow.submit(engine, study, q, 1, phase="final", response="benign", context=ctx2)
    assert again.ignored and not again.stored and again.progress == 2


def _other_workspace(ws):
    """The same table with a different model and the same classes (an "uploaded" one): it learned the opposite
    labels, and is wrapped as every workspace's model is (:func:`workspace.workspace.adapted_workspace`)."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from workspace.workspace import adapted_workspace

    other = make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000)).fit(ws.X, 1 - np.asarray(ws.y))
    return adapted_workspace(other, ws.X, ws.y, classes=tuple(ws.adapter.class_names), target=ws.target,
                             train_idx=ws.train_idx, test_idx=ws.test_idx, name="uploaded.skops", source=ws.source)


@pytest.fixture
def served(db_url, tmp_path, monkeypatch):  # noqa: F811
    study = serve_study(db_url, tmp_path, monkeypatch)
    original = services.workspace()
    yield study
    services.init(original, warm=False)


def test_pinned_stimuli_survive_a_model_switch(served):
    """Attack: during a running study an anonymous upload (or a class switch) replaced the model;
    every later participant was shown, and logged with, the new model's advice. Now the study's
    stimuli are pinned when it is first served: after the switch participants see and are logged
    with the pinned advice and explanation, and the researcher page says the live model differs."""
    from app.services.study_stimuli import stimulus_view

    first = enrol_via_page("low")
    plan = [(item, cond) for s in served.stimuli for item, cond in [(s.id, c.id) for c in served.conditions]]
    before = {key: stimulus_view(served, *key) for key in plan}
    ws = services.workspace()
    services.init(_other_workspace(ws), warm=False)
    assert np.all(services.workspace().output(ws.X.iloc[[12, 45, 77]]) != ws.output(ws.X.iloc[[12, 45, 77]]))
    for key in plan:
        after = stimulus_view(served, *key)
        assert after.context == before[key].context
        assert after.features == before[key].features and after.statement == before[key].statement
        assert (after.figure is None) == (before[key].figure is None)
        if after.figure is not None:
            assert after.figure.to_json() == before[key].figure.to_json()
    second = enrol_via_page("high")
    for token in (first, second):
        p = participant(token)
        assert submit(token, 0, "instructions", {}) == (token, "")
        assert submit(token, 1, "forward", {"response": "benign"}) == (token, "")
        item = store.trial_plan(p)[0][2]
        with runtime.engine().connect() as conn:
            logged = conn.scalar(select(TrialLog.model_prediction).where(TrialLog.participant_id == p.id))
        assert logged == before[(item, p.condition_order[0])].context.model_prediction
    from app.services.study_stimuli import pin_status

    warning = pin_status(served)
    assert warning and "live model differs" in warning and "pinned" in warning


def test_percent_in_database_url(tmp_path):
    """Fault: a DATABASE_URL with '%' (a URL-encoded password, or a path) crashed study mode at
    start (Alembic's ConfigParser read '%' as interpolation). A SQLite path with '%25' opens and
    migrates, in the decoded folder; a PostgreSQL URL with an encoded password parses (not connected)."""
    url = f"sqlite:///{tmp_path}/pct%25dir/study.sqlite3"
    eng = open_database(url)
    assert {"participants", "study_pins", "enrolment_log"} <= set(inspect(eng).get_table_names())
    assert Path(tmp_path, "pct%dir", "study.sqlite3").is_file()
    eng.dispose()
    pg = make_engine("postgres://candor:p%25ss%40word@db.example:5432/study%5F1")
    assert pg.url.password == "p%ss@word" and pg.url.database == "study_1"
    assert pg.url.drivername == "postgresql+psycopg"
    pg.dispose()
