"""Callbacks called as plain functions on the bundled sample (real model, real data)."""

import plotly.graph_objects as go
import pytest

from app.shell import ids
from app import services
from app.callbacks import overview, shell, surrogate
from app.shell import row_status
from app.views import attention as attention_view
from app.views import descriptive as descriptive_view
from app.views import persuasive as persuasive_view
from app.views import surrogate as surrogate_view
from app.views.overview import model_card
from app.shell import row_status
from tests.markdown_render import component_text


def _text(component) -> str:
    """The component as JSON, its Markdown panels as the text a reader sees (tests/markdown_render.py)."""
    return component_text(component)


def test_summary_reports_heldout_metrics(sample_workspace):
    card = model_card()
    text = _text(card)
    assert "0.958" in text and "0.991" in text and "426 train + 143 held-out" in text


def test_model_card_groups_thousands(sample_workspace, monkeypatch):
    """'24,420 train + 8,141 held-out', never '24420' (a new user's Adult landing page)."""
    import dataclasses

    from app.views import overview as overview_views

    real = services.model_summary()
    monkeypatch.setattr(overview_views.services, "model_summary",
                        lambda: dataclasses.replace(real, n_train=24420, n_test=8141))
    assert "24,420 train + 8,141 held-out" in _text(model_card())


def test_the_landing_page_comes_with_its_summary_and_table_page(sample_workspace, monkeypatch):
    """Model & data's layout holds the model card and the URL's table page: no second wave of requests."""
    import importlib

    import dash

    monkeypatch.setattr(dash, "register_page", lambda *args, **kwargs: None)  # the module, without a Dash app
    tree = importlib.import_module("app.pages.overview").layout(table_page="2", columns="2")
    found = {c.id: c for c in tree._traverse_ids() if isinstance(c.id, str)}
    assert "426 train + 143 held-out" in _text(found[ids.SUMMARY])
    table = found[ids.DATA_TABLE]
    assert table.page_current == 2 and [r["id"] for r in table.data] == list(range(24, 36)) and table.page_count == 48
    assert table.columns == overview.render_table_page(2, 12, 2)[1] != overview.render_table_page(2, 12)[1]
    assert found[ids.TABLE_COLUMNS].active_page == 2 and found[ids.TABLE_COLUMNS_NOTE].children == (
        "Feature columns 21–30 of 30")


def test_table_pages_are_served_not_the_whole_table(sample_workspace):
    data, columns, page_count, tips, note = overview.render_table_page(2, 12)
    assert len(data) == 12 and page_count == 48 and tips == {}  # the sample has no features file
    assert [r["id"] for r in data] == list(range(24, 36))
    assert columns[0]["id"] == "id" and {"split", "diagnosis", "P(malignant)"} <= {c["name"] for c in columns}
    assert all(set(r) == {c["id"] for c in columns} for r in data)  # every cell has a column, every column a cell
    assert [c["name"] for c in columns[4:]] == list(sample_workspace.X.columns[:20])
    assert note == "Feature columns 1–20 of 30"


def test_table_feature_columns_come_a_page_at_a_time(sample_workspace):
    """The sample's 30 features in pages of 20: the second page holds features 21-30 with the table's own values
    (oracle: the data frame, rounded as shown); a page past the last shows the last."""
    X = sample_workspace.X
    data, columns, _, _, note = overview.render_table_page(1, 12, 2)
    assert [c["name"] for c in columns[:4]] == ["id", "split", "diagnosis", "P(malignant)"]
    assert [c["name"] for c in columns[4:]] == list(X.columns[20:30]) and note == "Feature columns 21–30 of 30"
    assert [[r[f"c{j}"] for j in range(20, 30)] for r in data] == [
        [round(float(v), 4) for v in X.iloc[r, 20:30]] for r in range(12, 24)]
    assert all(set(r) == {c["id"] for c in columns} for r in data)
    assert overview.render_table_page(1, 12, 99)[1] == columns


def test_descriptive_row_shows_shap_lime_and_their_agreement(sample_workspace):
    waterfall, lime_bar, agreement, notes = descriptive_view.render_local(5)
    assert isinstance(waterfall, go.Figure) and waterfall.data[0].type == "waterfall"
    assert "additivity gap" in waterfall.layout.title.text
    assert "local R²" in lime_bar.layout.title.text
    text = _text(agreement) + _text(notes)
    assert "Spearman" in text and "exact interventional Tree SHAP" in text and "100 background rows" in text
    # the sample is a boosted classifier: explained exactly in log-odds, with the probability beside
    assert "log-odds, probability 0." in waterfall.layout.title.text or "log-odds, probability 1" in \
        waterfall.layout.title.text
    assert "linear proxy model" in text and "salience (feature attribution)" in text


def test_bad_row_gives_a_message_not_a_traceback(sample_workspace):
    *_, agreement, _ = descriptive_view.render_local(100000)
    assert "row 100000 does not exist; rows are numbered 0 to 568" in _text(agreement)
    assert row_status.show_row_status(-1) == "row -1 does not exist; rows are numbered 0 to 568"
    assert row_status.show_row_status(None) == "enter a whole row number from 0 to 568"


def test_surrogate_page_fits_muse_and_shows_its_rules(sample_workspace, tmp_path_factory, monkeypatch):
    monkeypatch.setenv("CANDOR_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
    key, note, stop_polling = surrogate.load_default_surrogate("/surrogate")
    assert note is None and stop_polling  # no warm-up running: the key at once, nothing to wait for
    summary, rules, confusion = surrogate_view.render_surrogate(key)
    text = _text(summary)
    assert "MUSE surrogate" in text and "on 143 held-out rows" in text and "MUSE two-level decision set" in text
    assert "automatic rule extraction (global proxy)" in text
    assert _text(rules).count("IF ") >= 1 and "Otherwise (default rule)" in _text(rules)
    assert confusion.data[0].z.sum() == 143
    # custom features of interest: every neighborhood descriptor uses only them
    progress = []
    new_key, frontier_key, error = surrogate.fit_surrogates(progress.append, 1, ["worst radius", "mean texture"], 5, 2,
                                                            2, "0.1, 0.1, 0.1, 1, 5")
    assert error is None and new_key != key
    # one job: MUSE, then the frontier of the same settings; the bar counts both
    # MUSE at 5 rules is the frontier's point at budget 5, read, not fitted again: 12 fits (issue 14)
    assert progress[0] == (0, "MUSE and its frontier: 0 of 12 surrogates fitted")
    assert progress[1][1].startswith("MUSE and its frontier: 1 of 12 surrogates fitted, about ")
    assert progress[1][1].endswith(" s left")
    assert progress[-1] == (100, "MUSE and its frontier: 12 of 12 surrogates fitted")
    assert services.frontier(frontier_key).points[0].rule_set is not None
    view = services.muse_view(new_key)
    used = {p.feature for d in view.rule_set.neighborhoods for p in d}
    assert used <= {"worst radius", "mean texture"}
    assert view.heldout.size <= 5 and view.heldout.maxwidth <= 2 and view.heldout.numdsets <= 2
    assert "(fidelity weight set by you)" in view.source and "λ weights 0.1, 0.1, 0.1, 1, 5" in view.source
    *_, bad = surrogate.fit_surrogates(progress.append, 1, None, 0, 3, 4, None)
    assert "max rules must be a whole number from 1 to 30, got 0" in _text(bad)
    *_, bad = surrogate.fit_surrogates(progress.append, 1, None, 5, 3, 4, "0.1, 0.1, x, 1, auto")
    assert "λ weight for rule overlap must be a non-negative number, got 'x'" in _text(bad)


def test_surrogate_frontier_points_can_be_shown(sample_workspace, tmp_path_factory, monkeypatch):
    monkeypatch.setenv("CANDOR_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
    progress = []
    fkey = surrogate.compute_frontier(progress.append, "/surrogate")
    assert progress[-1] == (100, "default frontier: 12 of 12 surrogates fitted")
    fig = surrogate_view.render_frontier(fkey, None)
    triv = services.frontier(fkey).trivial_agreement
    assert {t.name for t in fig.data} == {"MUSE", "CART", "CART AS DECISION SET", "FLAT",
                                          f"trivial: always benign ({triv:.3f})"} and len(fig.data) == 10
    # only MUSE has neighborhoods: CART and the flat set are not drawn at "0 neighborhoods" (issue 15)
    assert {t.name for t in fig.data if t.xaxis == "x3"} == {"MUSE"}
    assert [t.name for t in fig.data if t.xaxis == "x"][-1] == "MUSE"  # drawn last: never under the flat set
    key = surrogate.show_clicked_point({"points": [{"customdata": ["cart", 5, 0.1]}]}, fkey)
    summary, rules, _ = surrogate_view.render_surrogate(key)
    assert "CART surrogate" in _text(summary)
    cart5 = next(p for p in services.frontier(fkey).points if p.method == "cart" and p.budget == 5)
    assert f"{cart5.agreement:.3f}" in _text(summary)


@pytest.mark.parametrize("k", [1, 3, 30])
def test_persuasive_k_drives_every_panel(sample_workspace, k):
    statement, verify, guard, dropped, cost, full, topk, tradeoff = persuasive_view.render_persuasive(3, k)
    assert f"(k = {k})" in _text(statement)
    assert len(topk.data[0].y) == k
    assert len(full.data[0].y) == 30
    assert f"What was dropped ({30 - k} features)" in _text(dropped)
    if k == 30:
        assert "100.0%" in _text(cost) and "Nothing: every feature is named." in _text(dropped)
    assert tradeoff.layout.shapes[0].x0 == k  # n_chunks = k without grouping


def test_attention_page_compares_heads_with_ig(sample_workspace):
    heat, agreement, ig, shp, notes = attention_view.render_attention(3)
    assert len(heat.data) == 2 and heat.data[0].z.shape == (4, 30)
    assert agreement.data[0].z.shape == (2, 4)
    assert "Integrated Gradients" in ig.layout.title.text
    assert "completeness gap" in _text(notes)
    assert "Gilpin: explanation_producing" in _text(notes) and "Gilpin: processing" in _text(notes)


def test_random_row_pool_is_every_held_out_row(sample_workspace):
    # "Random row" picks in the browser (tests/e2e/test_fast_path.py) from exactly these rows
    pool = services.random_row_pool()
    assert pool == {"rows": sorted(int(r) for r in services.workspace().test_idx), "of": 143, "stored": None}


def test_row_picker_only_where_rows_are_explained():
    assert shell.show_row_picker_on_row_pages("/descriptive") == "d-flex align-items-center"
    assert shell.show_row_picker_on_row_pages("/text") == "d-none"


def test_participants_never_see_the_navbar():
    assert shell.hide_navbar_for_participants("/study/pilot") == "d-none"
    assert shell.hide_navbar_for_participants("/descriptive") == "mb-3"
