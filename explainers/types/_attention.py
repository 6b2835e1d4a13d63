"""Attention results: a transformer's :class:`AttentionMap` for one input and the :class:`AgreementReport` of
each head's attention with one attribution."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ._arrays import _as_float_array


@dataclass(frozen=True)
class AttentionMap:
    """Attention weights of a transformer for one input.

    Parameters
    ----------
    tokens : tuple of str, length n_tokens
    weights : ndarray of shape (n_layers, n_heads, n_tokens, n_tokens)
        Row ``q`` of ``weights[l, h]`` is query ``q``'s distribution over keys;
        every row sums to 1. Layers and heads are 0-based.
    """

    tokens: tuple[str, ...]
    weights: np.ndarray

    def __post_init__(self) -> None:
        w = _as_float_array(self.weights, "weights", 4)
        t = len(self.tokens)
        if w.shape[2:] != (t, t):
            raise ValueError(f"weights shape {w.shape} does not match {t} tokens")
        object.__setattr__(self, "weights", w)
        object.__setattr__(self, "tokens", tuple(self.tokens))

    @property
    def n_layers(self) -> int:
        return self.weights.shape[0]

    @property
    def n_heads(self) -> int:
        return self.weights.shape[1]


@dataclass(frozen=True)
class AgreementReport:
    """Agreement between each head's attention and one attribution.

    Parameters
    ----------
    per_head : ndarray of shape (n_layers, n_heads)
        Spearman rank correlation between the head's attention (from the
        query position stated in ``query``) and ``|attribution|``.
    top_k_overlap : ndarray of shape (n_layers, n_heads)
        Share of the attribution's top-k tokens among the head's top-k.
    k : int
    attribution_method : str
    query : str
        Which attention row was compared, e.g. ``"CLS row"``.
    kendall : ndarray of shape (n_layers, n_heads)
        Kendall's τ-b (scipy's default) between the head's attention and ``|attribution|``;
        ``nan`` where a vector is constant.
    """

    per_head: np.ndarray
    top_k_overlap: np.ndarray
    k: int
    attribution_method: str
    query: str
    kendall: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))
