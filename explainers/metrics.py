"""Agreement and fidelity metrics between explanations (plain functions, as captum.metrics).

Definitions follow ``shared/METHODS.md`` §4.3: Spearman's ρ on average ranks,
Kendall's τ-b (scipy's default), top-k overlap and Jaccard@k on ``|score|``.
"""
from __future__ import annotations

import numpy as np
from scipy import stats

__all__ = [
    "spearman",
    "kendall_tau_b",
    "top_k",
    "top_k_overlap",
    "jaccard_at_k",
    "sign_agreement",
    "agreement_rate",
    "RankAgreement",
    "rank_agreement",
]


def _pair(a, b) -> tuple[np.ndarray, np.ndarray]:
    a, b = np.asarray(a, dtype=float).ravel(), np.asarray(b, dtype=float).ravel()
    if a.shape != b.shape:
        raise ValueError(f"score vectors differ in length: {a.size} vs {b.size}")
    if a.size < 2:
        raise ValueError(f"need at least 2 scores to rank, got {a.size}")
    return a, b


def spearman(a, b) -> float:
    """Spearman rank correlation (average ranks for ties).

    Parameters
    ----------
    a, b : array-like of shape (n,)

    Returns
    -------
    rho : float in [-1, 1]; ``nan`` if either vector is constant.

    Raises
    ------
    ValueError
        If the lengths differ or ``n < 2``.
    """
    a, b = _pair(a, b)
    if np.ptp(a) == 0 or np.ptp(b) == 0:
        return float("nan")
    return float(stats.spearmanr(a, b).statistic)


def kendall_tau_b(a, b) -> float:
    """Kendall's τ-b (``scipy.stats.kendalltau`` default), ``nan`` if a vector is constant."""
    a, b = _pair(a, b)
    if np.ptp(a) == 0 or np.ptp(b) == 0:
        return float("nan")
    return float(stats.kendalltau(a, b).statistic)


def top_k(scores, k: int) -> np.ndarray:
    """Indices of the ``k`` largest ``|scores|``, ties broken by lower index (METHODS §2.3).

    Returns
    -------
    idx : ndarray of int, shape (min(k, n),)
    """
    s = np.abs(np.asarray(scores, dtype=float).ravel())
    if k < 0:
        raise ValueError(f"k must be >= 0, got {k}")
    order = np.lexsort((np.arange(s.size), -s))
    return order[: min(k, s.size)]


def top_k_overlap(a, b, k: int) -> float:
    """``|Top_k(|a|) ∩ Top_k(|b|)| / k``, in [0, 1]."""
    a, b = _pair(a, b)
    if k <= 0:
        raise ValueError(f"k must be >= 1, got {k}")
    k = min(k, a.size)
    return len(set(top_k(a, k)) & set(top_k(b, k))) / k


def jaccard_at_k(a, b, k: int) -> float:
    """``|Top_k(a) ∩ Top_k(b)| / |Top_k(a) ∪ Top_k(b)|`` on ``|score|``."""
    a, b = _pair(a, b)
    ta, tb = set(top_k(a, k)), set(top_k(b, k))
    return len(ta & tb) / len(ta | tb)


def sign_agreement(a, b) -> float:
    """Share of entries with equal sign among those where both are non-zero (``nan`` if none)."""
    a, b = _pair(a, b)
    both = (a != 0) & (b != 0)
    if not both.any():
        return float("nan")
    return float(np.mean(np.sign(a[both]) == np.sign(b[both])))


def agreement_rate(y_surrogate, y_model) -> float:
    """Share of rows on which a surrogate's label equals the black box's label.

    Parameters
    ----------
    y_surrogate, y_model : array-like of shape (n_rows,)

    Returns
    -------
    agreement : float in [0, 1]

    Raises
    ------
    ValueError
        If the lengths differ or are zero.
    """
    s, m = np.asarray(y_surrogate), np.asarray(y_model)
    if s.shape != m.shape or s.size == 0:
        raise ValueError(f"need two label vectors of equal, non-zero length; got {s.shape} and {m.shape}")
    return float(np.mean(s == m))


from dataclasses import dataclass  # noqa: E402


@dataclass(frozen=True)
class RankAgreement:
    """Agreement between two attribution vectors over the same features.

    Parameters
    ----------
    spearman, kendall_tau_b : float
        On ``|attribution|`` ranks, in [-1, 1].
    top_k_overlap : float in [0, 1]
    sign_agreement : float in [0, 1]
    k : int
    methods : (str, str)
    """

    spearman: float
    kendall_tau_b: float
    top_k_overlap: float
    sign_agreement: float
    k: int
    methods: tuple[str, str]


def rank_agreement(a, b, k: int = 5) -> RankAgreement:
    """Compare two :class:`~explainers.types.Explanation` objects of the same row.

    Ranks compare ``|values|`` (which features matter), sign agreement compares
    direction. Raises ``ValueError`` if the feature names differ.
    """
    if tuple(a.feature_names) != tuple(b.feature_names):
        raise ValueError("the two explanations cover different features")
    va, vb = np.abs(a.values), np.abs(b.values)
    return RankAgreement(spearman(va, vb), kendall_tau_b(va, vb), top_k_overlap(va, vb, k),
                         sign_agreement(a.values, b.values), k, (a.method, b.method))
