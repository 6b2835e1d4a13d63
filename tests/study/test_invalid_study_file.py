"""A study file with errors in the study folder: the researcher sees every error, a participant a neutral note."""
from __future__ import annotations

import json

from study import runtime


def test_an_invalid_study_file_is_explained_to_the_researcher_not_to_participants(tmp_path, monkeypatch):
    """A new user found /study-admin blank (an unhandled StudyError) for a broken file in the list, and
    participants told how many errors the researcher's file had."""
    from app.views.study_research import dashboard
    from app.views.study import render

    studies = tmp_path / "studies"
    studies.mkdir()
    (studies / "broken.yaml").write_text("id: broken\ntitle: 3\nconditions: nope\n")
    monkeypatch.setenv("CANDOR_STUDY_DIR", str(studies))
    monkeypatch.setenv("DATABASE_URL", f"sqlite:///{tmp_path / 'db.sqlite3'}")
    runtime.reset()
    try:
        # the bundled example is listed on every install (a fresh one showed no study at all)
        assert runtime.list_studies() == ["broken", "reliance-breast-cancer"]
        assert runtime.is_example("reliance-breast-cancer") and not runtime.is_example("broken")
        assert runtime.get_study("reliance-breast-cancer").title == "Second opinions on tumour diagnoses"
        example = json.dumps(dashboard("reliance-breast-cancer").to_plotly_json(), default=str)
        assert "Bundled example, read-only" in example and "No participants yet" in example
        shown = json.dumps(dashboard("broken").to_plotly_json(), default=str)
        assert "broken.yaml has" in shown and "error(s)" in shown and "study validate" in shown
        seen = json.dumps(render("broken", None).to_plotly_json(), default=str)
        assert "contact the researcher" in seen and "error" not in seen.lower()
    finally:
        runtime.reset()
