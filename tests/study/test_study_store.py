"""Database behaviour on every back end: migrations, enrolment, idempotency, isolation."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest
from sqlalchemy import func, inspect, select, text
from sqlalchemy.exc import DBAPIError

from study import store
from study.db import migrate, open_database, resolve_url
from study.models import Participant, QuestionnaireResponse, TrialLog
from study.randomisation import allocation_sequence
from study.simulate import run_participant, stimulus_context


def _count(engine, model):
    with engine.connect() as conn:
        return conn.scalar(select(func.count()).select_from(model))


def test_resolve_url(monkeypatch):
    monkeypatch.delenv("DATABASE_URL", raising=False)
    assert resolve_url() == "sqlite:///instance/candor-study.sqlite3"
    monkeypatch.setenv("DATABASE_URL", "postgres://u:p@h:5/d")
    assert resolve_url() == "postgresql+psycopg://u:p@h:5/d"
    assert resolve_url("postgresql://u@h/d") == "postgresql+psycopg://u@h/d"


def test_migrations_create_tables_and_are_idempotent(engine):
    names = set(inspect(engine).get_table_names())
    assert {"studies", "participants", "trial_log", "questionnaire_responses", "alembic_version_study"} <= names
    migrate(engine)  # second run is a no-op
    with engine.connect() as conn:
        assert conn.scalar(text("SELECT version_num FROM alembic_version_study")) == _head()


def _head() -> str:
    """The single head of the migration chain (a second head would be a broken chain)."""
    from alembic.config import Config
    from alembic.script import ScriptDirectory

    from study.db import MIGRATIONS

    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    heads = ScriptDirectory.from_config(cfg).get_heads()
    assert len(heads) == 1, heads
    return heads[0]


def test_enrolment_follows_the_logged_allocation_list(engine, study):
    store.register_study(engine, study)
    store.register_study(engine, study)  # idempotent
    got = {"low": [], "high": []}
    for i in range(12):
        stratum = "low" if i % 3 else "high"
        p, _ = store.enrol(engine, study, stratum=stratum)
        got[stratum].append(p)
    for stratum, ps in got.items():
        expected = allocation_sequence(study.condition_ids, (3, 6), study.randomisation.seed, stratum, len(ps))
        assert [p.condition for p in ps] == [a.arm for a in expected]
        assert [p.alloc_position for p in ps] == list(range(len(ps)))
        assert [p.assignment_seed for p in ps] == [a.seed for a in expected]
    wrong = {s.id for s in study.stimuli if s.model_correct is False}
    for p in got["low"] + got["high"]:
        (order,) = p.stimulus_order
        assert sorted(order) == sorted(s.id for s in study.stimuli)
        assert not set(order[:2]) & wrong
    with pytest.raises(ValueError, match="stratum must be one of"):
        store.enrol(engine, study, stratum="medium")


def test_changed_study_file_is_refused(engine, study):
    store.register_study(engine, study)
    changed = type(study)(**{**study.__dict__, "source_text": study.source_text + "\n# edited\n"})
    with pytest.raises(ValueError, match="different file"):
        store.register_study(engine, changed)


def test_concurrent_enrolment_uses_each_slot_once(engine, study):
    store.register_study(engine, study)
    with ThreadPoolExecutor(4) as pool:
        ps = [p for p, _ in pool.map(lambda _: store.enrol(engine, study, stratum="low"), range(12))]
    assert sorted(p.alloc_position for p in ps) == list(range(12))
    expected = allocation_sequence(study.condition_ids, (3, 6), study.randomisation.seed, "low", 12)
    assert {p.alloc_position: p.condition for p in ps} == {a.position: a.arm for a in expected}


def test_submission_twice_is_stored_once(engine, study):
    store.register_study(engine, study)
    p, token = store.enrol(engine, study, stratum="low")
    item = p.stimulus_order[0][0]
    ctx = stimulus_context(study, item, p.condition)
    assert store.record_trial(engine, study, p, trial_index=0, phase="initial", response="benign", context=ctx)
    assert not store.record_trial(engine, study, p, trial_index=0, phase="initial", response="malignant", context=ctx)
    assert store.record_trial(engine, study, p, trial_index=0, phase="final", response="malignant", context=ctx)
    with engine.connect() as conn:
        rows = conn.execute(select(TrialLog.phase, TrialLog.response, TrialLog.item_id, TrialLog.correct)
                            .order_by(TrialLog.id)).all()
    truth = study.stimulus(item).truth
    assert [tuple(r) for r in rows] == [("initial", "benign", item, truth == "benign"),
                                       ("final", "malignant", item, truth == "malignant")]
    q = {i.label: 4 for i in study.questionnaires[0].items}
    assert store.record_questionnaire(engine, study, p, "jian2000", q) == 12
    assert store.record_questionnaire(engine, study, p, "jian2000", {k: 1 for k in q}) == 0
    assert _count(engine, QuestionnaireResponse) == 12
    with pytest.raises(ValueError, match="integer in 1..7"):
        store.record_questionnaire(engine, study, p, "jian2000", {**q, "wary": 8})


def test_attention_check_and_bad_input(engine, study):
    store.register_study(engine, study)
    p, _ = store.enrol(engine, study, stratum="high")
    assert store.record_trial(engine, study, p, trial_index=2, phase="attention", response="blue")
    with engine.connect() as conn:
        row = conn.execute(select(TrialLog.item_id, TrialLog.attention_check_passed)).one()
    assert tuple(row) == ("ac1", True)
    with pytest.raises(ValueError, match="no attention check after trial 1"):
        store.record_trial(engine, study, p, trial_index=0, phase="attention", response="blue")
    with pytest.raises(ValueError, match="response must be one of"):
        store.record_trial(engine, study, p, trial_index=0, phase="initial", response="maybe")
    with pytest.raises(ValueError, match="trial_index must be in 0..5"):
        store.record_trial(engine, study, p, trial_index=6, phase="initial", response="benign")


def test_logs_are_append_only(engine, study):
    store.register_study(engine, study)
    run_participant(engine, study, seed=1, stratum="low")
    for stmt in ("UPDATE trial_log SET response = 'x'", "DELETE FROM trial_log",
                 "UPDATE questionnaire_responses SET response = 1", "DELETE FROM questionnaire_responses"):
        with pytest.raises(DBAPIError, match="append-only"):
            with engine.begin() as conn:
                conn.execute(text(stmt))


def test_resume_token_finds_only_its_participant(engine, study):
    store.register_study(engine, study)
    a, ta = store.enrol(engine, study, stratum="low")
    b, tb = store.enrol(engine, study, stratum="low")
    assert store.participant_by_token(engine, study.id, ta).id == a.id
    assert store.participant_by_token(engine, study.id, tb).id == b.id
    assert store.participant_by_token(engine, study.id, "") is None
    assert store.participant_by_token(engine, study.id, ta + "x") is None
    assert store.participant_by_token(engine, "other-study", ta) is None
    with engine.connect() as conn:
        stored = conn.scalars(select(Participant.resume_token_hash)).all()
    assert ta not in stored and store.hash_token(ta) in stored


def test_progress_only_moves_forward_and_completion_is_stable(engine, study):
    store.register_study(engine, study)
    p, _ = store.enrol(engine, study, stratum="low")
    assert store.advance(engine, p.id, 4) == 4
    assert store.advance(engine, p.id, 2) == 4
    code = store.complete(engine, p.id)
    assert store.complete(engine, p.id) == code and len(code) == 10


def test_within_subject_enrolment(engine, example_text):
    from study.schema import parse_study
    within = parse_study(example_text.replace("design: between", "design: within")
                         .replace("block_sizes: [3, 6]", "block_sizes: [6]"))
    store.register_study(engine, within)
    ps = [store.enrol(engine, within, stratum="low")[0] for _ in range(6)]
    # One full block of the 6 Williams sequences: every condition once in every period.
    for period in range(3):
        assert sorted(p.condition_order[period] for p in ps) == sorted(within.condition_ids * 2)
    for p in ps:
        assert [sorted(b) for b in p.stimulus_order] == [["r12", "r45"], ["r89", "r90"], ["r101", "r135"]]
        plan = store.trial_plan(p)
        assert [c for _, c, _ in plan] == [c for c in p.condition_order for _ in range(2)]


def test_open_database_uses_env(monkeypatch, db_url):
    monkeypatch.setenv("DATABASE_URL", db_url)
    eng = open_database()
    try:
        assert "alembic_version_study" in inspect(eng).get_table_names()
    finally:
        eng.dispose()
