"""Text page callbacks called as plain functions on the real MiniLM sentiment classifier (loaded once)."""
import base64
import json

import numpy as np
import pytest
from dash.exceptions import PreventUpdate

from app import services
from app.callbacks import text as cb
from app.callbacks import text_views as tv
from tests.app import text_page_calls as calls
from workspace.errors import CandorError

SENTENCE = "The staff were rude and the food was cold."


def _text(component) -> str:
    return json.dumps(component.to_plotly_json(), default=lambda o: o.to_plotly_json())


def _upload(data: bytes) -> str:
    return "data:text/csv;base64," + base64.b64encode(data).decode()


@pytest.fixture(scope="module")
def text_app(sample_workspace, tmp_path_factory):
    """Services installed, the slow-result cache and uploads in a fresh folder, MiniLM loaded once."""
    from app.services import text as text_services

    before = text_services.TEXT_DIR
    text_services.TEXT_DIR = tmp_path_factory.mktemp("candor-text")
    text_services._cache_state.clear()
    services.text_model()
    yield text_services
    text_services.TEXT_DIR = before
    text_services._cache_state.clear()


def _current(text=SENTENCE):
    return {"text": text, "origin": "typed"}


def _shown(text=SENTENCE, **kw) -> dict:
    """What the page shows for ``text`` once its pickers are filled (MiniLM: 6 layers x 12 heads)."""
    return calls.show(_current(text), n_layers=6, n_heads=12, layer=5, heads=[0, 1, 2, 3], **kw)


def test_sentence_gives_prediction_notes_and_model_view(text_app):
    p = _shown()
    notes, prediction, model_view = p["notes"], p["prediction"], p["model_view"]
    probs = np.asarray(prediction.data[0].x)
    assert probs.sum() == pytest.approx(1.0) and list(prediction.data[0].y) == ["negative", "positive"]
    v = services.text_view(SENTENCE)
    assert v.predicted_label == "negative" and probs.argmax() == 0
    text = _text(notes)
    assert "Predicted negative" in text and "2 special tokens ([CLS], [SEP]) and 0 padding tokens excluded" in text
    assert "attention to a word = sum over its pieces" in text and "completeness gap" in text
    T = v.attention.encoding.n_tokens
    assert model_view.data[0].z.shape == (6 * (T + 1), 12 * (T + 1))
    assert model_view.data[0].z.dtype == np.float32  # sent as typed binary: half of float64's bytes (issue 14)
    np.testing.assert_allclose(model_view.data[0].z[T + 1:2 * T + 1, :T], v.attention.attention.weights[1, 0], rtol=1e-6)


def test_head_view_draws_each_chosen_head_and_rows_sum_to_one(text_app):
    fig, aggregates = calls.show_layer(2, [3, 7], _current())
    assert "layer 2" in aggregates.data[0].y[0]  # another layer: the aggregates follow it
    assert [a.text for a in fig.layout.annotations] == ["head 3", "head 7"]
    z = np.asarray(fig.data[1].z)
    np.testing.assert_allclose(z, services.text_view(SENTENCE).attention.attention.weights[2, 7])
    np.testing.assert_allclose(z.sum(1), 1.0, atol=1e-5)
    mean, unchanged = calls.show_layer(0, [0, 1, 2, 3, 4], _current(), trigger="text-heads.value")
    assert unchanged is tv.no_update  # other heads: the aggregates do not depend on them
    assert len(mean.data) == 1 and "mean over heads 0, 1, 2, 3, 4" in mean.layout.annotations[0].text


def test_aggregates_align_attention_with_ig_and_gradient_x_input(text_app):
    fig = _shown()["aggregates"]
    names = [d.y[0] for d in fig.data]
    assert names[:3] == ["attention: CLS row, layer 5, mean over heads",
                         "attention: mean over queries, layer 5, mean over heads",
                         "attention: rollout CLS row, all layers (Abnar &amp; Zuidema)"]  # Plotly draws "&"
    assert names[3].startswith("Integrated Gradients (log-odds of negative; 50 steps")
    assert names[4] == "gradient x input (log-odds of negative)"
    for d in fig.data[:3]:
        assert np.sum(d.z[0]) == pytest.approx(1.0)
    ig = services.attribution(SENTENCE, "ig")
    assert len(fig.data[3].x) == len(ig.feature_names) == 10  # words, pieces merged, specials dropped
    np.testing.assert_allclose(fig.data[3].z[0], ig.values)
    assert abs(ig.values.sum() - (ig.prediction - ig.base_value)) <= 0.01 * abs(ig.prediction - ig.base_value)


@pytest.mark.parametrize("metric,low", [("spearman", -1), ("kendall", -1), ("top_k", 0)])
def test_agreement_heatmap_per_metric(text_app, metric, low):
    fig, note = tv.show_agreement("gxi", metric, "cls", _current())
    z = np.asarray(fig.data[0].z, float)
    assert z.shape == (6, 12) and np.nanmin(z) >= low - 1e-9 and np.nanmax(z) <= 1 + 1e-9
    report = services.agreement(SENTENCE, "gxi", "cls")
    expected = {"spearman": report.per_head, "kendall": report.kendall, "top_k": report.top_k_overlap}[metric]
    np.testing.assert_allclose(z, expected)
    assert "gradient x input" in fig.layout.title.text and "gradient x input" in _text(note)
    if metric == "top_k":
        assert report.k == 2 and set(np.unique(z)) <= {0.0, 0.5, 1.0}


def test_lime_agreement_waits_for_the_background_job(text_app):
    fig, note = tv.show_agreement("lime", "spearman", "cls", _current("Lovely."))
    assert "LIME has not been computed for this text yet" in _text(note)


def test_agreement_controls_from_a_request_are_checked(text_app):
    """A request's method or attention reading that is no option (a list, a typo) is one line in the panel."""
    fig, note = tv.show_agreement("gxi", "spearman", ["cls"], _current())
    assert note.children == "unknown attention reading \"['cls']\"; expected cls or mean"
    fig, note = tv.show_agreement(["ig"], "spearman", "cls", _current())
    assert note.children.startswith("unknown attribution method \"['ig']\"; expected one of ig, gxi, lime, shap")
    assert "unknown attribution method" in fig.layout.annotations[0].text


def test_slow_job_computes_lime_and_shap_then_serves_them_from_the_cache(text_app):
    current = _current("Terrible service.")
    seen = []
    done, status = cb.run_slow(seen.append, 1, current)
    assert done["methods"] == ["lime", "shap"] and seen[0] == (0, "LIME (1 of 2)") and seen[-1] == (100, "done")
    lime = services.attribution("Terrible service.", "lime")
    assert lime.method == "lime" and lime.feature_names == ("Terrible", "service", ".")
    shap = services.attribution("Terrible service.", "shap")
    assert shap.additivity_gap < 1e-6
    aggregates, agreement, note = tv.show_slow_results(done, current, 5, "lime", "spearman", "cls")
    assert "LIME" in _text(note) and np.asarray(agreement.data[0].z, float).shape == (6, 12)
    names = [d.y[0] for d in aggregates.data]
    assert any(n.startswith("LIME (probability of negative; mean of 4 fits of 250 samples") and
               "largest standard error" in n for n in names)
    assert any(n.startswith("SHAP permutation, ") and "largest standard error" in n for n in names)
    assert len(lime.params["standard_error"]) == 3 and len(shap.params["standard_error"]) == 3
    again, status = cb.run_slow(lambda _: None, 2, current)
    assert "LIME 0.0 s, SHAP 0.0 s" in status


def test_long_text_is_truncated_with_a_note_and_ig_moves_to_the_job(text_app):
    long = " ".join(["The service was slow but the view was lovely."] * 40)
    p = _shown(long)
    notes, model_view = p["notes"], p["model_view"]
    text = _text(notes)
    assert "Truncated at the model maximum of 256 tokens: truncated to 256 of 402 tokens (model maximum 256): cut after token 254 'slow'" in text
    assert "first dropped word #254 'but'" in text and "takes more than 2 s: run it below" in text
    assert "first 40 of 256 tokens" in model_view.layout.title.text
    _, note = tv.show_agreement("ig", "spearman", "cls", _current(long))
    assert "Integrated Gradients has not been computed" in _text(note)


def test_empty_and_missing_text(text_app):
    p = _shown("   ")
    assert "type a sentence" in _text(p["notes"]) and "type a sentence" in _text(p["agreement_note"])
    for bad in (None, ["a list"], {"text": 3}):  # a store from a request may hold anything
        with pytest.raises(PreventUpdate):
            calls.show_layer(5, [0], bad)
        with pytest.raises(PreventUpdate):
            calls.show(bad)
    typed = calls.show(_current(), "text-submit.n_clicks", typed=["not", "text"], n_layers=6, n_heads=12, layer=5)
    assert typed["current"]["text"] == "" and "type a sentence" in _text(typed["notes"])


def test_csv_upload_lists_texts_and_picks_one(text_app):
    csv = "id,review,sentiment\n1,Great food and friendly staff.,positive\n2,Cold soup.,negative\n3,,positive\n"
    info, status, cleared = cb.upload_csv(_upload(csv.encode()), "reviews.csv")
    assert cleared is None and info["text_column"] == "review" and info["label_column"] == "sentiment"
    assert status == "reviews.csv: 3 rows, columns id, review, sentiment"
    assert "contents" not in info and len(json.dumps(info)) < 300  # the store holds a description, not the file
    cols = cb.show_columns(info)
    assert cols[1] == "review" and cols[2] is False and cols[4] == "sentiment"
    options, value, note = cb.list_texts("review", "sentiment", info, 4)
    assert [o["value"] for o in options] == [0, 1] and value is None  # the previous file's pick is cleared
    assert cb.list_texts("review", "sentiment", info)[1] is cb.no_update  # an empty picker: no request for nothing
    assert "2 texts from column 'review' (1 empty rows skipped); labels from column 'sentiment'" in note
    p = calls.show(_current(), "text-row.value", index=1, dataset=info, text_col="review", label_col="sentiment",
                   n_layers=6, n_heads=12, layer=5, heads=[0])
    assert p["box"] == "Cold soup." and p["current"] == {"text": "Cold soup.", "origin": "text 1 of reviews.csv"}
    assert "for text 1 of reviews.csv" in _text(p["notes"]) and p["slow_status"] == ""
    assert p["layer"] is tv.no_update and "Head view: layer 5" in p["head_view"].layout.title.text
    _, _, bad = cb.list_texts("id", "review", info)
    assert "reviews.csv: column 'review' has values ('', 'cold soup.', " in bad and "accuracy is not computed" in bad


@pytest.mark.parametrize("data,message", [
    (b"a" * 2_000_001, "big.csv is 2.0 MB; the limit is 2 MB"),
    (b"text\n", "big.csv: no rows under the header"),
])
def test_bad_csv_uploads_name_the_file(text_app, data, message):
    info, status, cleared = cb.upload_csv(_upload(data), "big.csv")
    assert message in _text(status) and cleared is None


def test_missing_column_names_file_and_column(text_app):
    info, *_ = cb.upload_csv(_upload(b"sentence\nFine.\n"), "one.csv")
    with pytest.raises(CandorError, match="one.csv: no column 'review'; columns are sentence"):
        services.dataset({**info, "text_column": "review"})
    options, _, note = cb.list_texts("review", None, info)  # a column of the previous file: back to the default
    assert [(o["label"].children, o["value"]) for o in options] == [("0: Fine.", 0)]
    assert "1 texts from column 'sentence'" in note


def test_head_analysis_job_on_the_built_in_examples(text_app):
    seen = []
    summary, roles, importance, pruning = cb.run_heads(seen.append, 1, services.BUILTIN, "text", "label", None, "texts")
    text = _text(summary)
    assert "built-in examples: all 12 texts" in text and "n = 12)" in text
    assert seen[-1][0] == 100 and all(a[0] <= b[0] for a, b in zip(seen, seen[1:]))
    assert np.asarray(roles.data[0].z).shape == (6, 12) and np.asarray(importance.data[0].z).shape == (6, 12)
    norms = np.linalg.norm(np.asarray(importance.data[0].z, float), axis=1)
    np.testing.assert_allclose(norms, 1.0, rtol=1e-6)
    assert [d.name for d in pruning.data] == ["importance (one-shot)", "random(seed=0)"]
    assert pruning.data[0].y[0] == 1.0
    cached, *_ = cb.run_heads(lambda _: None, 2, services.BUILTIN, "text", "label", None, "texts")
    assert "(from the cache)" in _text(cached)


CONLLU = """# sent_id = a
1\tThe\tthe\tDET\t_\t_\t2\tdet\t_\t_
2\tcat\tcat\tNOUN\t_\t_\t3\tnsubj\t_\t_
3\tsleeps\tsleep\tVERB\t_\t_\t0\troot\t_\t_
4\t.\t.\tPUNCT\t_\t_\t3\tpunct\t_\t_

# sent_id = b
1\tDogs\tdog\tNOUN\t_\t_\t2\tnsubj\t_\t_
2\tbark\tbark\tVERB\t_\t_\t0\troot\t_\t_
3\tloudly\tloudly\tADV\t_\t_\t2\tadvmod\t_\t_

"""


def test_conllu_upload_drives_a_syntactic_head_analysis(text_app):
    info, status, cleared, options, source = cb.upload_conllu(
        _upload(CONLLU.encode()), "tiny.conllu", [{"label": "texts", "value": "texts"},
                                                   {"label": "conllu", "value": "conllu", "disabled": True}])
    assert status == "tiny.conllu: 2 sentences with gold heads" and source == "conllu"
    assert options[1]["disabled"] is False
    summary, roles, *_ = cb.run_heads(lambda _: None, 1, services.BUILTIN, None, None, info, "conllu")
    text = _text(summary)
    assert "tiny.conllu: 2 sentences (CoNLL-U word forms, gold heads)" in text and "syntactic: " in text
    assert "No usable labels" in text
    bad = cb.upload_conllu(_upload(b"1\tonly\ttwo\n\n"), "bad.conllu", [])
    assert "bad.conllu: line 1: expected 10 columns, got 3" in _text(bad[1])


def test_opening_and_typing_are_one_call_each(text_app):
    """Opening fills the pickers from the model (show_layer then draws the head view and aggregates with them);
    a typed text sends every panel at once and leaves the filled pickers alone."""
    opened = calls.show({"text": SENTENCE, "origin": "built-in example 0"})
    assert opened["layer"] == 5 and opened["heads"] == [0, 1, 2, 3] and len(opened["layer_options"]) == 6
    assert len(opened["head_options"]) == 12 and opened["layer_placeholder"] == "layer"
    assert opened["head_view"] is tv.no_update and opened["aggregates"] is tv.no_update
    assert opened["current"] is tv.no_update and opened["slow_status"] is tv.no_update
    assert "for built-in example 0" in _text(opened["notes"]) and "Spearman" in opened["agreement"].layout.title.text
    linked = calls.show(_current(), layer=2, heads=[1, 11], n_layers=1)  # a link's layer: its only option so far
    assert linked["layer"] == 2 and linked["heads"] == [1, 11] and len(linked["layer_options"]) == 6
    typed = calls.show(_current(), "text-input.n_submit", typed="Lovely.", n_layers=6, n_heads=12, layer=3,
                       heads=[0])
    assert typed["current"] == {"text": "Lovely.", "origin": "typed"} and typed["box"] is tv.no_update
    assert all(typed[k] is tv.no_update for k in calls.OUTPUTS[5:11])
    assert "for typed" in _text(typed["notes"]) and typed["slow_status"] == ""
    assert "layer 3" in typed["aggregates"].data[0].y[0] and "layer 3" in typed["head_view"].layout.title.text
    np.testing.assert_allclose(typed["head_view"].data[0].z,
                               services.text_view("Lovely.").attention.attention.weights[3, 0])
    assert "no model trained yet" in _text(typed["lopardo_summary"])
