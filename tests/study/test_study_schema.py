"""Study-file validation: every error names its YAML line; CLI exit codes."""

from __future__ import annotations

import pytest

from study.cli import main
from study.schema import load_study, parse_study, validate_text, StudyError


def _line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


def test_example_is_valid(study):
    assert study.id == "trust-pilot"
    assert study.condition_ids == ("none", "descriptive", "persuasive")
    assert study.randomisation.block_sizes == (3, 6)
    assert [q.id for q in study.questionnaires] == ["jian2000", "hoffman2018_satisfaction", "effort"]
    jian = study.questionnaires[0]
    assert len(jian.items) == 12 and jian.scale_points == 7
    assert jian.reverse == {"deceptive", "underhanded", "suspicious", "wary", "harmful"}
    assert study.questionnaires[1].scale_points == 5 and len(study.questionnaires[1].items) == 5
    assert study.instrument_versions["effort"] == "candor-custom-1"


@pytest.mark.parametrize("old,new,needle,fragment", [
    ("explanation: persuasive, operators", "explanation: convincing, operators", "explanation: convincing",
     "conditions[2].explanation: expected one of ['none', 'prediction', 'descriptive', 'persuasive'], got 'convincing'"),
    ("block_sizes: [3, 6]", "block_sizes: [3, 4]", "block_sizes: [3, 4]",
     "randomisation.block_sizes[1]: block size must be a positive multiple of 3"),
    ("      familiar: \"PLACEHOLDER text 12\"\n", "", "deceptive: ",
     "jian2000 needs text for all 12 items; missing ['familiar']"),
    ("    correct: blue", "    correct: purple", "correct: purple",
     "attention_checks[0].correct: expected one of the options"),
    ("tasks: [forward_prediction, decision_with_advice]", "tasks: [forward_prediction, guess]", "tasks: [",
     "tasks[1]: expected one of ['forward_prediction', 'decision_with_advice'], got 'guess'"),
    ("design: between", "desing: between", "desing:", "unknown key 'desing'"),
    ("      understand: ", "      understanding: ", "understanding:", "unknown hoffman2018_satisfaction item label"),
    ("{id: r90, row: 90, truth: benign", "{id: r12, row: 90, truth: benign", "id: r12, row: 90",
     "duplicate stimulus id 'r12'"),
    ("    after_trial: 3", "    after_trial: 9", "after_trial: 9", "expected a trial number in 1..6, got 9"),
])
def test_error_names_its_line(example_text, old, new, needle, fragment):
    assert old in example_text
    text = example_text.replace(old, new, 1)
    errors = validate_text(text)
    assert len(errors) == 1, errors
    assert errors[0].line == _line_of(text, needle)
    assert fragment in errors[0].format()


def test_several_errors_are_all_reported_in_line_order(example_text):
    text = (example_text.replace("seed: 20261130", "seed: twelve")
            .replace("scale_points: 7", "scale_points: 1")
            .replace("kind: tabular", "kind: image"))
    errors = validate_text(text)
    assert [e.line for e in errors] == sorted(
        [_line_of(text, "kind: image"), _line_of(text, "seed: twelve"), _line_of(text, "scale_points: 1")])
    assert errors[0].message == "expected 'tabular' or 'text', got 'image'"


def test_duplicate_key_and_syntax_error_lines(example_text):
    dup = example_text.replace("design: between", "design: between\ntitle: again")
    errors = validate_text(dup)
    assert [(e.line, e.message) for e in errors] == [(_line_of(dup, "title: again"), "duplicate key 'title'")]
    broken = example_text.replace("  seed: 20261130", "  seed: [20261130")
    (err,) = validate_text(broken)
    assert err.message.startswith("YAML syntax error")
    assert err.line >= _line_of(broken, "seed: [")


def test_missing_required_keys_and_empty_file():
    errors = validate_text("id: Bad Id\n")
    messages = [e.message for e in errors]
    assert all(e.line == 1 for e in errors)
    for key in ("model", "stimuli", "conditions", "tasks"):
        assert f"missing required key {key!r}" in messages
    assert any("expected an id of lower-case letters" in m for m in messages)
    assert validate_text("")[0].message.startswith("empty study file")


def test_parse_raises_with_all_errors(example_text):
    with pytest.raises(StudyError) as exc:
        parse_study(example_text.replace("design: between", "design: crossover"), "s.yaml")
    assert "s.yaml:" in str(exc.value) and "design: expected one of ['between', 'within']" in str(exc.value)


def test_within_design_needs_even_item_sets(example_text):
    text = example_text.replace("design: between", "design: within").replace("block_sizes: [3, 6]", "block_sizes: [6, 12]")
    assert validate_text(text) == []
    odd = text.replace("  - {id: r135, row: 135, truth: malignant, model_correct: false}\n", "")
    (err,) = validate_text(odd)
    assert "5 stimuli to split evenly into 3 item sets" in err.message


def test_cli_exit_codes(tmp_path, example_text, capsys):
    good = tmp_path / "good.yaml"
    good.write_text(example_text)
    assert main(["validate", str(good)]) == 0
    bad = tmp_path / "bad.yaml"
    bad.write_text(example_text.replace("design: between", "design: crossover").replace("seed: 20261130", "seed: x"))
    capsys.readouterr()
    assert main(["validate", str(bad)]) == 2
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 2
    assert lines[0].startswith(f"{bad}:{_line_of(bad.read_text(), 'design: crossover')}: design:")
    assert main(["validate", str(tmp_path / "missing.yaml")]) == 2
    assert main([]) == 2


def test_rows_shorthand(tmp_path):
    text = """id: short
model: {id: m, outputs: ["0", "1"]}
stimuli: {rows: [3, 5, 8, 13]}
conditions: [{id: a, explanation: descriptive}, {id: b, explanation: persuasive}]
tasks: [forward_prediction]
"""
    p = tmp_path / "s.yaml"
    p.write_text(text)
    s = load_study(p)
    assert [x.id for x in s.stimuli] == ["row-3", "row-5", "row-8", "row-13"]
    assert s.randomisation.block_sizes == (2, 4) and s.design == "between"
