"""Callbacks called as plain functions on the bundled sample (real model, real data)."""
import json

import plotly.graph_objects as go
import pytest
from dash.exceptions import PreventUpdate

from app.callbacks import attention, descriptive, overview, persuasive, shell, surrogate


def _text(component) -> str:
    return json.dumps(component.to_plotly_json(), default=lambda o: o.to_plotly_json())


def test_summary_reports_heldout_metrics(sample_workspace):
    card = overview.render_summary("/")
    text = _text(card)
    assert "0.958" in text and "0.991" in text and "426 train + 143 held-out" in text


def test_table_pages_are_served_not_the_whole_table(sample_workspace):
    data, columns, page_count = overview.render_table_page(2, 12)
    assert len(data) == 12 and page_count == 48
    assert [r["id"] for r in data] == list(range(24, 36))
    assert columns[0]["id"] == "id" and {"split", "diagnosis", "P(malignant)"} <= {c["id"] for c in columns}


def test_clicking_a_cell_selects_its_row():
    assert overview.select_row_from_table({"row": 1, "column": 0, "row_id": 57}) == 57
    with pytest.raises(PreventUpdate):
        overview.select_row_from_table(None)


def test_descriptive_row_shows_shap_lime_and_their_agreement(sample_workspace):
    waterfall, lime_bar, agreement, notes = descriptive.render_local(5)
    assert isinstance(waterfall, go.Figure) and waterfall.data[0].type == "waterfall"
    assert "additivity gap" in waterfall.layout.title.text
    assert "local R²" in lime_bar.layout.title.text
    text = _text(agreement) + _text(notes)
    assert "Spearman" in text and "TreeExplainer, interventional, 100 background rows" in text


def test_bad_row_gives_a_message_not_a_traceback(sample_workspace):
    *_, agreement, _ = descriptive.render_local(100000)
    assert "row 100000 does not exist; rows are numbered 0 to 568" in _text(agreement)
    assert shell.show_row_status(-1) == "row -1 does not exist; rows are numbered 0 to 568"


def test_surrogate_page_reports_agreement_rules_and_curve(sample_workspace):
    summary, rules, curve = surrogate.render_surrogate("/surrogate")
    assert "0.972" in _text(summary)
    assert _text(rules).count("IF ") == 8
    assert len(curve.data) == 4


@pytest.mark.parametrize("k", [1, 3, 30])
def test_persuasive_k_drives_every_panel(sample_workspace, k):
    statement, cost, full, topk, tradeoff = persuasive.render_persuasive(3, k)
    assert f"(k = {k})" in _text(statement)
    assert len(topk.data[0].y) == k
    assert len(full.data[0].y) == 30
    if k == 30:
        assert "0.0%" in _text(cost)
    assert tradeoff.layout.shapes[0].x0 == k


def test_attention_page_compares_heads_with_ig(sample_workspace):
    heat, agreement, ig, shp, notes = attention.render_attention(3)
    assert len(heat.data) == 2 and heat.data[0].z.shape == (4, 30)
    assert agreement.data[0].z.shape == (2, 4)
    assert "Integrated Gradients" in ig.layout.title.text
    assert "completeness gap" in _text(notes)


def test_random_row_is_reproducible_per_click(sample_workspace):
    assert shell.pick_random_row(4) == shell.pick_random_row(4)
    assert 0 <= shell.pick_random_row(4) < 569


def test_participants_never_see_the_navbar():
    assert shell.hide_navbar_for_participants("/study/pilot") == "d-none"
    assert shell.hide_navbar_for_participants("/descriptive") == "mb-3"
