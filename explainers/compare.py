"""Agreement between attention and an attribution, per layer and head (docs/methods.md, "Attention vs attribution").

The one implementation for tabular and text models: each head's per-token attention (non-negative)
is ranked against ``|attribution|`` with :func:`explainers.metrics.compare_ranks` (Spearman's ρ,
Kendall's τ-b, top-k overlap); sign is left out by design, since attention cannot express direction
(Jain & Wallace 2019; Wiegreffe & Pinter 2019). :mod:`explainers.text` only chooses the aggregate and
the level (word or token) and then calls :func:`head_agreement`.
"""
from __future__ import annotations

import numpy as np

from .metrics import compare_ranks
from .types import AgreementReport, Explanation

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


def compare_attention_attribution(per_token_attention: np.ndarray, attribution: Explanation, *,
                                  k: int = 5, query: str = "CLS row") -> AgreementReport:
    """Rank agreement of each head's per-token attention with one attribution (:func:`head_agreement`).

    Parameters
    ----------
    per_token_attention : ndarray of shape (n_layers, n_heads, n_tokens)
        e.g. :func:`explainers.attention.cls_attention`.
    attribution : Explanation
        ``values`` of shape (n_tokens,), aligned with the attention's tokens.
    k : int, default=5
    query : str, default="CLS row"

    Returns
    -------
    AgreementReport
        ``per_head`` (Spearman ρ), ``kendall`` and ``top_k_overlap``, each of shape (n_layers, n_heads).

    Raises
    ------
    ValueError
        If the token counts differ.
    """
    rho, tau, top, k = head_agreement(per_token_attention, attribution.values, k)
    return AgreementReport(per_head=rho, top_k_overlap=top, k=k, attribution_method=attribution.method,
                           query=query, kendall=tau)
