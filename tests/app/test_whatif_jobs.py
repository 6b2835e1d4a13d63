"""The row jobs follow a what-if edit (issue 25), on the bundled sample: the Descriptive page's rank stability card and
the Persuasive page's story test explain the edited row the pages show, not the table row it was edited from; the
navbar's report, of a table row, says so in one line."""
from __future__ import annotations

import json

import numpy as np
import pytest

from app import services
from app.callbacks import counterfactuals as story_cb
from app.callbacks import stability as stability_cb
from tests.shapley_oracle import brute_force_boosted_shapley

ROW, FEATURE = 5, "worst concave points"


def _text(component) -> str:
    return json.dumps(component.to_plotly_json(), default=lambda o: o.to_plotly_json(), ensure_ascii=False)


@pytest.fixture(scope="module")
def edit(sample_workspace):
    """Row 5 with its strongest feature moved to the data's largest value: the store's edit and the row by hand."""
    hi = next(c.hi for c in services.whatif.controls() if c.name == FEATURE)
    by_hand = sample_workspace.X.iloc[[ROW]].copy()
    assert by_hand[FEATURE].iloc[0] != hi
    by_hand.loc[:, FEATURE] = hi
    return {"row": ROW, "edits": {FEATURE: hi}}, by_hand


def _kept(monkeypatch, module, name):
    """Run ``module.name`` as it is and keep what it returned (the job's view, computed once)."""
    real, kept = getattr(module, name), []
    monkeypatch.setattr(module, name, lambda *a, progress=None, **kw: kept.append(real(*a, **kw)) or kept[-1])
    return kept


def test_the_stability_job_reruns_the_edited_row(sample_workspace, edit, monkeypatch):
    whatif, by_hand = edit
    kept = _kept(monkeypatch, stability_cb.stability, "stability_view")
    card = _text(stability_cb.run_stability(lambda _: None, 1, ROW, whatif))
    assert "Row 5 as edited: are the top 5 features stable" in card
    view = kept[0]
    ws = sample_workspace
    bg = ws.X.iloc[ws.train_idx].sample(n=100, random_state=0)  # the first rerun's background (seed 0)
    oracle = brute_force_boosted_shapley(ws.adapter.model, by_hand.to_numpy()[0], bg.to_numpy())
    np.testing.assert_allclose(view.shap.values[0], oracle, atol=1e-9)
    table_row = brute_force_boosted_shapley(ws.adapter.model, ws.X.iloc[ROW].to_numpy(), bg.to_numpy())
    assert np.abs(view.shap.values[0] - table_row).max() > 1e-3  # the edit moved it


def test_the_story_test_searches_from_the_edited_row_with_its_story(sample_workspace, edit, monkeypatch):
    whatif, by_hand = edit
    kept = _kept(monkeypatch, story_cb.cfs, "story_view")
    card = _text(story_cb.run_story_test(lambda _: None, 1, ROW, 3, "exact", None, None, None, whatif))
    assert "Row 5 as edited: the story at k = 3" in card
    view = kept[0]
    shown = services.persuasive_view(whatif, 3).simplification  # the story the page shows for the edited row
    assert view.test.story == tuple(str(shown.parent.feature_names[j]) for item in shown.items for j in item.members)
    ws = sample_workspace
    x = by_hand.to_numpy(dtype=float)[0]
    before = ws.output(by_hand)[0] >= 0.5
    listed = view.test.any_feature.shown
    assert listed
    names = list(map(str, ws.X.columns))
    for c in listed:  # each flips the model from the edited row, and leaves its unchanged features as edited
        assert (ws.output(by_hand.assign(**dict(zip(ws.X.columns, c.values))))[0] >= 0.5) != before
        same = [j for j, n in enumerate(names) if n not in c.changed]
        np.testing.assert_array_equal(np.asarray(c.values)[same], x[same])


def test_the_report_says_it_is_of_the_table_row_when_an_edit_is_shown(sample_workspace, edit, monkeypatch):
    from app.callbacks import report

    class Content:
        rows = [type("Row", (), {"row": ROW})()]
    monkeypatch.setattr(report, "report_content", lambda rows: Content)
    monkeypatch.setattr(report, "render_html", lambda content: "<html></html>")
    whatif, _ = edit
    assert report.export_report(lambda _: None, 1, ROW, whatif)[1] == (
        "report downloaded, of table row 5: the what-if edit shown here is not in it")
    assert report.export_report(lambda _: None, 1, ROW, None)[1] == "report downloaded"
    assert report.export_report(lambda _: None, 1, 7, whatif)[1] == "report downloaded"  # the edit is of row 5
