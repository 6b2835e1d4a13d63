"""Agreement between a text model's attention and an attribution, per layer and head.

The text front end of :func:`explainers.compare.head_agreement` (the one implementation for
tabular and text): it chooses the attention aggregate (CLS row or mean over queries) and the level
(word, with pieces merged, or token), then ranks every head against ``|attribution|`` with
:func:`explainers.metrics.compare_ranks` (Spearman's rho, Kendall's tau-b, top-k overlap with
``k = min(5, ceil(0.2 n))``; docs/methods.md, "Attention vs attribution").
"""
from __future__ import annotations

import numpy as np

from explainers.compare import head_agreement
from explainers.text._attention import to_level
from explainers.text._types import TextAgreementReport, TextAttention
from explainers.types import Explanation

__all__ = ["compare_attention_attribution"]


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
        Top-k size; default :func:`explainers.metrics.default_k` ``(n)``.

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
    rho, tau, top, k = head_agreement(scores, attribution, k)
    return TextAgreementReport(
        per_head=rho, top_k_overlap=top, k=k, attribution_method=expl.method,
        query="CLS row" if aggregate == "cls" else "mean over queries",
        kendall=tau, aggregate=aggregate, level=level, n_items=scores.shape[-1])
