"""Attention extraction and per-token attention aggregates.

Aggregates (METHODS §4.1, §4.5): the CLS row, the mean over valid queries
(received attention), mean or max over heads, and attention rollout
(Abnar & Zuidema 2020, arXiv 2005.00928).
"""
from __future__ import annotations

import numpy as np
import torch

from explainers.text._model import TextClassifier
from explainers.text._tokens import encode_text, merge_token_scores
from explainers.text._types import TextAttention, TextEncoding
from explainers.types import AttentionMap

__all__ = [
    "extract_attention",
    "rollout",
    "cls_row",
    "mean_over_queries",
    "attention_scores",
]


def extract_attention(model: TextClassifier, text: str, is_split_into_words: bool = False) -> TextAttention:
    """Run the model once and return every layer's and head's attention.

    Parameters
    ----------
    model : TextClassifier
        Loaded with the eager attention implementation.
    text : str (or list of str with ``is_split_into_words``)
        Truncated to ``model.max_length`` tokens; the encoding says where.
    is_split_into_words : bool, default=False

    Returns
    -------
    TextAttention
        ``attention.weights`` of shape (n_layers, n_heads, n_tokens, n_tokens),
        special tokens included (no padding: one text, no batch); rows sum to 1.

    Raises
    ------
    ValueError
        If the text is empty.
    """
    enc = encode_text(model.tokenizer, text, model.max_length, is_split_into_words)
    ids = torch.tensor(np.array(enc.input_ids)).unsqueeze(0)
    with torch.no_grad():
        logits, atts = model(ids, torch.ones_like(ids), output_attentions=True)
    weights = torch.stack([a[0] for a in atts]).double().numpy()
    return TextAttention(
        attention=AttentionMap(tokens=enc.tokens, weights=weights), encoding=enc,
        logits=logits[0].double().numpy(), labels=model.labels,
        source=f"{model.name}; eager attention, {model.n_layers} layers x {model.n_heads} heads")


def rollout(weights: np.ndarray, add_residual: bool = True) -> np.ndarray:
    """Attention rollout of Abnar & Zuidema (2020, arXiv 2005.00928).

    ``A_hat(l) = rownorm(mean_h A(l,h) + I)`` and
    ``rollout = A_hat(L) @ A_hat(L-1) @ ... @ A_hat(1)``: later layers
    multiply on the left (METHODS §4.5, oracle T5).

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


def _heads(w: np.ndarray, head, head_agg: str) -> np.ndarray:
    """(n_heads, T, T) -> (T, T) for one head or the mean / max over heads."""
    if head is not None:
        return w[head]
    if head_agg == "mean":
        return w.mean(0)
    if head_agg == "max":
        return w.max(0)
    raise ValueError(f"head_agg must be 'mean' or 'max', got {head_agg!r}")


def cls_row(weights: np.ndarray, layer: int = -1, head: int | None = None,
            head_agg: str = "mean", cls_index: int = 0) -> np.ndarray:
    """Attention of the classification position to every token.

    Parameters
    ----------
    weights : ndarray of shape (n_layers, n_heads, n_tokens, n_tokens)
    layer : int, default=-1 (last layer)
    head : int or None, default=None
        One head, or ``head_agg`` over all heads (alpha-avg / alpha-max).
    head_agg : {"mean", "max"}, default="mean"
    cls_index : int, default=0

    Returns
    -------
    ndarray of shape (n_tokens,)
    """
    return _heads(np.asarray(weights, dtype=float)[layer], head, head_agg)[cls_index]


def mean_over_queries(weights: np.ndarray, layer: int = -1, head: int | None = None,
                      head_agg: str = "mean", query_mask: np.ndarray | None = None) -> np.ndarray:
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
    """
    a = _heads(np.asarray(weights, dtype=float)[layer], head, head_agg)
    if query_mask is not None:
        a = a[np.asarray(query_mask, dtype=bool)]
    return a.mean(0)


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
        ``"word"`` sums over each word's pieces (METHODS §4.1).

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
    """Drop special tokens and, for ``level="word"``, sum pieces per word."""
    if level == "word":
        return merge_token_scores(token_values, enc.word_index, len(enc.words))
    if level == "token":
        return np.asarray(token_values, dtype=float)[..., enc.content_mask]
    raise ValueError(f"level must be 'word' or 'token', got {level!r}")
