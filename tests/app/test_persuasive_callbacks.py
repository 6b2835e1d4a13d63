"""Persuasive callbacks as plain functions on the bundled sample: operators, checks, guardrail, tradeoffs."""
import pytest

from app.callbacks import persuasive
from app.views import persuasive as persuasive_view
from tests.markdown_render import component_text, rendered_html, rendered_text


def _text(component) -> str:
    """The panel as JSON, its Markdown panels as the text a reader sees (an independent CommonMark renderer)."""
    return component_text(component)


def test_statement_carries_gilpin_label_and_only_verified_sentences(sample_workspace):
    statement, verify, *_ = persuasive_view.render_persuasive(3, 3)
    text = _text(statement)
    assert "Gilpin: processing · salience (feature attribution) · local · persuasive" in text
    assert "The model predicts malignant" in text and "Strongest factor" in text
    assert "Claim-by-claim check" in _text(verify) and "sentences shown" in _text(verify)
    assert "✗" not in _text(verify)


def test_hiding_the_top_feature_or_a_sensitive_one_is_said(sample_workspace):
    from app import services

    e = services.shap_row(3)
    top = e.feature_names[int(e.ranking()[0])]
    second = e.feature_names[int(e.ranking()[1])]
    *_, guard, dropped, _, _, _, _ = persuasive_view.render_persuasive(3, 1, "exact", [], [second])
    assert f"hidden: sensitive feature {second}" in _text(guard)
    assert f"{second} (sensitive)" in _text(dropped)
    assert top not in _text(dropped)
    plain = persuasive_view.render_persuasive(3, 1, "exact", [], [])
    assert "Guardrail: the top-ranked feature is shown" in _text(plain[2])


@pytest.mark.parametrize("rounding", ["0.05", "qualitative", "direction"])
def test_rounding_control_changes_what_is_shown(sample_workspace, rounding):
    statement, _, _, _, cost, _, shown, _ = persuasive_view.render_persuasive(3, 3, rounding, [], [])
    labels = list(shown.data[0].text)
    if rounding == "0.05":
        assert all(abs(float(t) * 20 - round(float(t) * 20)) < 1e-9 for t in labels)
    elif rounding == "qualitative":
        assert set(labels) <= {"strong", "moderate", "weak"} and "strongly towards" in _text(statement)
    else:
        assert set(labels) <= {"up", "down"} and "by about" not in _text(statement)
    assert ("n/a" in _text(cost)) == (rounding != "0.05")  # no numbers shown: additivity gap undefined


def test_grouping_merges_correlated_features_into_named_items(sample_workspace):
    *_, cost, _, shown, tradeoff = persuasive_view.render_persuasive(3, 3, "exact", ["on"], [])
    assert any("&amp; related" in y for y in shown.data[0].y)  # drawn as "& related" (user text escaped)
    assert len(shown.data[0].y) == 3 and max(tradeoff.data[0].x) < 30


def test_bad_inputs_give_messages(sample_workspace):
    out = persuasive_view.render_persuasive(3, 3, "exact", [], ["no such feature"])
    assert "unknown: no such feature" in _text(out[0])
    assert "rounding must be one of" in _text(persuasive_view.render_persuasive(3, 3, "0.3", [], [])[0])


def test_global_tradeoff_marks_the_current_k(sample_workspace):
    fig = persuasive.render_global(5)
    assert fig.layout.shapes[0].x0 == 5 and len(fig.data) == 4
    assert fig.data[0].x[-1] == 30 and abs(fig.data[0].y[-1]) < 1e-9  # k = all features: sufficiency 0


def test_cost_flags_deletion_insertion_when_the_baseline_scores_like_the_row(sample_workspace):
    """Row 20 of the sample: g(x) - g(training medians) is ~0, recomputed here with the model directly."""
    import numpy as np

    ws = sample_workspace
    x = ws.X.iloc[[20]]
    medians = x.copy()
    medians.iloc[0] = np.median(ws.X.iloc[ws.train_idx].to_numpy(dtype=float), axis=0)
    p_x, p_b = ws.model.predict_proba(x)[0, 1], ws.model.predict_proba(medians)[0, 1]
    assert (p_x >= 0.5) == (p_b >= 0.5) and abs(p_x - p_b) < 0.01  # baseline already in the predicted class
    *_, cost, _, _, _ = persuasive_view.render_persuasive(20, 3)
    assert "Deletion/insertion say little for this row" in _text(cost)
    *_, cost, _, _, _ = persuasive_view.render_persuasive(4, 3)
    assert "say little" not in _text(cost) and "share of the gap" in _text(cost)


def test_the_dropped_table_names_the_largest_and_the_sensitive_and_sums_the_rest(sample_workspace):
    """Ten rows (largest |SHAP| first) and every sensitive feature, the rest in one line whose share is their
    |SHAP| over the total, recomputed from the SHAP values."""
    import re

    import numpy as np

    from app import services

    e = services.shap_row(3)
    order = [int(j) for j in e.ranking()]  # largest |attribution| first
    names = [e.feature_names[j] for j in order]
    low = names[20]  # hidden at k = 1, far past the table's ten rows
    *_, dropped, _, _, _, _ = persuasive_view.render_persuasive(3, 1, "exact", [], [low])
    markdown = next(c.children for c in dropped._traverse() if type(c).__name__ == "Markdown")
    table, rest_line = markdown.split("\n\n")
    cells = [rendered_text(c) for c in re.findall(r"<td[^>]*>(.*?)</td>", rendered_html(table))]
    shown = [r.removesuffix(" (sensitive)") for r in cells[::4]]
    assert shown == names[1:11] + [low]
    rest = [n for n in names[1:] if n not in shown]
    line = re.fullmatch(r"and (\d+) more, together ([\d.]+)% of \|attribution\|.*?: (.+)\.", rendered_text(rest_line), re.S)
    assert int(line.group(1)) == len(rest) == len(names) - 12
    share = np.abs(e.values[order[11:]]).sum() - abs(e.values[e.feature_names.index(low)])
    assert float(line.group(2)) == pytest.approx(100 * share / np.abs(e.values).sum(), abs=0.05)
    assert line.group(3).split(", ") == rest
