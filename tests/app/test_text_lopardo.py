"""The Lopardo et al. (2024) card of the Text page, callbacks called as plain functions.

Lopardo, Precioso, Garreau 2024, arXiv 2402.03485 (docs/methods.md, "Lopardo et al. 2024"). The classifier is trained on the
12 built-in examples (seeded, few epochs) in a fresh ``TEXT_DIR``; no MiniLM is loaded.
"""
import base64
import json

import numpy as np
import pytest
import torch

from app import services
from app.callbacks import text_lopardo as cb
from workspace.errors import CandorError

SENTENCE = "The staff were rude and the food was cold."


def _text(component) -> str:
    return json.dumps(component.to_plotly_json(), default=lambda o: o.to_plotly_json())


@pytest.fixture(scope="module")
def lop(tmp_path_factory):
    """The service with its disk cache in a fresh folder and 8 training epochs (fast)."""
    from app.services import text as text_services
    from app.services import text_lopardo

    before, epochs = text_services.TEXT_DIR, text_lopardo.EPOCHS
    text_services.TEXT_DIR = tmp_path_factory.mktemp("candor-text-lopardo")
    text_lopardo.EPOCHS = 8
    text_lopardo._models.clear()
    yield text_lopardo
    text_services.TEXT_DIR, text_lopardo.EPOCHS = before, epochs
    text_lopardo._models.clear()


@pytest.fixture(scope="module")
def card(lop):
    """The card's service for one text (:mod:`app.services.text_lopardo_view`), over ``lop``'s models."""
    from app.services import text_lopardo_view

    return text_lopardo_view


@pytest.fixture(scope="module")
def trained(lop):
    seen = []
    store, status = cb.run_lopardo(seen.append, 1, services.BUILTIN, "text", "label")
    return store, status, seen


def test_training_job_reports_progress_and_caches_the_model_on_disk(lop, trained):
    store, status, seen = trained
    assert store["dataset"] == "built-in examples" and "trained in" in status
    assert seen[-1] == (100, "batch 8 of 8") and len(seen) == 8  # 12 texts = 1 batch per epoch
    path = lop._folder() / f"{store['key']}.safetensors"
    assert path.is_file() and path.read_bytes()[8:9] == b"{"  # safetensors: header length, then JSON; not a pickle
    assert not any(p.suffix == ".pt" for p in lop._folder().iterdir())
    first = lop.trained_model(store["key"])
    lop._models.clear()
    again, status = cb.run_lopardo(lambda _: None, 2, services.BUILTIN, "text", "label")
    assert again == store and "loaded from the on-disk cache" in status
    reloaded = lop.trained_model(store["key"])
    assert reloaded is not first and reloaded.vocab.itos == first.vocab.itos
    for name, tensor in first.model.state_dict().items():
        assert torch.equal(tensor, reloaded.model.state_dict()[name])
    assert reloaded.meta["test_accuracy"] is None and reloaded.meta["n_train"] == 12


def test_seven_aligned_strips_with_real_values(lop, card, trained):
    store = trained[0]
    summary, strips, bars = cb.render_lopardo(store, {"text": SENTENCE, "origin": "typed"})
    names = [d.y[0] for d in strips.data]
    assert names == ["α-avg", "α-max", "LIME", "LIME approx.", "G-avg", "G-L1", "G-L2", "G×I"]
    words = ["the", "staff", "were", "rude", "and", "the", "food", "was", "cold", "."]
    for d in strips.data:
        assert list(d.x) == [f"{i} {w}" for i, w in enumerate(words)]
    view = card.lopardo_view(store["key"], SENTENCE)
    np.testing.assert_allclose(view.alpha.sum(1), 1.0, atol=1e-6)  # α rows (CLS included) sum to 1
    avg, mx = np.asarray(strips.data[0].z[0]), np.asarray(strips.data[1].z[0])
    assert np.all(mx >= avg - 1e-9) and avg.sum() < 1.0  # the CLS share is excluded from the words
    np.testing.assert_allclose(avg, view.alpha[:, 1:].mean(0), rtol=1e-6)
    # G×I against autograd on the same embeddings (the closed form, docs/methods.md, "Lopardo et al. 2024")
    model, vocab = view.trained.model, view.trained.vocab
    e = model.embed(vocab.encode([SENTENCE], model.max_len))[0].detach().requires_grad_(True)
    logits, _ = model.forward_embeddings(e[None])
    (grad,) = torch.autograd.grad(logits[0, view.target], e)
    gxi = (grad[1:] * e[1:]).sum(-1).detach().numpy()
    np.testing.assert_allclose(strips.data[7].z[0], gxi, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(strips.data[6].z[0], grad[1:].norm(dim=-1).detach().numpy(), rtol=1e-4, atol=1e-7)
    assert np.all(np.asarray(strips.data[5].z[0]) >= np.asarray(strips.data[6].z[0]) - 1e-9)  # L1 >= L2
    assert view.gradient_check < 1e-4
    assert np.any(np.asarray(strips.data[2].z[0]) != 0)  # LIME ran
    assert [b for b in bars.data[0].x] == ["α-max", "LIME", "LIME approx.", "G-avg", "G-L1", "G-L2", "G×I"]
    assert view.spearman["α-avg"] == pytest.approx(1.0)
    assert all(-1 <= r <= 1 for r in view.spearman.values() if not np.isnan(r))
    text = _text(summary)
    assert f"Predicted {view.predicted_label}" in text
    assert "training accuracy" in text and "held-out" not in text and "too few labelled texts" in text
    assert "no number on this card is the paper's" in text


def test_zero_output_layer_gives_zero_attributions_but_attention(lop, card, trained):
    """T13(a): with every W_l = 0, f = 0, so gradients, G×I and LIME vanish while α does not."""
    base = lop.trained_model(trained[0]["key"])
    model = type(base.model)(len(base.vocab.itos), 2, **{k: v for k, v in lop.CONFIG.items()})
    model.load_state_dict(base.model.state_dict())
    with torch.no_grad():
        model.W_l.zero_()
    model.eval()
    lop._models["zero-wl"] = lop.LopardoModel(model, base.vocab, dict(base.meta, key="zero-wl"))
    view = card.lopardo_view("zero-wl", SENTENCE)
    for name in ("LIME", "LIME approx.", "G-avg", "G-L1", "G-L2", "G×I"):
        np.testing.assert_allclose(view.scores[name], 0.0, atol=1e-9)
    assert np.ptp(view.scores["α-avg"]) > 0
    assert np.isnan(view.spearman["G×I"])


def test_no_model_yet_and_empty_text(lop, trained):
    summary, strips, bars = cb.render_lopardo(None, {"text": SENTENCE})
    assert "no model trained yet" in _text(summary) and "Train the attention classifier" in _text(summary)
    # a trained model of its own: with --dist loadgroup this test may run in a worker where no other test trained one
    summary, *_ = cb.render_lopardo(trained[0], {"text": "   "})
    assert "type a sentence" in _text(summary)


def test_uploaded_csv_trains_with_a_held_out_split(lop):
    rows = ["text,label"] + [f"great lovely film number {i},positive" for i in range(15)] + \
           [f"awful boring film number {i},negative" for i in range(15)]
    data = ("\n".join(rows) + "\n").encode()
    info = services.save_csv_upload("data:text/csv;base64," + base64.b64encode(data).decode(), "tiny.csv")
    store, status = cb.run_lopardo(lambda _: None, 1, info, "text", "label")
    assert store["dataset"] == "tiny.csv" and "trained in" in status
    m = lop.trained_model(store["key"]).meta
    assert (m["n_train"], m["n_test"]) == (24, 6) and 0.0 <= m["test_accuracy"] <= 1.0
    summary, strips, _ = cb.render_lopardo(store, {"text": "a lovely film"})
    assert "held-out accuracy" in _text(summary) and "6 texts not used for training" in _text(summary)
    assert len(strips.data) == 8


def test_csv_without_usable_labels_names_the_file(lop):
    data = b"text,stars\nnice,5\nbad,1\n"
    info = services.save_csv_upload("data:text/csv;base64," + base64.b64encode(data).decode(), "stars.csv")
    store, status = cb.run_lopardo(lambda _: None, 1, info, "text", "stars")
    assert store is cb.no_update
    assert "stars.csv" in _text(status) and "needs labels" in _text(status)
    with pytest.raises(CandorError):
        lop.train(dict(info, label_column=None))


def test_card_sentences_say_what_the_numbers_show(lop, card, trained):
    """Gradient-vs-attention and LIME-approximation sentences come from the numbers (Spearman and Pearson
    recomputed here with scipy from autograd gradients and the model's own attention)."""
    from dataclasses import replace

    from scipy import stats

    store = trained[0]
    summary, strips, _ = cb.render_lopardo(store, {"text": SENTENCE, "origin": "typed"})
    view = card.lopardo_view(store["key"], SENTENCE)
    model, vocab = view.trained.model, view.trained.vocab
    ids = vocab.encode([SENTENCE], model.max_len)
    e = model.embed(ids)[0].detach().requires_grad_(True)
    logits, alpha = model.forward_embeddings(e[None])
    (grad,) = torch.autograd.grad(logits[0, view.target], e)
    a = alpha[0, :, 1:].mean(0).detach().double().numpy()

    def rho(g):  # words where either |score| is at least 1e-4 of its largest; the rest of one score tied at 0
        x, y = np.where(a >= 1e-4 * a.max(), a, 0.0), np.where(g >= 1e-4 * g.max(), g, 0.0)
        keep = (x > 0) | (y > 0)
        return stats.spearmanr(x[keep], y[keep])[0], int(keep.sum())

    (rho1, n1), (rho2, n2) = (rho(grad[1:].abs().sum(-1).detach().double().numpy()),
                              rho(grad[1:].norm(dim=-1).detach().double().numpy()))
    verb = "like" if min(rho1, rho2) >= 0.8 else "partly like" if min(rho1, rho2) >= 0.5 else "differently from"
    text = _text(summary)
    assert f"order the words {verb} attention" in text
    assert f"G-L1 {rho1:.2f}, G-L2 {rho2:.2f}" in text
    assert (view.spearman_words["G-L1"], view.spearman_words["G-L2"]) == (n1, n2)
    assert (f"over the {n1} of 10 words" if n1 == n2 else f"over {n1} and {n2} of 10 words") in text
    r = np.corrcoef(np.asarray(strips.data[2].z[0]), np.asarray(strips.data[3].z[0]))[0, 1]
    assert f"Pearson r = {r:.2f} over 10 words" in text
    assert f"{view.lime_fit['heldout_r2']:.2f} on fresh masks" in text
    assert -1 < view.lime_fit["heldout_r2"] <= 1
    # the same card on numbers that disagree says so
    other = card.card_sentences(replace(view, spearman=dict(view.spearman, **{"G-L1": 0.1, "G-L2": 0.3})))
    assert "order the words differently from attention" in other[0] and "reorder them" in other[0]
    other = card.card_sentences(replace(view, spearman=dict(view.spearman, **{"G-L1": 0.95, "G-L2": 0.99})))
    assert "order the words like attention" in other[0] and "as the closed form predicts" in other[0]
