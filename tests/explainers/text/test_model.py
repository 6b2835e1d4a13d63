"""Loading: bundled MiniLM default, a local HF classifier folder, accuracy on real data."""
import numpy as np
import pytest
import torch

from explainers.attention.extract import extract_attention
from explainers.text import (
    evaluate_accuracy,
    load_text_classifier,
    minilm_model_dir,
    read_labelled_sentences,
)


def test_minilm_located_through_the_package():
    d = minilm_model_dir()
    assert (d / "model.safetensors").is_file() and d.name == "model"


def test_minilm_shape_and_eager_attention(minilm):
    assert (minilm.n_layers, minilm.n_heads, minilm.max_length) == (6, 12, 256)
    assert minilm.module.encoder.config._attn_implementation == "eager"
    assert minilm.labels == ("negative", "positive")


def test_gradients_flow_to_input_embeddings(minilm):
    b = minilm.tokenizer(["fine"], return_tensors="pt")
    e = minilm.word_embeddings(b["input_ids"]).detach().requires_grad_(True)
    logits, _ = minilm.module(inputs_embeds=e, attention_mask=b["attention_mask"])
    logits[0, 1].backward()
    assert e.grad is not None and e.grad.abs().sum() > 0


def test_accuracy_on_uci_sentiment_sentences(minilm, shared_data):
    texts, labels = read_labelled_sentences(shared_data / "sentiment_sentences" / "yelp_labelled.txt")
    assert len(texts) == 1000 and labels.sum() == 500
    res = evaluate_accuracy(minilm, texts[::4], labels[::4])
    assert res["n"] == 250
    assert res["accuracy"] > 0.75  # measured 0.848 on all 1,000 yelp sentences


def test_load_local_hf_classifier_folder(tmp_path, minilm):
    from transformers import BertConfig, BertForSequenceClassification

    cfg = BertConfig(vocab_size=minilm.tokenizer.vocab_size, hidden_size=16, num_hidden_layers=2,
                     num_attention_heads=2, intermediate_size=32, max_position_embeddings=40,
                     num_labels=3, id2label={0: "a", 1: "b", 2: "c"}, label2id={"a": 0, "b": 1, "c": 2})
    torch.manual_seed(0)
    BertForSequenceClassification(cfg).save_pretrained(tmp_path)
    minilm.tokenizer.save_pretrained(tmp_path)
    clf = load_text_classifier(tmp_path)
    assert clf.labels == ("a", "b", "c") and clf.max_length == 40 and len(clf.attention_outputs) == 2
    attn = extract_attention(clf, "hello there world")
    assert attn.attention.weights.shape[:2] == (2, 2)
    assert np.allclose(attn.attention.weights.sum(-1), 1, atol=1e-5)


def test_load_rejects_folder_without_config(tmp_path):
    with pytest.raises(FileNotFoundError, match="config.json"):
        load_text_classifier(tmp_path)
