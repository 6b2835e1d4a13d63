"""Agreement between attention and an attribution, per layer and head (docs/methods.md, "Attention vs attribution").

The one implementation for tabular and text models: each head's per-token attention (non-negative)
is ranked against ``|attribution|`` with :func:`explainers.metrics.compare_ranks` (Spearman's ρ,
Kendall's τ-b, top-k overlap with ``k = min(5, ceil(0.2 n))`` unless given); sign is left out by
design, since attention cannot express direction (Jain & Wallace 2019; Wiegreffe & Pinter 2019).
:func:`compare_attention_attribution` takes either per-token attention (the tabular reading) or a
text model's :class:`explainers.text.TextAttention`, for which it picks the aggregate and the level
(word or token) and then calls the same :func:`head_agreement`.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from explainers.attention.aggregates import cls_row, mean_over_queries, to_level
from explainers.metrics import compare_ranks
from explainers.types import AgreementReport, Explanation

if TYPE_CHECKING:
    from explainers.text._types import TextAgreementReport, TextAttention

__all__ = ["head_agreement", "compare_attention_attribution"]


def head_agreement(per_token_attention: np.ndarray, attribution: np.ndarray,
                   k: int | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """Spearman ρ, Kendall τ-b and top-k overlap of every head's attention with ``|attribution|``.

    Parameters
    ----------
    per_token_attention : ndarray of shape (n_layers, n_heads, n_tokens)
    attribution : ndarray of shape (n_tokens,)
        Signed or not; ranked by magnitude.
    k : int, optional
        Top-k size; default :func:`explainers.metrics.default_k` ``(n_tokens)``.

    Returns
    -------
    spearman, kendall, top_k_overlap : ndarray of shape (n_layers, n_heads)
        ``nan`` correlations where a head's attention (or the attribution) is constant.
    k : int
        The top-k size used (clipped to ``n_tokens``).

    Raises
    ------
    ValueError
        If the token counts differ.
    """
    a = np.asarray(per_token_attention, dtype=float)
    target = np.abs(np.asarray(attribution, dtype=float).ravel())
    if a.ndim != 3 or a.shape[2] != target.size:
        raise ValueError(f"attention has shape {a.shape}; expected (n_layers, n_heads, {target.size})")
    L, H = a.shape[:2]
    rho, tau, top = (np.full((L, H), np.nan) for _ in range(3))
    used_k = k
    for layer in range(L):
        for head in range(H):
            r = compare_ranks(a[layer, head], target, k)
            rho[layer, head], tau[layer, head], top[layer, head], used_k = (
                r.spearman, r.kendall_tau_b, r.top_k_overlap, r.k)
    return rho, tau, top, used_k


def compare_attention_attribution(attention: np.ndarray | TextAttention, attribution: Explanation, *,
                                  aggregate: str = "cls", level: str = "word", k: int | None = None,
                                  query: str = "CLS row") -> AgreementReport | TextAgreementReport:
    """Rank agreement of each head's attention with one attribution (:func:`head_agreement`).

    Parameters
    ----------
    attention : ndarray of shape (n_layers, n_heads, n_tokens), or TextAttention
        Per-token attention aligned with ``attribution.values`` (the tabular reading,
        ``cls_row(weights, layer=None, head_agg=None)[..., 1:]``); or a text model's attention,
        read with ``aggregate`` at ``level``.
    attribution : Explanation
        For per-token attention, ``values`` of shape (n_tokens,). For text, from
        :mod:`explainers.text` on the same text and model (its ``params["token_values"]`` is used
        for ``level="token"``).
    aggregate : {"cls", "mean"}, default="cls"
        Text only: attention of the CLS query, or received attention averaged over queries.
    level : {"word", "token"}, default="word"
        Text only: words (pieces summed) or content tokens.
    k : int, optional
        Top-k size; default :func:`explainers.metrics.default_k` ``(n_tokens)``.
    query : str, default="CLS row"
        Per-token attention only: what the attention's query was, for the report.

    Returns
    -------
    AgreementReport, or TextAgreementReport for text
        ``per_head`` (Spearman ρ), ``kendall`` and ``top_k_overlap``, each of shape (n_layers, n_heads).

    Raises
    ------
    ValueError
        If the token counts differ, the explanation's words are not the attention's, or for an
        unknown ``aggregate``.
    """
    if getattr(attention, "encoding", None) is None:
        rho, tau, top, k = head_agreement(attention, attribution.values, k)
        return AgreementReport(per_head=rho, top_k_overlap=top, k=k, attribution_method=attribution.method,
                               query=query, kendall=tau)
    return _text_agreement(attention, attribution, aggregate, level, k)


def _text_agreement(attn: TextAttention, expl: Explanation, aggregate: str, level: str,
                    k: int | None) -> TextAgreementReport:
    from explainers.text._types import TextAgreementReport

    enc = attn.encoding
    if tuple(expl.feature_names) != enc.words:
        raise ValueError("explanation and attention were computed on different texts")
    if level == "word":
        attribution = np.abs(expl.values)
    else:
        attribution = np.abs(np.asarray(expl.params["token_values"], float)[enc.content_mask])
    w = attn.attention.weights
    if aggregate == "cls":
        per_token = cls_row(w, layer=None, head_agg=None)
    elif aggregate == "mean":
        per_token = mean_over_queries(w, layer=None, head_agg=None)
    else:
        raise ValueError(f"aggregate must be 'cls' or 'mean', got {aggregate!r}")
    scores = to_level(per_token, enc, level)  # (L, H, n)
    rho, tau, top, k = head_agreement(scores, attribution, k)
    return TextAgreementReport(
        per_head=rho, top_k_overlap=top, k=k, attribution_method=expl.method,
        query="CLS row" if aggregate == "cls" else "mean over queries",
        kendall=tau, aggregate=aggregate, level=level, n_items=scores.shape[-1])
