"""Rollout oracle T5, attention rows and aggregates on the real MiniLM."""
import numpy as np
import pytest

from explainers.attention.aggregates import attention_scores, cls_row, mean_over_queries, rollout
from explainers.attention.extract import extract_attention

UNIFORM = [[0.5, 0.5], [0.5, 0.5]]


def test_t5_rollout_one_and_two_layers():
    assert rollout(np.array([[UNIFORM]])).ravel().tolist() == pytest.approx([0.75, 0.25, 0.25, 0.75])
    two = rollout(np.array([[UNIFORM], [UNIFORM]]))
    assert two.ravel().tolist() == pytest.approx([0.625, 0.375, 0.375, 0.625])


def test_t5_rollout_order_later_layers_on_the_left():
    out = rollout(np.array([[UNIFORM], [[[1.0, 0.0], [1.0, 0.0]]]]))
    assert out.ravel().tolist() == pytest.approx([0.75, 0.25, 0.5, 0.5])
    assert not np.allclose(out, [[0.875, 0.125], [0.625, 0.375]])
    assert out.sum(-1).tolist() == pytest.approx([1.0, 1.0])


def test_t5_rollout_of_identity_is_identity():
    eye = np.broadcast_to(np.eye(5), (3, 2, 5, 5))
    assert np.allclose(rollout(eye), np.eye(5), atol=1e-12)


def test_rollout_rejects_3d():
    with pytest.raises(ValueError, match="n_layers, n_heads"):
        rollout(np.ones((2, 3, 3)))


def test_minilm_attention_rows_sum_to_one(minilm):
    attn = extract_attention(minilm, "The food was wonderful but the service was unbelievably slow.")
    w = attn.attention.weights
    assert w.shape == (6, 12, attn.encoding.n_tokens, attn.encoding.n_tokens)
    assert np.allclose(w.sum(-1), 1.0, atol=1e-5)
    assert (w >= 0).all()
    enc = attn.encoding
    assert enc.tokens[0] == "[CLS]" and enc.tokens[-1] == "[SEP]" and enc.n_special == 2
    assert "unbelievably" in enc.words and len(enc.words) < enc.n_tokens - 2  # merged pieces
    assert attn.predicted == 0  # "slow" service: negative


def test_aggregates_exclude_special_tokens(minilm):
    attn = extract_attention(minilm, "a truly great film")
    w = attn.attention.weights
    n_words = len(attn.encoding.words)
    for agg in ("cls", "mean", "rollout"):
        scores = attention_scores(attn, agg)
        assert scores.shape == (n_words,)
        assert 0 < scores.sum() < 1  # [CLS]/[SEP] shares removed, not renormalised
    assert attention_scores(attn, "cls", layer=2, head=3).tolist() == pytest.approx(
        cls_row(w, 2, 3)[1:-1].tolist())
    assert attention_scores(attn, "mean", head_agg="max").tolist() == pytest.approx(
        mean_over_queries(w, -1, None, "max")[1:-1].tolist())


def test_results_serialise_for_dcc_store(minilm):
    import json

    attn = extract_attention(minilm, "fine")
    d = attn.to_dict()
    assert d["encoding"]["tokens"] == ["[CLS]", "fine", "[SEP]"]
    assert len(json.dumps(d)) > 0
