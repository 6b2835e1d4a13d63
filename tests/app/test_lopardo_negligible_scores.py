"""The Lopardo card's gradient sentence is decided by words with non-negligible scores, not float noise.

Lopardo, Precioso, Garreau 2024, "Attention Meets Post-hoc Interpretability: A Mathematical
Perspective", ICML, arXiv 2402.03485: a word's gradient is its attention weight times a vector, so
where attention is numerically zero both scores are float noise. The expected values are computed
here with scipy on the words chosen by hand; no model is trained.
"""
from types import SimpleNamespace

import numpy as np
import pytest
from scipy import stats

from app.services.text_lopardo_view import NEGLIGIBLE, LopardoView, card_sentences, rank_agreement

# three attended words in agreement, then 14 near-zero words (82 %, as measured) whose noise runs the other way
ALPHA = np.array([0.6, 0.3, 0.1] + [1e-7 * (k + 1) for k in range(14)])
GRAD = np.array([2.0, 1.0, 0.4] + [1e-6 * (14 - k) for k in range(14)])


def test_noise_among_near_zero_scores_no_longer_flips_rho():
    plain = stats.spearmanr(ALPHA, GRAD)[0]
    assert plain < 0  # the old reading: 14 noisy words outvote three clear ones
    rho, n = rank_agreement(ALPHA, GRAD)
    assert n == 3 and rho == pytest.approx(stats.spearmanr(ALPHA[:3], GRAD[:3])[0]) and rho == pytest.approx(1.0)


def test_a_word_only_one_score_ignores_stays_tied_at_the_bottom():
    """A gradient on an unattended word counts against agreement; the attention there is a tie at 0."""
    grad = GRAD.copy()
    grad[5] = 3.0  # a large gradient where attention is noise
    rho, n = rank_agreement(ALPHA, grad)
    a = np.array([0.6, 0.3, 0.1, 0.0])
    g = np.array([2.0, 1.0, 0.4, 3.0])
    assert n == 4 and rho == pytest.approx(stats.spearmanr(a, g)[0])


def test_threshold_is_relative_to_each_scores_largest_value():
    a = np.array([1.0, 2e-4, 5e-5, 0.5])
    rho, n = rank_agreement(a * 1e-3, a)  # same order at any scale
    assert n == 3 and rho == pytest.approx(1.0)
    assert np.isnan(rank_agreement(np.zeros(4), a)[0])
    assert np.isnan(rank_agreement(np.array([1.0, 1e-9]), np.array([1.0, 1e-9]))[0])  # one word left


def _view(alpha, grad):
    rho = {k: rank_agreement(alpha, grad) for k in ("G-L1", "G-L2")}
    n = len(alpha)
    scores = {"α-avg": alpha, "G-L1": grad, "G-L2": grad, "LIME": np.zeros(n), "G×I": grad}
    return LopardoView(tuple(f"w{k}" for k in range(n)), scores, {k: v[0] for k, v in rho.items()},
                       {k: v[1] for k, v in rho.items()}, np.zeros((1, n + 1)), np.array([0.4, 0.6]), 1, 0.0,
                       SimpleNamespace(labels=("neg", "pos")), False,
                       {"score": 0.5, "heldout_r2": 0.4, "num_samples": 500}, float("nan"))


def test_card_says_like_and_how_many_words_entered():
    first = card_sentences(_view(ALPHA, GRAD))[0]
    assert "order the words like attention" in first
    assert f"over the 3 of 17 words where either score is at least {NEGLIGIBLE:g} of its largest" in first
    assert "G-L1 1.00, G-L2 1.00" in first
