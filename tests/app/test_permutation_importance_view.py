"""Permutation importance as a method of the table (issue 24's proof, issue 25's view): the service on the bundled
sample equals scikit-learn's ``permutation_importance`` on the same rows and seed; the Descriptive page's global
panel and the report draw it beside mean |SHAP| with their rank agreement from ``explainers.metrics.compare_ranks``.
"""
from __future__ import annotations

import numpy as np
import pytest


@pytest.fixture
def sample(sample_workspace):
    from app import services

    with services.overridden(services.ServiceState(sample_workspace)):
        yield sample_workspace


def test_the_service_equals_scikit_learn_on_the_held_out_rows(sample):
    from sklearn.inspection import permutation_importance

    from app.services import methods

    entry = methods.method("permutation_importance")
    assert entry.why_not() is None and entry.facts.scope == "global"
    r = entry.result()
    ws = sample
    X, y = ws.X.iloc[ws.test_idx], ws.y[ws.test_idx]
    oracle = permutation_importance(ws.adapter.model, X, y, scoring="roc_auc", n_repeats=10, random_state=0)
    np.testing.assert_allclose(r.repeats, oracle.importances, atol=1e-12)
    np.testing.assert_allclose(r.importances, oracle.importances_mean, atol=1e-12)
    np.testing.assert_allclose(r.standard_error, oracle.importances.std(axis=1, ddof=1) / np.sqrt(10), atol=1e-12)
    assert (r.scoring, r.n_repeats, r.seed, r.n_rows) == ("roc_auc", 10, 0, len(ws.test_idx))


def test_the_global_panel_shows_it_beside_mean_shap_with_their_rank_agreement(sample):
    from app import services
    from app.callbacks import descriptive
    from app.views import methods as method_views
    from explainers.metrics import compare_ranks

    (view,) = services.methods.global_method_views()
    shap = services.global_importance().importance
    oracle = compare_ranks(shap, np.maximum(view.result.importances, 0))
    assert (view.agreement.spearman, view.agreement.top_k_overlap) == (oracle.spearman, oracle.top_k_overlap)
    np.testing.assert_array_equal(view.shap_importance, shap)
    panel, stop = descriptive.render_global_methods("/descriptive", 0)
    assert stop is True
    fig = panel[0].children[0].figure
    bars = {t.name: t for t in fig.data}
    r = view.result
    top = int(np.argmax(r.importances))
    drawn = dict(zip(bars["permutation importance"].y, bars["permutation importance"].x))
    assert drawn[r.feature_names[top]] == pytest.approx(r.importances[top])  # largest importance, on top
    assert list(bars["permutation importance"].error_x.array) == list(r.standard_error[np.argsort(-r.importances,
                                                                       kind="stable")[:15][::-1]])
    text = method_views.agreement_text(view)
    assert f"Spearman ρ {oracle.spearman:.3f}" in text and f"top-{oracle.k} overlap" in text


def test_the_report_has_its_section_and_provenance(sample, tmp_path):
    from app.report.content import report_content
    from app.report.render import render_html
    from workspace import settings

    with settings.overridden(cache_dir=tmp_path):
        content = report_content([int(sample.test_idx[0])])
        html = render_html(content)
    assert "Permutation importance beside mean |SHAP|" in html and "Rank agreement with mean |SHAP|" in html
    assert ("permutation importance", content.methods[0].result.source) in content.provenance.parameters


def test_check_prints_its_line(sample):
    from app.services import importance

    (line,) = importance.lines(0)
    r = importance.permutation_importance()
    assert line.startswith(f"permimp {len(sample.test_idx):,} held-out rows, roc_auc ") and "10 shuffles" in line
    assert r.feature_names[int(np.argmax(r.importances))] in line


def test_a_regressor_is_scored_by_r2_and_a_one_class_split_is_refused_in_one_line(sample, monkeypatch):
    from app.services import importance

    monkeypatch.setattr(type(sample), "output_kind", property(lambda self: "margin"))
    ys = sample.y.copy()
    monkeypatch.setattr(sample, "y", np.where(np.isin(np.arange(len(ys)), sample.test_idx), 1, ys))
    assert importance.scoring() is None and "both classes" in importance.why_not()
    monkeypatch.setattr(type(sample), "task", property(lambda self: "regression"), raising=False)
    assert importance.scoring() == "r2"


def test_past_its_cell_budget_it_is_not_computed_and_says_so_naming_the_width(sample, monkeypatch):
    """Issue 27: on a 10,000-column pair (50 held-out rows) permutation importance sends the model 50 billion cells,
    minutes of ``check``; past its budget it is not applicable, in one line naming the method and the width."""
    from app import services
    from app.services import importance

    n, d = len(sample.test_idx), sample.X.shape[1]
    cells = d * 10 * n * d  # every column's 10 shuffled copies of the held-out rows, each d wide
    assert importance._explainer().model_cells(n, d) == cells
    monkeypatch.setattr(importance, "MAX_MODEL_CELLS", cells - 1, raising=False)
    why = importance.why_not()
    assert why == (f"permutation importance is not computed at {d} columns: 10 shuffles of {n} held-out rows per "
                   f"column, each {d} wide, would send the model {cells:,} cells (its budget: {cells - 1:,})")
    (view,) = services.methods.global_method_views()
    assert view.result is None and view.why_not == why and "\n" not in why
