"""Issue 11, kind 8: what a participant's browser sends is checked before anything is stored.

Each test drives the server's boundary function (``submit_answer``, which the submit callback
calls with the request's values) the way a crafted request would, and checks the database.
"""

from __future__ import annotations

import json
import math

import pytest
from sqlalchemy import func, select

from study import export, runtime, store
from study.models import QuestionnaireResponse, TrialLog
from study.schema import parse_study
from tests.study.conftest import db_url, engine, example_text  # noqa: F401  (fixtures)
from tests.study.live_study import enrol_via_page, participant, serve_study, submit


@pytest.fixture
def served(db_url, tmp_path, monkeypatch):  # noqa: F811
    return serve_study(db_url, tmp_path, monkeypatch)


def _rows(table, **where) -> int:
    stmt = select(func.count()).select_from(table)
    for k, v in where.items():
        stmt = stmt.where(getattr(table, k) == v)
    with runtime.engine().connect() as conn:
        return conn.scalar(stmt)


def _to_final(token: str) -> None:
    """Instructions, then the forward and initial phases of the first trial."""
    for step, phase, answers in ((0, "instructions", {}), (1, "forward", {"response": "benign"}),
                                 (1, "initial", {"response": "benign"})):
        assert submit(token, step, phase, answers) == (token, "")


@pytest.mark.parametrize("bad", [-50, 1000, float("inf"), float("-inf"), float("nan"), "80", True, None, [50]])
def test_confidence_out_of_range_or_not_finite_is_refused(served, bad):
    """Attack: a final answer with confidence -50, 1000, inf or NaN (a crafted request; JSON
    'Infinity' parses to inf) was stored and exported. Now it is refused with a message naming
    the range, and no row is stored; a valid confidence is then accepted."""
    token = enrol_via_page()
    _to_final(token)
    _token, err = submit(token, 1, "final", {"response": "malignant", "confidence": bad})
    assert "confiden" in err.lower(), err
    assert _rows(TrialLog, phase="final") == 0
    assert participant(token).progress == 1
    assert submit(token, 1, "final", {"response": "malignant", "confidence": 80}) == (token, "")
    with runtime.engine().connect() as conn:
        assert conn.scalar(select(TrialLog.confidence).where(TrialLog.phase == "final")) == 80.0
    assert participant(token).progress == 2


def _to_attention(token: str) -> int:
    """Answer up to the attention check (after trial 2 in the small study); return its step index."""
    assert submit(token, 0, "instructions", {}) == (token, "")
    for step in (1, 2):
        for phase in ("forward", "initial"):
            assert submit(token, step, phase, {"response": "benign"}) == (token, "")
        assert submit(token, step, "final", {"response": "benign", "confidence": 50}) == (token, "")
    return 3


@pytest.mark.parametrize("bad", ["x" * (5 * 2**20), "x" * 2001, "purple", "", 7, ["blue"], {"a": 1}, "blu\x00e"])
def test_attention_answer_must_be_an_offered_option(served, bad):
    """Attack: an attention-check answer of 5 MiB was stored (and then broke the study's own CSV
    reader). Any answer that is not one of the check's options is refused; nothing is stored."""
    token = enrol_via_page()
    step = _to_attention(token)
    _token, err = submit(token, step, "attention", {"response": bad})
    assert err, "refused with a message"
    assert len(err) < 300
    assert _rows(TrialLog, phase="attention") == 0
    assert participant(token).progress == step
    assert submit(token, step, "attention", {"response": "blue"}) == (token, "")
    assert _rows(TrialLog, phase="attention") == 1


@pytest.mark.parametrize("answers", [
    {"response": "benign", "evil": "x"},                  # a field the step did not ask for
    {"response": "benign", "confidence": 50},             # confidence on a phase without one
    {"response": "benign", "consent": ["yes"]},
])
def test_unknown_fields_are_refused(served, answers):
    """Attack: fields the step did not ask for, sent with a trial answer. Each is refused; nothing is stored."""
    token = enrol_via_page()
    assert submit(token, 0, "instructions", {}) == (token, "")
    _token, err = submit(token, 1, "forward", answers)
    assert err
    assert _rows(TrialLog) == 0


@pytest.mark.parametrize("bad", [8, 0, -1, 3.5, "3", True, None, 10**30])
def test_likert_answer_must_be_on_its_scale_and_fields_known(served, bad):
    """Attack: a questionnaire answer off the instrument's 1..7 scale or of the wrong type, or a
    complete form with an extra field. Each is refused; nothing is stored."""
    token = enrol_via_page()
    p = participant(token)
    from study import flow

    steps = flow.steps(served, p)
    qi = next(i for i, s in enumerate(steps) if s.kind == "questionnaire")
    q = served.questionnaires[0]
    answers = {f"q:{it.label}": 4 for it in q.items}
    answers[f"q:{q.items[0].label}"] = bad
    store.advance(runtime.engine(), p.id, qi)  # jump to the questionnaire step
    _token, err = submit(token, qi, "questionnaire", answers)
    assert err
    _token, err = submit(token, qi, "questionnaire", {**answers, f"q:{q.items[0].label}": 7, "evil": "x" * 10**5})
    assert err
    assert _rows(QuestionnaireResponse) == 0
    assert submit(token, qi, "questionnaire", {**answers, f"q:{q.items[0].label}": 7}) == (token, "")
    assert _rows(QuestionnaireResponse) == len(q.items)


@pytest.mark.parametrize("timing_field,value", [("rt_ms", float("inf")), ("rt_ms", -5), ("rt_ms", float("nan")),
                                                ("rt_ms", 1e12), ("client_ts", float("inf")), ("client_ts", -1e20)])
def test_timings_must_be_finite_and_sane(served, timing_field, value):
    """Attack: response times or client timestamps of inf, NaN, negative or absurd size."""
    from app.services.study_participant import submit_answer
    from tests.study.live_study import STUDY, timing

    token = enrol_via_page()
    t = {**timing(0, "instructions"), timing_field: value}
    _token, err = submit_answer(STUDY, token, t, {})
    assert err
    assert participant(token).progress == 0


def test_study_validate_checks_declared_ranges(example_text):  # noqa: F811
    """A study file declaring an impossible confidence range, a negative row, an over-long
    option or a cap of 0 is refused by ``study validate`` with the line of each error."""
    from study.schema import validate_text

    bad = (example_text.replace("  - {id: r12, row: 12,", "  - {id: r12, row: -12,")
           .replace("options: [red, blue, green]", "options: [red, blue, " + "g" * 65 + "]")
           + "confidence_scale: [100, .inf]\nmax_participants: 0\n")
    msgs = [e.format("s.yaml") for e in validate_text(bad)]
    assert any("stimuli[0].row: expected a row number >= 0" in m for m in msgs), msgs
    assert any("options[2]" in m and "at most 64 characters" in m for m in msgs), msgs
    assert any("confidence_scale[1]: expected a finite number" in m for m in msgs), msgs
    assert any("max_participants: expected 1..1000000" in m for m in msgs), msgs
    ok = parse_study(example_text + "confidence_scale: [1, 7]\nmax_participants: 40\n")
    assert ok.confidence_scale == (1.0, 7.0) and ok.max_participants == 40


NASTY = 'a, "quoted", text\nwith\r\nnewlines, \'apostrophes\', =formulas, tabs\t and ünïcode'


def test_export_reads_back_any_stored_text(engine, example_text, tmp_path):  # noqa: F811
    """The CSV export and its reader survive any stored text: commas, quotes, newlines, and a cell
    longer than the csv module's default 128 KiB limit (the study file itself can be that long)."""
    text = ("# " + "long comment, \"quoted\" " * 20000 + "\n" + example_text.replace(
        '"PLACEHOLDER text 1"', json.dumps(NASTY)))
    s = parse_study(text)
    assert s.questionnaires[0].items[0].text == NASTY
    store.register_study(engine, s)
    p, _ = store.enrol(engine, s, stratum="low")
    store.record_questionnaire(engine, s, p, "jian2000", {it.label: 3 for it in s.questionnaires[0].items})
    paths = {pth.stem: pth for pth in export.export_csv(engine, tmp_path)}
    studies = export.read_csv(paths["studies"], "studies")
    assert studies[0]["spec_yaml"] == text and len(text) > 2**17
    answers = export.read_csv(paths["questionnaire_responses"], "questionnaire_responses")
    assert answers[0]["item_text"] == NASTY
    assert answers == export.table_rows(engine, "questionnaire_responses")
    assert not any(isinstance(v, float) and not math.isfinite(v) for r in answers for v in r.values())
