"""Agreement between attention and an attribution, per layer and head.

Metrics of METHODS §4.3: Spearman's rho (average ranks for ties), Kendall's
tau-b (scipy default) and top-k overlap with ``k = min(5, ceil(0.2 n))``.
Attention is non-negative, so the attribution is compared by ``|value|``.
"""
from __future__ import annotations

import math

import numpy as np
from scipy import stats

from explainers.text._attention import to_level
from explainers.text._types import TextAgreementReport, TextAttention
from explainers.types import Explanation

__all__ = ["default_k", "top_k_overlap", "rank_metrics", "compare_attention_attribution"]


def default_k(n: int) -> int:
    """``min(5, ceil(0.2 n))``, at least 1 (METHODS §4.3 [D])."""
    return max(1, min(5, math.ceil(0.2 * n)))


def _top_k(v: np.ndarray, k: int) -> set:
    order = np.lexsort((np.arange(v.size), -v))  # ties -> lower index
    return set(order[:k].tolist())


def top_k_overlap(a: np.ndarray, b: np.ndarray, k: int) -> float:
    """``|Top_k(a) & Top_k(b)| / k``; ties broken by lower index.

    Parameters
    ----------
    a, b : ndarray of shape (n,)
    k : int, 1 <= k <= n

    Raises
    ------
    ValueError
        If the shapes differ or ``k`` is out of range.
    """
    a, b = np.asarray(a, float), np.asarray(b, float)
    if a.shape != b.shape or not 1 <= k <= a.size:
        raise ValueError(f"need equal shapes and 1 <= k <= n, got {a.shape}, {b.shape}, k={k}")
    return len(_top_k(a, k) & _top_k(b, k)) / k


def rank_metrics(a: np.ndarray, b: np.ndarray, k: int | None = None) -> dict:
    """Spearman, Kendall tau-b and top-k overlap of two score vectors.

    Returns
    -------
    dict
        ``spearman``, ``kendall`` (NaN when a vector is constant or n < 2),
        ``top_k_overlap``, ``jaccard`` (Jaccard@k), ``k``.
    """
    a, b = np.asarray(a, float), np.asarray(b, float)
    k = default_k(a.size) if k is None else k
    if a.size < 2 or np.ptp(a) == 0 or np.ptp(b) == 0:
        rho = tau = float("nan")
    else:
        rho = float(stats.spearmanr(a, b).statistic)
        tau = float(stats.kendalltau(a, b).statistic)
    top_a, top_b = _top_k(a, k), _top_k(b, k)
    return dict(spearman=rho, kendall=tau, top_k_overlap=len(top_a & top_b) / k,
                jaccard=len(top_a & top_b) / len(top_a | top_b), k=k)


def compare_attention_attribution(
    attn: TextAttention,
    expl: Explanation,
    aggregate: str = "cls",
    level: str = "word",
    k: int | None = None,
) -> TextAgreementReport:
    """Agreement of every head's attention with ``|attribution|``.

    Parameters
    ----------
    attn : TextAttention
    expl : Explanation
        From :mod:`explainers.text` on the same text and model (its
        ``params["token_values"]`` is used for ``level="token"``).
    aggregate : {"cls", "mean"}, default="cls"
        Attention of the CLS query, or received attention averaged over queries.
    level : {"word", "token"}, default="word"
    k : int, optional
        Top-k size; default ``min(5, ceil(0.2 n))``.

    Returns
    -------
    TextAgreementReport
        ``per_head`` (Spearman), ``kendall``, ``top_k_overlap``, each of shape
        (n_layers, n_heads).

    Raises
    ------
    ValueError
        If the explanation's words do not match the attention's.
    """
    enc = attn.encoding
    if tuple(expl.feature_names) != enc.words:
        raise ValueError("explanation and attention were computed on different texts")
    if level == "word":
        attribution = np.abs(expl.values)
    else:
        attribution = np.abs(np.asarray(expl.params["token_values"], float)[enc.content_mask])
    w = attn.attention.weights
    if aggregate == "cls":
        per_token = w[:, :, 0, :]
    elif aggregate == "mean":
        per_token = w.mean(2)
    else:
        raise ValueError(f"aggregate must be 'cls' or 'mean', got {aggregate!r}")
    scores = to_level(per_token, enc, level)  # (L, H, n)
    n = scores.shape[-1]
    k = default_k(n) if k is None else k
    L, H = scores.shape[:2]
    rho, tau, top = (np.full((L, H), np.nan) for _ in range(3))
    for layer in range(L):
        for head in range(H):
            m = rank_metrics(scores[layer, head], attribution, k)
            rho[layer, head], tau[layer, head] = m["spearman"], m["kendall"]
            top[layer, head] = m["top_k_overlap"]
    return TextAgreementReport(
        per_head=rho, top_k_overlap=top, k=k, attribution_method=expl.method,
        query="CLS row" if aggregate == "cls" else "mean over queries",
        kendall=tau, aggregate=aggregate, level=level, n_items=n)
