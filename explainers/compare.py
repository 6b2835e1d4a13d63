"""Agreement between attention and attributions, per layer and head (``shared/METHODS.md`` §4.3).

Attention is non-negative and cannot express direction, so heads are compared
with ``|attribution|`` (Spearman ρ and top-k overlap); sign is left out by design.
"""
from __future__ import annotations

import numpy as np

from .metrics import spearman, top_k_overlap
from .types import AgreementReport, Explanation

__all__ = ["compare_attention_attribution"]


def compare_attention_attribution(per_token_attention: np.ndarray, attribution: Explanation, *,
                                  k: int = 5, query: str = "CLS row") -> AgreementReport:
    """Rank agreement of each head's per-token attention with one attribution.

    Parameters
    ----------
    per_token_attention : ndarray of shape (n_layers, n_heads, n_tokens)
        e.g. :func:`explainers.attention.cls_attention`.
    attribution : Explanation
        ``values`` of shape (n_tokens,), aligned with the attention's tokens.
    k : int, default=5

    Returns
    -------
    AgreementReport
        ``per_head`` Spearman ρ between attention and ``|attribution|`` and
        ``top_k_overlap``, both of shape (n_layers, n_heads).

    Raises
    ------
    ValueError
        If the token counts differ.
    """
    a = np.asarray(per_token_attention, dtype=float)
    target = np.abs(attribution.values)
    if a.ndim != 3 or a.shape[2] != target.size:
        raise ValueError(f"attention has shape {a.shape}; expected (n_layers, n_heads, {target.size})")
    rho = np.array([[spearman(a[l, h], target) for h in range(a.shape[1])] for l in range(a.shape[0])])
    overlap = np.array([[top_k_overlap(a[l, h], target, k) for h in range(a.shape[1])] for l in range(a.shape[0])])
    return AgreementReport(per_head=rho, top_k_overlap=overlap, k=k,
                           attribution_method=attribution.method, query=query)
