"""METHODS §7 T14 rank metrics, and the agreement rate."""
import math

import numpy as np
import pytest

from explainers import metrics


def test_t14_rank_metrics():
    a, b = [4, 3, 2, 1], [4, 2, 3, 1]
    assert metrics.spearman(a, b) == pytest.approx(0.8, abs=1e-9)
    assert metrics.kendall_tau_b(a, b) == pytest.approx(4 / 6, abs=1e-9)
    assert metrics.top_k_overlap(a, b, 2) == pytest.approx(0.5)
    assert metrics.jaccard_at_k(a, b, 2) == pytest.approx(1 / 3)


def test_t14_self_and_reversed():
    a = np.array([4.0, 3, 2, 1])
    assert metrics.spearman(a, a) == pytest.approx(1.0)
    assert metrics.kendall_tau_b(a, a) == pytest.approx(1.0)
    assert metrics.top_k_overlap(a, a, 3) == 1.0
    assert metrics.spearman(a, a[::-1]) == pytest.approx(-1.0)
    assert metrics.kendall_tau_b(a, a[::-1]) == pytest.approx(-1.0)


def test_top_k_breaks_ties_by_index_and_uses_magnitude():
    assert list(metrics.top_k([1.0, -3.0, 3.0, 0.5], 2)) == [1, 2]


def test_constant_vector_has_no_rank_correlation():
    assert math.isnan(metrics.spearman([1, 1, 1], [1, 2, 3]))


def test_sign_agreement_ignores_zeros():
    assert metrics.sign_agreement([1, -1, 0, 2], [1, 1, 5, 0]) == pytest.approx(0.5)


def test_agreement_rate_and_errors():
    assert metrics.agreement_rate([0, 1, 1, 0], [0, 1, 0, 0]) == pytest.approx(0.75)
    with pytest.raises(ValueError, match="equal"):
        metrics.agreement_rate([0, 1], [0, 1, 1])
    with pytest.raises(ValueError, match="differ in length"):
        metrics.spearman([1, 2], [1, 2, 3])
