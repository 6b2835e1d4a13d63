"""Issue 26: ``python -m app study prereg FILE`` drafts a preregistration in the OSF Prereg template's sections,
and a live study whose file changed is refused at server start with one line.

Oracles: the file's SHA-256 from its bytes (what ``sha256sum`` prints); the planned N from the power table the
document itself prints (the smallest size whose power reaches 0.8); the study file's own conditions, exclusion
rule and questionnaires.
"""
from __future__ import annotations

import hashlib
import re

import pytest

from study import runtime
from study.prereg import SECTIONS
from tests.study.conftest import db_url  # noqa: F401  (fixture)
from tests.study.live_study import STUDY, enrol_via_page, serve_study

EXAMPLE = runtime.EXAMPLES / "reliance-breast-cancer.yaml"


def test_prereg_of_the_bundled_example_has_the_template_sections_and_its_figures(tmp_path, capsys):
    from app.__main__ import main

    out = tmp_path / "prereg.md"
    assert main(["study", "prereg", str(EXAMPLE), "--effect", "0.2", "--participants", "10,30,60",
                 "--simulations", "300", "--out", str(out)]) == 0
    text = out.read_text(encoding="utf-8")
    headings = re.findall(r"^## (.+)$", text, flags=re.M)
    assert headings == list(SECTIONS) == ["Study information", "Design plan", "Sampling plan", "Variables",
                                          "Analysis plan", "Other"]
    assert hashlib.sha256(EXAMPLE.read_bytes()).hexdigest() in text
    rows = {int(n): float(p) for n, p in re.findall(r"^\| (\d+) \| ([0-9.]+) \|", text, flags=re.M)}
    assert sorted(rows) == [10, 30, 60] and rows[10] < rows[60]
    planned = min(n for n, p in rows.items() if p >= 0.8)
    assert f"**Sample size.** {planned} participants per condition ({2 * planned} in all, 2 conditions)" in text
    assert "H1: participants in condition `persuasive` follow the model's advice when it is wrong" in text
    assert "than participants in condition `descriptive`; a difference of +0.2" in text
    assert "Between-subjects, 2 conditions" in text and "12 cases (4 on which the model is wrong" in text
    assert "fail more than 0 of the 1 attention check(s) are excluded" in text
    assert "Questionnaire `jian2000` (jian2000, 12 items, 7-point scale" in text
    assert "`followed ~ condition + (1|participant) + (1|item)`" in text
    assert f"sha256 {hashlib.sha256(EXAMPLE.read_bytes()).hexdigest()[:12]}" in capsys.readouterr().err


def test_a_live_study_whose_file_changed_is_refused_at_start(db_url, tmp_path, monkeypatch):  # noqa: F811
    from app.serve.study_check import check_study_files
    from app.serve.server import create_app
    from workspace.errors import CandorError

    serve_study(db_url, tmp_path, monkeypatch)
    assert runtime.changed_live_studies() == []
    enrol_via_page("low")  # the study is live: its file's hash is in the database
    path = tmp_path / "studies" / f"{STUDY}.yaml"
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    path.write_text(path.read_text(encoding="utf-8").replace("Trust in explanations (pilot)", "Trust (v2)"),
                    encoding="utf-8")
    after = hashlib.sha256(path.read_bytes()).hexdigest()
    runtime.reset()
    with pytest.raises(CandorError) as err:
        check_study_files()
    message = str(err.value)
    assert "\n" not in message
    assert message == (f"study {STUDY!r} is live (it went live with file sha256 {before[:12]}) but {path} now has "
                       f"sha256 {after[:12]}: restore the file it went live with, or give the changed study a new id")
    with pytest.raises(CandorError, match="is live"):  # create_app runs the check before serving
        create_app(warm=False)
