"""Text LIME and text SHAP say how sure they are (issue 13; docs/methods.md, "LIME", "SHAP").

Oracles, none through Candor's wrappers: lime 0.2.0.1's ``LimeTextExplainer`` run directly with
seeds (the spread of independent fits); Shapley values of the words by brute-force enumeration of
every coalition (``itertools``, Shapley's formula) and shap's own ``PermutationExplainer`` run with
independent seeds (the spread of independent estimates). The value function is written here: a word
outside the coalition has its pieces replaced by the pad token, special tokens kept.
"""
from itertools import combinations
from math import factorial

import numpy as np
import pytest
import shap
import torch
from lime.lime_text import LimeTextExplainer

from explainers.text import lime_text, shap_text
from explainers.text._tokens import encode_text

TEXT = "Terrible battery, great screen."


def _proba(model):
    def f(texts):
        b = model.tokenizer(list(texts), padding=True, truncation=True, max_length=model.max_length,
                            return_tensors="pt")
        with torch.no_grad():
            return torch.softmax(model(b["input_ids"], b["attention_mask"])[0], -1).double().numpy()
    return f


def _direct_lime(model, words, target, seeds, n) -> np.ndarray:
    """lime's own weights per word for each seed, shape (len(seeds), n_words)."""
    out = []
    for s in seeds:
        exp = LimeTextExplainer(class_names=list(model.labels), split_expression=lambda _s: words, bow=False,
                                mask_string=model.tokenizer.pad_token, random_state=s).explain_instance(
            TEXT, _proba(model), labels=(target,), num_features=len(words), num_samples=n)
        w = np.zeros(len(words))
        for j, v in exp.as_map()[target]:
            w[j] = v
        out.append(w)
    return np.array(out)


def test_text_lime_is_the_mean_and_spread_of_independent_lime_fits(tiny_bert):
    e = lime_text(tiny_bert, TEXT, num_samples=100, max_samples=100, repeats=4, seed=0)
    words, target = list(e.feature_names), tiny_bert.labels.index(e.target)
    direct = _direct_lime(tiny_bert, words, target, range(4), 100)
    np.testing.assert_allclose(e.values, direct.mean(axis=0), rtol=0, atol=1e-6)
    se = np.asarray(e.params["standard_error"])
    np.testing.assert_allclose(se, direct.std(axis=0, ddof=1) / 2, rtol=0, atol=1e-6)
    assert e.params["repeats"] == 4 and e.params["num_samples"] == 100 and e.params["total_samples"] == 400
    assert isinstance(e.params["converged"], bool) and se.max() > 0


def test_text_lime_standard_error_matches_the_spread_over_many_independent_seeds(tiny_bert):
    e = lime_text(tiny_bert, TEXT, num_samples=100, max_samples=100, repeats=4, seed=0)
    words, target = list(e.feature_names), tiny_bert.labels.index(e.target)
    empirical = _direct_lime(tiny_bert, words, target, range(100, 130), 100).std(axis=0, ddof=1) / 2
    se = np.asarray(e.params["standard_error"])
    ratio = np.sqrt(np.mean(se ** 2) / np.mean(empirical ** 2))
    assert 0.6 < ratio < 1.6, ratio


def test_text_lime_doubles_until_the_stated_tolerance(tiny_bert):
    """The stopping size recomputed with lime directly: the first n in 25, 50, ... with max SE <= 5 % of max |mean|."""
    e = lime_text(tiny_bert, TEXT, num_samples=25, max_samples=1600, repeats=4, seed=0, time_budget_s=600)
    words, target = list(e.feature_names), tiny_bert.labels.index(e.target)
    n, expected = 25, None
    while n <= 1600:
        fits = _direct_lime(tiny_bert, words, target, range(4), n)
        if (fits.std(axis=0, ddof=1) / 2).max() <= 0.05 * np.abs(fits.mean(axis=0)).max():
            expected = n
            break
        n *= 2
    assert expected is not None and expected > 25
    assert e.params["num_samples"] == expected and e.params["converged"] is True


def _word_value_fn(model, target):
    """g(mask over words) = log-odds of ``target`` with the removed words' pieces set to the pad token."""
    enc = encode_text(model.tokenizer, TEXT, model.max_length, False)
    ids, wi = np.array(enc.input_ids), np.array(enc.word_index)

    def g(Z):
        Z = np.atleast_2d(np.asarray(Z, dtype=float))
        rows = np.repeat(ids[None], len(Z), 0)
        for i, z in enumerate(Z):
            gone = [t for t in range(len(ids)) if wi[t] >= 0 and z[wi[t]] < 0.5]
            rows[i, gone] = model.tokenizer.pad_token_id
        b = torch.tensor(rows)
        with torch.no_grad():
            logits = model(b, torch.ones_like(b))[0].double()
        return (logits[:, target] - logits[:, 1 - target]).numpy()  # two classes: log-odds
    return g, len(enc.words)


def test_text_shap_values_are_the_words_shapley_values_within_their_standard_errors(tiny_bert):
    e = shap_text(tiny_bert, TEXT, max_evals=400, rel_tol=1e-9)
    g, d = _word_value_fn(tiny_bert, tiny_bert.labels.index(e.target))
    v = {S: float(g(np.isin(np.arange(d), S).astype(float))[0]) for k in range(d + 1) for S in combinations(range(d), k)}
    exact = np.zeros(d)
    for j in range(d):
        for S, val in v.items():
            if j not in S:
                w = factorial(len(S)) * factorial(d - len(S) - 1) / factorial(d)
                exact[j] += w * (v[tuple(sorted(S + (j,)))] - val)
    se = np.asarray(e.params["standard_error"])
    assert se.shape == (d,) and (se > 0).all() and e.params["converged"] is False
    z = np.abs(e.values - exact) / se
    assert z.max() < 4, z
    assert e.base_value == pytest.approx(v[()], abs=1e-9) and e.prediction == pytest.approx(v[tuple(range(d))], abs=1e-9)


def test_text_shap_standard_error_matches_the_spread_of_shap_permutation_runs(tiny_bert):
    """32 orderings (16 antithetic pairs); shap's PermutationExplainer with 16 permutations (each walked
    forward and back) over 30 seeds gives the spread one such estimate has."""
    e = shap_text(tiny_bert, TEXT, max_evals=32 * 5, rel_tol=1e-9)  # 6 words: 5 evaluations per ordering
    assert e.params["orderings"] == 32
    g, d = _word_value_fn(tiny_bert, tiny_bert.labels.index(e.target))
    runs = []
    for s in range(30):
        ex = shap.PermutationExplainer(g, shap.maskers.Independent(np.zeros((1, d))), seed=s)
        runs.append(ex(np.ones((1, d)), max_evals=16 * (2 * d + 1), silent=True).values[0])
    empirical = np.array(runs).std(axis=0, ddof=1)
    se = np.asarray(e.params["standard_error"])
    ratio = np.sqrt(np.mean(se ** 2) / np.mean(empirical ** 2))
    assert 0.6 < ratio < 1.6, ratio
