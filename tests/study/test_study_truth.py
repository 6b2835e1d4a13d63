"""Issue 16: a stimulus's truth comes from the data. A study file that declares a truth (or a
model_correct) the data contradict is refused by ``study validate`` and by the server, naming the
stimulus, the declared and the actual value; a design that cannot measure over-reliance warns.

The oracle is scikit-learn itself: ``load_breast_cancer`` (its target 0 = malignant) and the
bundled model's own ``predict``, read here without Candor's code."""

from __future__ import annotations

import pytest
import skops.io as sio
from sklearn.datasets import load_breast_cancer

from study import runtime, store
from study.cli import main
from study.models import Participant
from tests.study.conftest import DATA, db_url  # noqa: F401  (fixture)
from tests.study.live_study import serve_study, submit, timing
from workspace.workspace import SAMPLE_MODEL

# the example file as shipped before issue 16: 4 wrong truths, and model_correct: false on rows the model gets right
OLD_STIMULI = """  - {id: r12, row: 12, truth: benign, model_correct: true}
  - {id: r45, row: 45, truth: malignant, model_correct: true}
  - {id: r77, row: 77, truth: benign, model_correct: false}
  - {id: r90, row: 90, truth: malignant, model_correct: true}
  - {id: r101, row: 101, truth: benign, model_correct: true}
  - {id: r150, row: 150, truth: malignant, model_correct: false}
"""


@pytest.fixture(scope="module")
def oracle():
    """(truth label, model label) per row, from scikit-learn directly."""
    data = load_breast_cancer(as_frame=True)
    model = sio.load(SAMPLE_MODEL, trusted=sio.get_untrusted_types(file=SAMPLE_MODEL))
    pred = model.predict(data.data)  # the bundled model predicts 1 = malignant
    names = {0: "benign", 1: "malignant"}
    return [(names[1 - int(t)], names[int(p)]) for t, p in zip(data.target.to_numpy(), pred)]


def _with_stimuli(text: str, stimuli: str) -> str:
    start = text.index("  - {id: r12, row: 12,")
    end = text.index("conditions:")
    return text[:start] + stimuli + text[end:]


def test_old_example_is_refused_naming_each_stimulus(tmp_path, example_text, oracle, capsys):
    path = tmp_path / "old.yaml"
    path.write_text(_with_stimuli(example_text, OLD_STIMULI))
    assert main(["validate", str(path)]) == 2
    out = capsys.readouterr().out
    rows = {"r12": 12, "r45": 45, "r77": 77, "r90": 90, "r101": 101, "r150": 150}
    declared = {"r12": "benign", "r45": "malignant", "r77": "benign", "r90": "malignant", "r101": "benign",
                "r150": "malignant"}
    wrong = [s for s in rows if declared[s] != oracle[rows[s]][0]]
    assert len(wrong) == 4  # the count, from scikit-learn's target
    for s in wrong:
        line = next(x for x in out.splitlines() if f"stimulus {s!r}" in x and ".truth:" in x)
        assert f"declares truth {declared[s]!r}" in line and f"target is {oracle[rows[s]][0]!r}" in line
    assert all(t == p for t, p in (oracle[r] for r in rows.values()))  # the model is right on all six
    assert "over-reliance (following wrong advice) cannot be measured" in out
    assert "valid" not in out.splitlines()[-1]


def test_truth_from_data_when_not_declared_and_warning_when_model_never_wrong(tmp_path, example_text, oracle, capsys):
    right = [r for r in range(len(oracle)) if oracle[r][0] == oracle[r][1]]
    benign = [r for r in right if oracle[r][0] == "benign"][:3]
    malignant = [r for r in right if oracle[r][0] == "malignant"][:3]
    stim = "".join(f"  - {{id: r{r}, row: {r}}}\n" for r in benign + malignant)
    path = tmp_path / "allright.yaml"
    path.write_text(_with_stimuli(example_text, stim).replace("no_wrong_first: 2", "no_wrong_first: 0"))
    assert main(["validate", str(path)]) == 0  # nothing declared, nothing to contradict
    out = capsys.readouterr().out
    assert "warning: the model is right on all 6 stimuli" in out and "model wrong on 0 of 6" in out


def test_unbalanced_classes_warn(tmp_path, example_text, oracle, capsys):
    right_m = [r for r in range(len(oracle)) if oracle[r] == ("malignant", "malignant")][:5]
    wrong = [r for r in range(len(oracle)) if oracle[r][0] != oracle[r][1]][:1]
    stim = "".join(f"  - {{id: r{r}, row: {r}}}\n" for r in right_m + wrong)
    path = tmp_path / "unbalanced.yaml"
    path.write_text(_with_stimuli(example_text, stim).replace("no_wrong_first: 2", "no_wrong_first: 0"))
    assert main(["validate", str(path)]) == 0
    out = capsys.readouterr().out
    n_benign = sum(oracle[r][0] == "benign" for r in right_m + wrong)
    assert f"unbalanced design: the stimuli's true classes are {{'benign': {n_benign}, 'malignant': {6 - n_benign}}}" in out


def test_shipped_examples_validate_without_warning(capsys):
    for name in ("example_study.yaml", "small_study.yaml"):
        assert main(["validate", str(DATA / name)]) == 0
        out = capsys.readouterr().out
        assert "warning" not in out and "valid (model wrong on" in out, out


def test_server_refuses_a_study_whose_truth_differs(db_url, tmp_path, monkeypatch, example_text, oracle):  # noqa: F811
    from app.serve.study_check import check_study_files
    from workspace.errors import CandorError

    bad = example_text.replace("{id: r45, row: 45, truth: malignant,", "{id: r45, row: 45, truth: benign,")
    assert oracle[45][0] == "malignant"
    serve_study(db_url, tmp_path, monkeypatch, text=bad)
    with pytest.raises(CandorError, match=r"stimulus 'r45' \(row 45\) declares truth 'benign' but the data's "
                                          r"target is 'malignant'"):
        check_study_files()  # what create_app runs before serving
    token, err = submit(None, "consent", None, {"consent": ["yes"], "stratum": "low"})
    assert token is None and "stimulus 'r45'" in err and "'malignant'" in err
    from sqlalchemy import func, select

    with runtime.engine().connect() as conn:
        assert conn.scalar(select(func.count()).select_from(Participant)) == 0


def test_enrolment_orders_by_the_data_not_the_file(db_url, tmp_path, monkeypatch, example_text, oracle):  # noqa: F811
    # no truth / model_correct in the file: the rows the model gets wrong still never come first
    import re

    text = re.sub(r", truth: \w+, model_correct: \w+\}", "}", example_text)
    assert "model_correct:" not in text
    serve_study(db_url, tmp_path, monkeypatch, text=text)
    wrong = {f"r{r}" for r in (12, 45, 89, 90, 101, 135) if oracle[r][0] != oracle[r][1]}
    assert wrong == {"r89", "r135"}
    for _ in range(6):
        token, err = submit(None, "consent", None, {"consent": ["yes"], "stratum": "low"})
        assert err == ""
        p = store.participant_by_token(runtime.engine(), "trust-pilot", token)
        assert not set(p.stimulus_order[0][:2]) & wrong
    assert timing(0)["step"] == 0
