"""Per-token readings of an attention map, one name each: the CLS row, the mean over queries, rollout.

One implementation for the tabular and the text models (docs/methods.md, "Attention"): the CLS row
(what the classification position attends to), the attention each token receives averaged over
valid queries, either for one head or the mean / max over heads, and attention rollout (Abnar &
Zuidema 2020, arXiv 2005.00928). :func:`attention_scores` and :func:`to_level` are the text front end:
they drop special tokens and merge word pieces.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from explainers.text._types import TextAttention, TextEncoding

__all__ = ["cls_row", "mean_over_queries", "rollout", "attention_scores", "to_level"]


def rollout(weights: np.ndarray, add_residual: bool = True) -> np.ndarray:
    """Attention rollout of Abnar & Zuidema (2020, arXiv 2005.00928).

    ``A_hat(l) = rownorm(mean_h A(l,h) + I)`` and
    ``rollout = A_hat(L) @ A_hat(L-1) @ ... @ A_hat(1)``: later layers
    multiply on the left (docs/methods.md, "Attention", oracle T5).

    Parameters
    ----------
    weights : ndarray of shape (n_layers, n_heads, n_tokens, n_tokens)
        Layer 0 is the closest to the input; rows sum to 1.
    add_residual : bool, default=True
        Add the identity for the residual connection before renormalising.

    Returns
    -------
    ndarray of shape (n_tokens, n_tokens)
        Row ``q``: share of position ``q``'s final representation attributed
        to each input token; rows sum to 1.

    Raises
    ------
    ValueError
        If ``weights`` is not 4-D with square attention matrices.
    """
    w = np.asarray(weights, dtype=float)
    if w.ndim != 4 or w.shape[2] != w.shape[3]:
        raise ValueError(f"weights must have shape (n_layers, n_heads, T, T), got {w.shape}")
    eye = np.eye(w.shape[2])
    result = eye
    for layer in range(w.shape[0]):
        a = w[layer].mean(0)
        if add_residual:
            a = a + eye
        a = a / a.sum(-1, keepdims=True)
        result = a @ result
    return result


def _select(weights: np.ndarray, layer: int | None, head: int | None, head_agg: str | None) -> np.ndarray:
    """(n_layers, n_heads, T, T) -> (..., T, T): one layer or all, one head, the mean / max over heads, or all."""
    w = np.asarray(weights, dtype=float)
    if w.ndim != 4 or w.shape[2] != w.shape[3]:
        raise ValueError(f"weights must have shape (n_layers, n_heads, T, T), got {w.shape}")
    if layer is not None:
        w = w[layer]
    if head is not None:
        return w[..., head, :, :]
    if head_agg == "mean":
        return w.mean(-3)
    if head_agg == "max":
        return w.max(-3)
    if head_agg is None:
        return w
    raise ValueError(f"head_agg must be 'mean', 'max' or None, got {head_agg!r}")


def cls_row(weights: np.ndarray, layer: int | None = -1, head: int | None = None,
            head_agg: str | None = "mean", cls_index: int = 0) -> np.ndarray:
    """Attention of the classification position to every token (the CLS row, ``A[l, h, cls, :]``).

    Rows are not renormalised: the CLS token's attention to itself stays in (drop it with
    ``[..., 1:]`` for the tabular per-feature reading, or :func:`to_level` for text).

    Parameters
    ----------
    weights : ndarray of shape (n_layers, n_heads, n_tokens, n_tokens)
    layer : int or None, default=-1 (last layer)
        ``None`` keeps every layer.
    head : int or None, default=None
        One head, or ``head_agg`` over all heads (alpha-avg / alpha-max).
    head_agg : {"mean", "max", None}, default="mean"
        ``None`` (with ``head=None``) keeps every head.
    cls_index : int, default=0

    Returns
    -------
    ndarray of shape (n_tokens,)
        With ``layer=None`` a leading (n_layers,) axis, with ``head_agg=None`` an (n_heads,) axis
        before the tokens: ``cls_row(w, layer=None, head_agg=None)`` is ``w[:, :, cls_index, :]``.
    """
    return _select(weights, layer, head, head_agg)[..., cls_index, :]


def mean_over_queries(weights: np.ndarray, layer: int | None = -1, head: int | None = None,
                      head_agg: str | None = "mean", query_mask: np.ndarray | None = None) -> np.ndarray:
    """Attention received by each token, averaged over valid queries.

    Parameters
    ----------
    weights : ndarray of shape (n_layers, n_heads, n_tokens, n_tokens)
    layer, head, head_agg : as :func:`cls_row`
    query_mask : ndarray of bool, shape (n_tokens,), optional
        Queries to average over (default all; padding is never present).

    Returns
    -------
    ndarray of shape (n_tokens,)
        With the leading axes :func:`cls_row` describes for ``layer=None`` / ``head_agg=None``.
    """
    a = _select(weights, layer, head, head_agg)
    if query_mask is not None:
        a = a[..., np.asarray(query_mask, dtype=bool), :]
    return a.mean(-2)


def attention_scores(attn: TextAttention, aggregate: str = "cls", layer: int = -1,
                     head: int | None = None, head_agg: str = "mean", level: str = "word") -> np.ndarray:
    """Per-word (or per content token) attention, special tokens excluded.

    Parameters
    ----------
    attn : TextAttention
    aggregate : {"cls", "mean", "rollout"}, default="cls"
        CLS row, mean over queries, or the CLS row of the rollout (all layers;
        ``layer``/``head`` ignored).
    layer, head, head_agg : as :func:`cls_row`
    level : {"word", "token"}, default="word"
        ``"word"`` sums over each word's pieces (docs/methods.md, "Attention").

    Returns
    -------
    ndarray of shape (n_words,) or (n_content_tokens,)
        Raw (not renormalised) attention; divide by the sum for display.

    Raises
    ------
    ValueError
        For an unknown ``aggregate`` or ``level``.
    """
    w = attn.attention.weights
    if aggregate == "cls":
        scores = cls_row(w, layer, head, head_agg)
    elif aggregate == "mean":
        scores = mean_over_queries(w, layer, head, head_agg)
    elif aggregate == "rollout":
        scores = rollout(w)[0]
    else:
        raise ValueError(f"aggregate must be 'cls', 'mean' or 'rollout', got {aggregate!r}")
    return to_level(scores, attn.encoding, level)


def to_level(token_values: np.ndarray, enc: TextEncoding, level: str) -> np.ndarray:
    """Drop special tokens and, for ``level="word"``, sum pieces per word.

    Parameters
    ----------
    token_values : ndarray of shape (..., n_tokens)
    enc : explainers.text.TextEncoding
    level : {"word", "token"}

    Returns
    -------
    ndarray of shape (..., n_words) or (..., n_content_tokens)
    """
    from explainers.text._tokens import merge_token_scores

    if level == "word":
        return merge_token_scores(token_values, enc.word_index, len(enc.words))
    if level == "token":
        return np.asarray(token_values, dtype=float)[..., enc.content_mask]
    raise ValueError(f"level must be 'word' or 'token', got {level!r}")
