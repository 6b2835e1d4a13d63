"""Issue 16: a persuasive condition can show "what was dropped": the features its top-k simplification
hides, with their share of the descriptive explanation's |attribution|, logged with the response.
Oracle: the shares recomputed here from the row's SHAP values (sort |φ|, keep the top k, divide the
rest by Σ|φ|)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from study import export, runtime
from study.schema import validate_text
from tests.study.conftest import db_url  # noqa: F401  (fixture)
from tests.study.live_study import DATA, STUDY, enrol_via_page, participant, serve_study, submit


def _study_text() -> str:
    return (DATA / "small_study.yaml").read_text().replace(
        "  - {id: persuasive, explanation: persuasive, operators: [top_k, rounding]}",
        '  - {id: persuasive, explanation: persuasive, operators: ["top_k:3"], show_dropped: true}')


def test_show_dropped_only_for_persuasive(example_text):
    bad = example_text.replace("  - {id: descriptive, explanation: descriptive}",
                               "  - {id: descriptive, explanation: descriptive, show_dropped: true}")
    (err,) = validate_text(bad)
    assert err.path == "conditions[1].show_dropped" and "only to a 'persuasive' condition" in err.message


def test_dropped_features_are_shown_and_logged(db_url, tmp_path, monkeypatch):  # noqa: F811
    from app import services
    from app.services.study_stimuli import stimulus_view
    from app.views.study import render

    study = serve_study(db_url, tmp_path, monkeypatch, text=_study_text())
    view = stimulus_view(study, "r12", "persuasive")
    phi = np.asarray(services.shap_row(12).values, dtype=float)
    names = list(services.workspace().X.columns)
    order = np.argsort(-np.abs(phi), kind="stable")
    hidden = {names[j]: abs(phi[j]) / np.abs(phi).sum() for j in order[3:]}
    assert {f: pytest.approx(s, abs=1e-9) for f, s in view.dropped} == hidden
    assert sum(s for _, s in view.dropped) == pytest.approx(1 - view.context.fidelity, abs=1e-9)  # 1 - mass kept
    assert "show_dropped" in view.context.operators and view.context.explanation_id.endswith(":dropped_shown")
    assert stimulus_view(study, "r12", "descriptive").dropped == ()
    # every fidelity figure is kept with the view (and logged): the top-3 share recomputed here, and
    # the identity view (descriptive, k = d) scores mass 1 and rank correlations 1 (methods.md T10)
    kept = sum(abs(phi[j]) for j in order[:3]) / np.abs(phi).sum()
    assert view.context.fidelity_measures["mass_retained"] == pytest.approx(kept, abs=1e-9)
    full = stimulus_view(study, "r12", "descriptive").context.fidelity_measures
    assert (full["mass_retained"], full["spearman"], full["kendall_tau_b"]) == pytest.approx((1.0, 1.0, 1.0), abs=1e-9)

    # a participant in the persuasive arm sees the note with the advice, and the log says so
    for _ in range(6):
        token = enrol_via_page("low")
        if participant(token).condition == "persuasive":
            break
    assert participant(token).condition == "persuasive"
    assert submit(token, 0, "instructions") == (token, "")
    assert submit(token, 1, "forward", {"response": "benign"}) == (token, "")
    assert submit(token, 1, "initial", {"response": "benign"}) == (token, "")
    page = str(render(STUDY, token))
    assert "study-dropped-note" in page and "This explanation leaves out 27 features" in page
    assert submit(token, 1, "final", {"response": "benign", "confidence": 50}) == (token, "")
    log = pd.DataFrame(export.table_rows(runtime.engine(), "trial_log", STUDY))
    final = log[log["phase"] == "final"].iloc[0]
    logged = final["fidelity_measures"]
    assert logged == stimulus_view(study, final["item_id"], "persuasive").context.fidelity_measures
    assert {"mass_retained", "spearman", "sufficiency", "comprehensiveness", "deletion_auc"} <= set(logged)
    assert "show_dropped" in final["operators"] and final["fidelity"] == pytest.approx(1 - sum(
        s for _, s in stimulus_view(study, final["item_id"], "persuasive").dropped), abs=1e-9)
