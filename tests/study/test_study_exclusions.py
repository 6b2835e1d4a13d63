"""Issue 16: attention checks with a pre-declared exclusion rule, applied in the analysis and shown
on the researcher page. Oracle: a hand-written attention log and hand counts."""

from __future__ import annotations

import pandas as pd

from study import analysis, runtime
from study.schema import validate_text
from tests.study.conftest import db_url  # noqa: F401  (fixture)
from tests.study.live_study import DATA, STUDY, serve_study

# p1 passes both checks, p2 fails one, p3 fails both; each also made one decision (followed the advice)
LOG = pd.DataFrame(
    [dict(participant_id=p, condition=c, trial_index=t, phase="attention", attention_check_passed=ok, item_id="ac",
          response="x", model_prediction=None, truth=None, model_correct=None, correct=None, fidelity=None)
     for p, c, results in (("p1", "a", (True, True)), ("p2", "a", (True, False)), ("p3", "b", (False, False)))
     for t, ok in enumerate(results)]
    + [dict(participant_id=p, condition=c, trial_index=9, phase=ph, attention_check_passed=None, item_id="i1",
            response="A", model_prediction="A", truth="A", model_correct=True, correct=True, fidelity=None)
       for p, c in (("p1", "a"), ("p2", "a"), ("p3", "b")) for ph in ("initial", "final")])


def test_rule_excludes_by_hand_count():
    assert analysis.exclusions(LOG, None).empty
    ex0 = analysis.exclusions(LOG, 0)
    assert dict(zip(ex0["participant_id"], ex0["failed"])) == {"p2": 1, "p3": 2}
    assert list(ex0["reason"]) == ["failed 1 of 2 attention checks (rule: more than 0)",
                                   "failed 2 of 2 attention checks (rule: more than 0)"]
    assert list(analysis.exclusions(LOG, 1)["participant_id"]) == ["p3"]
    kept, _, ex = analysis.apply_exclusions(LOG, pd.DataFrame(), 1)
    table = analysis.reliance_by_condition(kept).set_index(["condition", "measure"])
    assert table.loc[("a", "agreement"), "n"] == 2 and ("b", "agreement") not in table.index


def test_rule_is_validated(example_text):
    (err,) = validate_text(example_text + "exclusions:\n  max_failed_attention_checks: -1\n")
    assert "expected 0 or more failed checks" in err.message
    no_checks = example_text[:example_text.index("attention_checks:")] + example_text[example_text.index("questionnaires:"):]
    (err,) = validate_text(no_checks + "exclusions:\n  max_failed_attention_checks: 0\n")
    assert "needs attention_checks" in err.message


def test_researcher_page_applies_and_shows_the_rule(db_url, tmp_path, monkeypatch):  # noqa: F811
    from app.views.study_research import dashboard
    from app.cli.study_simulate import run_one
    from study.simulate import RelianceModel

    text = (DATA / "small_study.yaml").read_text() + "exclusions:\n  max_failed_attention_checks: 0\n"
    study = serve_study(db_url, tmp_path, monkeypatch, text=text)
    for i, passes in enumerate((1.0, 1.0, 0.0, 1.0, 0.0)):  # two participants fail the one check
        run_one(study, i, 11, RelianceModel(attention_pass=passes))

    def find(component, cid):
        if getattr(component, "id", None) == cid:
            return component
        kids = getattr(component, "children", None)
        for k in kids if isinstance(kids, (list, tuple)) else ([kids] if kids is not None else []):
            got = find(k, cid)
            if got is not None:
                return got
        return None

    page = dashboard(STUDY)
    assert find(page, "study-exclusion-count").children.startswith("2 participant(s) excluded")
    import pandas as pd_

    from study import export
    trials = pd_.DataFrame(export.table_rows(runtime.engine(), "trial_log", STUDY))
    kept, _, ex = analysis.apply_exclusions(trials, pd_.DataFrame(), 0)
    assert len(ex) == 2 and kept["participant_id"].nunique() == 3
