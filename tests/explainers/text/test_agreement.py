"""Rank metrics (T14) and per-head agreement on MiniLM."""
import numpy as np
import pytest

import explainers.text
from explainers.metrics import compare_ranks, default_k
from explainers.attention.agreement import compare_attention_attribution
from explainers.attention.extract import extract_attention
from explainers.text import gradient_x_input


def test_t14_rank_metrics():
    m = compare_ranks([4, 3, 2, 1], [4, 2, 3, 1], k=2)
    assert m.spearman == pytest.approx(0.8)
    assert m.kendall_tau_b == pytest.approx(4 / 6)
    assert m.top_k_overlap == pytest.approx(0.5)
    assert m.jaccard_at_k == pytest.approx(1 / 3)
    same = compare_ranks([4, 3, 2, 1], [4, 3, 2, 1], k=2)
    assert (same.spearman, same.kendall_tau_b, same.top_k_overlap) == pytest.approx((1, 1, 1))
    rev = compare_ranks([4, 3, 2, 1], [1, 2, 3, 4])
    assert (rev.spearman, rev.kendall_tau_b) == pytest.approx((-1, -1))


def test_text_has_no_second_rank_metric():
    """One top_k_overlap (on |score|) for tabular and text: the text package no longer defines its own."""
    for name in ("top_k_overlap", "rank_metrics", "default_k"):
        assert not hasattr(explainers.text, name)


def test_default_k():
    assert [default_k(n) for n in (1, 4, 10, 30)] == [1, 1, 2, 5]


def test_per_head_agreement_on_minilm(minilm):
    text = "The plot was dull, the acting even worse."
    attn = extract_attention(minilm, text)
    expl = gradient_x_input(minilm, text)
    rep = compare_attention_attribution(attn, expl)
    assert rep.per_head.shape == rep.kendall.shape == rep.top_k_overlap.shape == (6, 12)
    assert rep.n_items == len(attn.encoding.words) and rep.k == default_k(rep.n_items)
    assert np.all(np.abs(rep.per_head) <= 1) and np.all((rep.top_k_overlap >= 0) & (rep.top_k_overlap <= 1))
    # the report's numbers are scipy's on the merged scores (an independent computation)
    from scipy import stats

    head, target = attn.attention.weights[5, 0, 0] @ _word_matrix(attn), np.abs(expl.values)
    assert rep.per_head[5, 0] == pytest.approx(stats.spearmanr(head, target).statistic)
    assert rep.kendall[5, 0] == pytest.approx(stats.kendalltau(head, target).statistic)
    tok = compare_attention_attribution(attn, expl, aggregate="mean", level="token")
    assert tok.n_items == attn.encoding.n_tokens - attn.encoding.n_special


def _word_matrix(attn):
    wi = attn.encoding.word_index
    m = np.zeros((wi.size, len(attn.encoding.words)))
    m[np.flatnonzero(wi >= 0), wi[wi >= 0]] = 1
    return m


def test_agreement_rejects_other_text(minilm):
    with pytest.raises(ValueError, match="different texts"):
        compare_attention_attribution(extract_attention(minilm, "good"), gradient_x_input(minilm, "bad film"))
