"""Reading a model's attention: the tabular and the text front end, one map each.

Both return every layer's and head's softmax attention as an :class:`explainers.types.AttentionMap`
(the text one inside a :class:`explainers.text.TextAttention` with its encoding). The per-token
readings of those weights (CLS row, mean over queries, rollout) are in
:mod:`explainers.attention.aggregates` (docs/methods.md, "Attention").

The sample tabular model (``sample_models/tabular_transformer.py``) computes explicit softmax
attention, so the weights returned are exactly those it uses; text models are loaded with the eager
attention implementation for the same reason.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import torch

from explainers.text._tokens import encode_text
from explainers.text._types import TextAttention
from explainers.types import AttentionMap

if TYPE_CHECKING:
    from explainers.text._model import TextClassifier

__all__ = ["tabular_attention", "extract_attention"]


def tabular_attention(model: torch.nn.Module, x, feature_names) -> AttentionMap:
    """Attention of every layer and head of a tabular transformer for one row.

    Parameters
    ----------
    model : nn.Module
        ``model(x, return_attention=True)`` returns ``(logits, attn)`` with attn of
        shape (batch, n_layers, n_heads, n_tokens, n_tokens).
    x : array-like of shape (n_features,)
    feature_names : sequence of str

    Returns
    -------
    AttentionMap
        Tokens ``("[CLS]", *feature_names)``; weights of shape
        (n_layers, n_heads, n_features + 1, n_features + 1). The per-feature reading is
        ``cls_row(weights, layer=None, head_agg=None)[..., 1:]``
        (:func:`explainers.attention.aggregates.cls_row`).
    """
    xt = torch.as_tensor(np.asarray(x, dtype=np.float32)).reshape(1, -1)
    with torch.no_grad():
        _, attn = model(xt, return_attention=True)
    return AttentionMap(tokens=("[CLS]", *map(str, feature_names)), weights=attn[0].numpy().astype(float))


def extract_attention(model: TextClassifier, text: str, is_split_into_words: bool = False) -> TextAttention:
    """Run a text classifier once and return every layer's and head's attention.

    Parameters
    ----------
    model : explainers.text.TextClassifier
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
