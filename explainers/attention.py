"""Attention maps of the tabular transformer and their per-feature reading.

The sample model (``sample_models/tabular_transformer.py``) computes explicit
softmax attention, so the weights returned are exactly those it uses. The
per-token reading is the CLS row, ``A[l, h, 0, 1:]`` (``shared/METHODS.md`` §4.1).
"""
from __future__ import annotations

import numpy as np
import torch

from .types import AttentionMap

__all__ = ["tabular_attention", "cls_attention"]


def tabular_attention(model: torch.nn.Module, x, feature_names) -> AttentionMap:
    """Attention of every layer and head for one row.

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
        (n_layers, n_heads, n_features + 1, n_features + 1).

    Raises
    ------
    ValueError
        If the model's attention does not have one token per feature plus CLS.
    """
    xt = torch.as_tensor(np.asarray(x, dtype=np.float32)).reshape(1, -1)
    with torch.no_grad():
        _, attn = model(xt, return_attention=True)
    return AttentionMap(tokens=("[CLS]", *map(str, feature_names)), weights=attn[0].numpy().astype(float))


def cls_attention(attention: AttentionMap) -> np.ndarray:
    """CLS-to-feature attention, shape (n_layers, n_heads, n_tokens - 1).

    Rows are not renormalised: the CLS token's attention to itself is left out,
    so each row sums to ``1 - A[l, h, 0, 0]``.
    """
    return attention.weights[:, :, 0, 1:]
