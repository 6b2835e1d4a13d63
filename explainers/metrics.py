"""Agreement and fidelity metrics between explanations (plain functions, as captum.metrics).

The one home of Candor's rank metrics, for tabular and text explanations alike (docs/methods.md,
"Agreement"): Spearman's ρ on average ranks, Kendall's τ-b (scipy's default), and top-k overlap and
Jaccard@k on ``|score|`` (which features matter, whatever their sign; a caller that wants signed
ranks must say so in its own name). :func:`compare_ranks` is the one report of all three, used for
explanation-vs-explanation and attention-vs-attribution agreement.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = [
    "spearman",
    "kendall_tau_b",
    "top_k",
    "default_k",
    "top_k_overlap",
    "jaccard_at_k",
    "sign_agreement",
    "agreement_rate",
    "RankAgreement",
    "compare_ranks",
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
    if not (np.isfinite(a).all() and np.isfinite(b).all()):
        from scipy import stats  # imported when first needed: 1.3 s of a server's start (issue 23)

        return float(stats.spearmanr(a, b).statistic)  # NaN and inf as scipy treats them
    ra, rb = _average_ranks(a), _average_ranks(b)  # Pearson's r of the ranks, as scipy.stats.spearmanr computes it
    ra -= ra.mean()
    rb -= rb.mean()
    return float(np.clip(ra @ rb / math.sqrt((ra @ ra) * (rb @ rb)), -1.0, 1.0))


def _average_ranks(x: np.ndarray) -> np.ndarray:
    """1-based ranks of ``x``, ties given their average rank (``scipy.stats.rankdata(x)``, in numpy alone: the
    Persuasive page ranks ~35 vectors a row, and scipy's general path cost about 1 ms each, issue 27)."""
    order = np.argsort(x, kind="mergesort")
    xs = x[order]
    starts = np.flatnonzero(np.r_[True, xs[1:] != xs[:-1]])
    counts = np.diff(np.r_[starts, x.size])
    ranks = np.empty(x.size)
    ranks[order] = np.repeat(starts + (counts + 1) / 2.0, counts)
    return ranks


def kendall_tau_b(a, b) -> float:
    """Kendall's τ-b (``scipy.stats.kendalltau`` default), ``nan`` if a vector is constant."""
    a, b = _pair(a, b)
    if np.ptp(a) == 0 or np.ptp(b) == 0:
        return float("nan")
    from scipy import stats

    return float(stats.kendalltau(a, b).statistic)


def top_k(scores, k: int) -> np.ndarray:
    """Indices of the ``k`` largest ``|scores|``, ties broken by lower index (docs/methods.md, "Persuasive layer").

    Returns
    -------
    idx : ndarray of int, shape (min(k, n),)
    """
    s = np.abs(np.asarray(scores, dtype=float).ravel())
    if k < 0:
        raise ValueError(f"k must be >= 0, got {k}")
    order = np.lexsort((np.arange(s.size), -s))
    return order[: min(k, s.size)]


def default_k(n: int) -> int:
    """``min(5, ceil(0.2 n))``, at least 1: the top-k size for ``n`` ranked items (DeYoung et al. 2020 use k = 5)."""
    return max(1, min(5, math.ceil(0.2 * n)))


def top_k_overlap(a, b, k: int) -> float:
    """``|Top_k(|a|) ∩ Top_k(|b|)| / k``, in [0, 1], on magnitudes (the sign of a score is ignored).

    Parameters
    ----------
    a, b : array-like of shape (n,)
    k : int >= 1
        Clipped to ``n``. Ties are broken by lower index (:func:`top_k`).

    Raises
    ------
    ValueError
        If the lengths differ, ``n < 2`` or ``k < 1``.
    """
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


@dataclass(frozen=True)
class RankAgreement:
    """Rank agreement between two score vectors over the same items (features, words, tokens).

    Parameters
    ----------
    spearman, kendall_tau_b : float
        On ``|score|`` ranks, in [-1, 1]; ``nan`` when a vector is constant or has fewer than 2 items.
    top_k_overlap, jaccard_at_k : float in [0, 1]
        On ``|score|``, ties broken by lower index.
    sign_agreement : float in [0, 1]
        Share of items with equal sign among those where both are non-zero; ``nan`` when not
        defined (no such item, or one side is attention, which has no sign).
    k : int
    methods : (str, str)
        What the two vectors are, e.g. ``("shap", "lime")``; empty strings when unnamed.
    """

    spearman: float
    kendall_tau_b: float
    top_k_overlap: float
    sign_agreement: float
    k: int
    methods: tuple[str, str] = ("", "")
    jaccard_at_k: float = float("nan")


def compare_ranks(a, b, k: int | None = None, *, signed: bool = False,
                  methods: tuple[str, str] = ("", "")) -> RankAgreement:
    """Spearman, Kendall τ-b, top-k overlap and Jaccard@k of ``|a|`` and ``|b|``.

    Parameters
    ----------
    a, b : array-like of shape (n,)
        Scores over the same items; only magnitudes are ranked.
    k : int, optional
        Top-k size, clipped to ``n``; default :func:`default_k` ``(n)``.
    signed : bool, default=False
        Also report :func:`sign_agreement` of the signed values (two attributions); otherwise it is ``nan``.
    methods : (str, str), optional

    Returns
    -------
    RankAgreement
        Correlations are ``nan`` for ``n < 2`` or a constant vector (no ranking to compare).

    Raises
    ------
    ValueError
        If the lengths differ, ``n == 0`` or ``k < 1``.
    """
    va, vb = np.asarray(a, dtype=float).ravel(), np.asarray(b, dtype=float).ravel()
    if va.shape != vb.shape or va.size == 0:
        raise ValueError(f"need two non-empty score vectors of equal length, got {va.size} and {vb.size}")
    k = default_k(va.size) if k is None else k
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    k = min(k, va.size)
    ma, mb = np.abs(va), np.abs(vb)
    if va.size < 2 or np.ptp(ma) == 0 or np.ptp(mb) == 0:
        rho = tau = float("nan")
    else:
        from scipy import stats

        rho = float(stats.spearmanr(ma, mb).statistic)
        tau = float(stats.kendalltau(ma, mb).statistic)
    ta, tb = set(top_k(ma, k).tolist()), set(top_k(mb, k).tolist())
    sign = sign_agreement(va, vb) if signed and va.size >= 2 else float("nan")
    return RankAgreement(rho, tau, len(ta & tb) / k, sign, k, tuple(methods), len(ta & tb) / len(ta | tb))


def rank_agreement(a, b, k: int = 5) -> RankAgreement:
    """Compare two :class:`~explainers.types.Explanation` objects of the same row.

    Ranks compare ``|values|`` (which features matter), sign agreement compares
    direction (:func:`compare_ranks` with ``signed=True``).

    Raises
    ------
    ValueError
        If the feature names differ.
    """
    if tuple(a.feature_names) != tuple(b.feature_names):
        raise ValueError("the two explanations cover different features")
    return compare_ranks(a.values, b.values, k, signed=True, methods=(a.method, b.method))
