"""Encoding records: truncation note, padding excluded, word merging."""
import numpy as np
import pytest

from explainers.attention.extract import extract_attention
from explainers.text import (
    MERGE_RULE,
    encode_batch,
    encode_text,
    integrated_gradients,
    merge_attention,
    merge_token_scores,
)


def test_truncation_is_reported_with_where(minilm):
    text = " ".join(f"w{i % 7} good" for i in range(200))  # "w3" is two pieces: w ##3
    enc = encode_text(minilm.tokenizer, text, minilm.max_length)
    assert enc.truncated and enc.n_tokens == minilm.max_length == 256
    assert enc.n_tokens_before_truncation > 256
    assert "truncated to 256 of" in enc.truncation_note and "first dropped word" in enc.truncation_note
    assert enc.tokens[-1] == "[SEP]" and enc.n_special == 2
    # 254 content pieces: 84 x (w, ##k, good) + "w", "##k" -> the last word kept whole is "w?"
    assert len(enc.words) == 169 and enc.words[-1] == "w0"
    assert "first dropped word #169 'good'" in enc.truncation_note
    assert "cut inside" not in enc.truncation_note
    cut = encode_text(minilm.tokenizer, "good " * 253 + "unbelievably", minilm.max_length)
    assert cut.truncated and "word #253 'unbelievably' was cut inside" in cut.truncation_note
    assert cut.words[-1] == "un" and "first dropped" not in cut.truncation_note
    short = encode_text(minilm.tokenizer, "short text", minilm.max_length)
    assert not short.truncated and short.truncation_note == ""


def test_truncated_text_still_explains(minilm):
    text = "good " * 300
    e = integrated_gradients(minilm, text, max_steps=50)
    assert e.params["truncated"] and len(e.feature_names) == 254


def test_padding_excluded_from_batches(minilm):
    encs, ids, mask = encode_batch(minilm.tokenizer, ["short", "a much longer sentence here"], 256)
    assert encs[0].n_padding == ids.shape[1] - encs[0].n_tokens > 0 and encs[1].n_padding == 0
    assert int(mask[0].sum()) == encs[0].n_tokens
    assert minilm.tokenizer.pad_token not in encs[0].tokens


def test_merge_rules():
    wi = np.array([-1, 0, 1, 1, -1])
    assert merge_token_scores(np.array([9, 1, 2, 3, 9.0]), wi, 2).tolist() == [1, 5]
    a = np.arange(25, dtype=float).reshape(5, 5)
    w = merge_attention(a, wi, 2)
    # to a word: sum of its piece columns; from a word: mean of its piece rows
    assert w[0].tolist() == [6.0, 7 + 8]
    assert w[1].tolist() == [(11 + 16) / 2, (12 + 13 + 17 + 18) / 2]
    assert "sum over its pieces" in MERGE_RULE


def test_split_words_input(minilm):
    attn = extract_attention(minilm, ["Unbelievably", "slow", "service", "."], is_split_into_words=True)
    assert attn.encoding.words == ("Unbelievably", "slow", "service", ".")
    assert attn.encoding.word_index.max() == 3


def test_empty_text_rejected(minilm):
    with pytest.raises(ValueError, match="empty"):
        encode_text(minilm.tokenizer, "   ", 256)
