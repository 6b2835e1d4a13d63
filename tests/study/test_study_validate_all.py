"""``study validate`` names every error in one run, each at its real line: schema errors and the
data's (rows outside the table, declared truths the data contradict) together. A first user saw one
error per run, and a row out of range reported at line 0."""

from __future__ import annotations

from study import cli

BAD = """id: bad
model: {id: m, outputs: [benign, malignant]}
stimuli:
  - {id: a, row: 12, truth: benign}
  - {id: b, row: 99999}
  - {id: c, row: 90}
  - {id: d, row: 100000}
conditions: [{id: x, explanation: descriptive}, {id: y, explanation: convincing}]
tasks: [decision_with_advice]
"""


def test_validate_reports_schema_and_data_errors_in_one_run_with_their_lines(tmp_path, capsys):
    path = tmp_path / "bad.yaml"
    path.write_text(BAD)
    assert cli.main(["validate", str(path)]) == 2
    lines = capsys.readouterr().out.strip().splitlines()
    where = [line.split(": ", 2)[:2] for line in lines]
    assert where == [[f"{path}:4", "stimuli[0].truth"], [f"{path}:5", "stimuli[1].row"],
                     [f"{path}:7", "stimuli[3].row"], [f"{path}:8", "conditions[1].explanation"]]
    assert "row 99999 is outside the loaded table of 569 rows" in lines[1]
    assert "declares truth 'benign' but the data's target is 'malignant'" in lines[0]


def test_outputs_that_are_not_the_classes_are_named_at_their_line(tmp_path, capsys):
    path = tmp_path / "bad.yaml"
    path.write_text(BAD.replace("[benign, malignant]", "[yes, no]").replace(", truth: benign", ""))
    assert cli.main(["validate", str(path)]) == 2
    lines = capsys.readouterr().out.strip().splitlines()
    assert [line.split(": ", 2)[:2] for line in lines] == [[f"{path}:2", "model.outputs"],
                                                          [f"{path}:5", "stimuli[1].row"],
                                                          [f"{path}:7", "stimuli[3].row"],
                                                          [f"{path}:8", "conditions[1].explanation"]]
