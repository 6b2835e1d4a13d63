"""Text SHAP on a typed 13-word sentence (issue 23: "Run LIME and SHAP" failed with "need at least one array
to stack" when the budget, ``max_evals // 12`` orderings, was odd and the tolerance was not reached).

Oracle: the words' Shapley values by brute force over all 2^13 coalitions (itertools, Shapley's formula),
with the value function written here as in :mod:`tests.explainers.text.test_text_uncertainty`: a word outside
the coalition has its pieces replaced by the pad token, special tokens kept; log-odds of the target.
"""
from itertools import combinations
from math import factorial

import numpy as np
import pytest
import torch

from explainers.text import shap_text
from explainers.text._tokens import encode_text

SENTENCE = "The battery died after two days but the screen is bright and sharp"  # 13 words


def _word_value_fn(model, target, text):
    """g(mask over words) = log-odds of ``target`` with the removed words' pieces set to the pad token."""
    enc = encode_text(model.tokenizer, text, model.max_length, False)
    ids, wi = np.array(enc.input_ids), np.array(enc.word_index)

    def g(Z):
        rows = np.repeat(ids[None], len(Z), 0)
        gone = (wi[None, :] >= 0) & (np.asarray(Z)[:, np.maximum(wi, 0)] < 0.5)
        rows[gone] = model.tokenizer.pad_token_id
        b = torch.tensor(rows)
        with torch.no_grad():
            logits = model(b, torch.ones_like(b))[0].double()
        return (logits[:, target] - logits[:, 1 - target]).numpy()
    return g, len(enc.words)


@pytest.mark.parametrize("max_evals, walked", [(500, 40), (1000, 82)])  # 41 and 83 orderings: odd budgets
def test_a_thirteen_word_sentence_on_an_odd_budget_gives_its_words_shapley_values(tiny_bert, max_evals, walked):
    e = shap_text(tiny_bert, SENTENCE, max_evals=max_evals, rel_tol=1e-9)
    g, d = _word_value_fn(tiny_bert, tiny_bert.labels.index(e.target), SENTENCE)
    assert d == 13 and e.params["orderings"] == walked and e.params["converged"] is False
    subsets = [S for k in range(d + 1) for S in combinations(range(d), k)]
    masks = np.array([np.isin(np.arange(d), S) for S in subsets], dtype=float)
    v = dict(zip(subsets, np.concatenate([g(masks[i:i + 1024]) for i in range(0, len(masks), 1024)])))
    exact = np.zeros(d)
    for S, val in v.items():
        for j in set(range(d)) - set(S):
            w = factorial(len(S)) * factorial(d - len(S) - 1) / factorial(d)
            exact[j] += w * (v[tuple(sorted(S + (j,)))] - val)
    se = np.asarray(e.params["standard_error"])
    assert np.isfinite(se).all() and (se > 0).all()
    assert (np.abs(e.values - exact) <= 4 * se).all()
    assert e.base_value + e.values.sum() == pytest.approx(e.prediction, abs=1e-9)
