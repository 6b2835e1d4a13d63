"""LIME on the Lopardo et al. (2024) classifier: the paper's approximation, real LIME, held-out R².

Oracles, none of them the code under test:

* LIME's large-sample limit by enumeration: LIME 0.2.0.1 draws the number of removed words
  uniformly in 1..d, then which ones uniformly; weighs a mask with ``m`` kept words by
  ``sqrt(exp(-(100 (1 - sqrt(m/d)))^2 / 25^2))`` (cosine distance x 100, kernel width 25). The
  weighted least-squares fit over all 2^d masks with these probabilities x weights is what LIME
  converges to (its ridge penalty 1 is negligible against 1000 samples).
* Uniform attention (``W_q = 0``): the logit is then exactly linear in the masks,
  ``f(z) = (1/K) sum_i sum_t [z_t u_t + (1 - z_t) u^M_t] / (T + 1)`` (plus CLS), so LIME's limit is
  ``(1/K) sum_i (u_t - u^M_t) / (T + 1)`` in closed form.
* LIME's own sampler re-implemented in numpy (same ``RandomState`` calls), for the held-out R².
"""
import itertools
import math

import numpy as np
import pytest
import torch
from scipy import stats

from explainers.text._lopardo import LopardoClassifier, SimpleVocab, train_lopardo
from explainers.text._lopardo_lime import MASK_WORD, lime_approximation, lopardo_lime, lopardo_logits

POS = ["good", "great", "fun", "lovely", "superb"]
NEG = ["bad", "awful", "dull", "boring", "poor"]
FILLER = ["the", "film", "plot", "was", "a", "and", "with", "acting", "story", "it"]
TEXTS = ["the plot was good but the acting was dull", "a great film with a boring story",
         "awful acting and a lovely plot", "it was superb fun", "the story was poor"]


@pytest.fixture(scope="session")
def trained():
    """A model trained on a seeded synthetic corpus with the page's learning rate (about 3 s on one core)."""
    rng = np.random.default_rng(0)
    texts, labels = [], []
    for _ in range(200):
        y = int(rng.integers(2))
        words = [str(w) for w in rng.choice(FILLER, int(rng.integers(4, 9)))]
        for _ in range(int(rng.integers(1, 3))):
            words.insert(int(rng.integers(len(words) + 1)), str(rng.choice(POS if y else NEG)))
        if rng.random() < 0.3:
            words.insert(int(rng.integers(len(words) + 1)), str(rng.choice(NEG if y else POS)))
        texts.append(" ".join(words))
        labels.append(y)
    torch.set_num_threads(1)
    model, vocab, acc = train_lopardo(texts, labels, epochs=30, lr=1e-2, seed=0)
    assert acc > 0.95
    return model, vocab


def exact_lime(model, vocab, words, target):
    """LIME's large-sample limit: weighted least squares over every mask (module docstring)."""
    d = len(words)
    Z = np.array(list(itertools.product([0, 1], repeat=d)), dtype=float)
    kept = Z.sum(1)
    Z, kept = Z[kept < d], kept[kept < d]  # LIME removes at least one word
    prob = 1.0 / d / np.array([math.comb(d, int(d - m)) for m in kept])
    weight = prob * np.sqrt(np.exp(-(100 * (1 - np.sqrt(kept / d))) ** 2 / 25 ** 2))
    strings = [" ".join(w if z else MASK_WORD for w, z in zip(words, row)) for row in Z]
    y = lopardo_logits(model, vocab)(strings)[:, target]
    A = np.column_stack([np.ones(len(Z)), Z])
    Aw = A * weight[:, None]
    return np.linalg.solve(A.T @ Aw, Aw.T @ y)[1:]


def _predicted(model, vocab, text):
    with torch.no_grad():
        return int(model(vocab.encode([text], model.max_len)).argmax())


def test_approximation_is_three_halves_of_the_exact_limit_under_uniform_attention():
    """W_q = 0: the logit is linear in the masks, LIME's limit has a closed form; the paper's 3/2 scales it."""
    vocab = SimpleVocab(["good film was dull and long"])
    model = LopardoClassifier(len(vocab.itos), 2, d_e=8, d_att=4, d_out=4, n_heads=2, max_len=16,
                              dtype=torch.float64, seed=3)
    with torch.no_grad():
        model.W_q.zero_()
    text = "good film was dull and long"
    words = vocab.split(text)
    T, target = len(words), 1
    ids = vocab.encode([text], model.max_len)
    mask_ids = torch.tensor([[1] + [3] * T])
    closed = np.zeros(T)
    with torch.no_grad():
        e, e_mask = model.embed(ids)[0], model.embed(mask_ids)[0]
        for i in range(model.n_heads):
            w = model.W_l[i, target]
            u, u_mask = (e @ model.W_v[i].T) @ w, (e_mask @ model.W_v[i].T) @ w
            closed += ((u - u_mask)[1:] / (T + 1)).numpy() / model.n_heads
    limit = exact_lime(model, vocab, words, target)
    np.testing.assert_allclose(limit, closed, rtol=1e-9, atol=1e-12)  # the oracle is right
    np.testing.assert_allclose(lime_approximation(model, vocab, text, target), 1.5 * closed, rtol=1e-9, atol=1e-12)
    real = lopardo_lime(model, vocab, text, target, num_samples=2000, seed=0)
    np.testing.assert_allclose(real.values, closed, atol=0.02 * np.abs(closed).max())  # LIME itself converges


def test_approximation_tracks_real_lime_and_its_exact_limit(trained):
    """The approximation ignores how the softmax normaliser moves with the masks, so it is not exact
    (on a model trained on the UCI sentences its Pearson r with LIME has median 0.75, IQR 0.54-0.86,
    30 texts: ``benchmarks/audit_parts/lopardo.py``). On this corpus, where one or two sentiment words
    carry the logit, the five texts give 0.86-0.99; we ask a median of 0.9 and no text below 0.75.
    That separates the formula from its likely slips: the other class's output row gives r ≈ -0.94,
    attention alone 0.46, the value terms without α 0.88 (median); the MASK term is pinned exactly
    by the uniform-attention test above."""
    model, vocab = trained
    with_lime, with_limit = [], []
    for text in TEXTS:
        target = _predicted(model, vocab, text)
        approx = lime_approximation(model, vocab, text, target)
        real = lopardo_lime(model, vocab, text, target, num_samples=1000, seed=0)
        limit = exact_lime(model, vocab, vocab.split(text), target)
        assert stats.pearsonr(limit, real.values)[0] > 0.995  # sampled LIME is at its limit
        with_lime.append(stats.pearsonr(approx, real.values)[0])
        with_limit.append(stats.pearsonr(approx, limit)[0])
    assert np.median(with_lime) >= 0.9 and min(with_lime) >= 0.75, with_lime
    assert np.median(with_limit) >= 0.9 and min(with_limit) >= 0.75, with_limit


def test_bag_of_words_sums_the_occurrences(trained):
    model, vocab = trained
    text = "good film and a good plot"
    per_position = lime_approximation(model, vocab, text, 1)
    bow = lime_approximation(model, vocab, text, 1, bow=True)
    assert bow[0] == bow[4] == pytest.approx(per_position[0] + per_position[4])
    np.testing.assert_allclose(bow[[1, 2, 3, 5]], per_position[[1, 2, 3, 5]])


def test_heldout_r2_is_lime_sampler_in_numpy(trained):
    """Held-out R²: fresh masks drawn as LIME draws them (RandomState(seed + 1)), weighted R² by hand."""
    model, vocab = trained
    text, n, seed = TEXTS[0], 300, 4
    words = vocab.split(text)
    d, target = len(words), _predicted(model, vocab, text)
    got = lopardo_lime(model, vocab, text, target, num_samples=n, seed=seed)
    rs = np.random.RandomState(seed + 1)
    Z = np.ones((n, d))
    for i, size in enumerate(rs.randint(1, d + 1, n - 1), start=1):
        Z[i, rs.choice(range(d), size, replace=False)] = 0
    kept = Z.sum(1)
    dist = 100 * (1 - np.sqrt(kept / d))
    w = np.sqrt(np.exp(-dist ** 2 / 25 ** 2))
    y = lopardo_logits(model, vocab)([" ".join(wd if z else MASK_WORD for wd, z in zip(words, row))
                                      for row in Z])[:, target]
    y_hat = got.intercept + Z @ got.values
    mean = np.sum(w * y) / np.sum(w)
    expected = 1 - np.sum(w * (y - y_hat) ** 2) / np.sum(w * (y - mean) ** 2)
    assert got.heldout_r2 == pytest.approx(expected, abs=1e-9)
    assert expected < 0.999  # a real figure, not a constant
