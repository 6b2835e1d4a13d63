"""A small transformer over tabular features: one token per feature plus a CLS token.

Each feature value is standardised with buffers stored in the model, then
embedded as ``z_j * W[j] + B[j]`` (a per-feature linear embedding, as in the
FT-Transformer of Gorishniy et al. 2021, arXiv 2106.11959). A learned CLS
token is prepended; ``n_layers`` pre-LayerNorm encoder blocks with explicit
softmax attention follow, so the attention weights are exactly the ones the
model uses. The classifier reads the CLS token.

This module is the trusted model class for the bundled sample; weights are
stored with safetensors and loaded with :func:`load_tabular_transformer`.
"""
from __future__ import annotations

import json
import math
from pathlib import Path

import torch
from torch import nn


class SelfAttention(nn.Module):
    """Multi-head self-attention that also returns its weights.

    Returns ``(out, attn)`` with ``attn`` of shape (batch, n_heads, n_tokens, n_tokens),
    rows summing to 1.
    """

    def __init__(self, d_model: int, n_heads: int) -> None:
        super().__init__()
        if d_model % n_heads:
            raise ValueError(f"d_model={d_model} is not divisible by n_heads={n_heads}")
        self.n_heads, self.d_head = n_heads, d_model // n_heads
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.out = nn.Linear(d_model, d_model)

    def forward(self, h: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        b, t, _ = h.shape
        q, k, v = self.qkv(h).view(b, t, 3, self.n_heads, self.d_head).permute(2, 0, 3, 1, 4)
        attn = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(self.d_head), dim=-1)
        ctx = (attn @ v).transpose(1, 2).reshape(b, t, -1)
        return self.out(ctx), attn


class EncoderBlock(nn.Module):
    """Pre-LayerNorm transformer block: attention then a GELU feed-forward, both residual."""

    def __init__(self, d_model: int, n_heads: int, dropout: float) -> None:
        super().__init__()
        self.norm1, self.norm2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)
        self.attn = SelfAttention(d_model, n_heads)
        self.ff = nn.Sequential(nn.Linear(d_model, 2 * d_model), nn.GELU(), nn.Linear(2 * d_model, d_model))
        self.drop = nn.Dropout(dropout)

    def forward(self, h: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        a, attn = self.attn(self.norm1(h))
        h = h + self.drop(a)
        h = h + self.drop(self.ff(self.norm2(h)))
        return h, attn


class TabularTransformer(nn.Module):
    """Transformer classifier over ``n_features`` numeric features.

    Parameters
    ----------
    n_features : int
    n_classes : int, default=2
    d_model : int, default=32
    n_layers : int, default=2
    n_heads : int, default=4
    dropout : float, default=0.1

    Notes
    -----
    ``forward(x)`` takes raw feature values of shape (batch, n_features) and
    returns class logits of shape (batch, n_classes). With
    ``return_attention=True`` it also returns attention of shape
    (batch, n_layers, n_heads, n_features + 1, n_features + 1); token 0 is CLS,
    token ``j + 1`` is feature ``j``.
    """

    def __init__(self, n_features: int, n_classes: int = 2, d_model: int = 32, n_layers: int = 2,
                 n_heads: int = 4, dropout: float = 0.1) -> None:
        super().__init__()
        self.config = dict(n_features=n_features, n_classes=n_classes, d_model=d_model,
                           n_layers=n_layers, n_heads=n_heads, dropout=dropout)
        self.register_buffer("mean", torch.zeros(n_features))
        self.register_buffer("scale", torch.ones(n_features))
        self.weight = nn.Parameter(torch.randn(n_features, d_model) * 0.2)
        self.bias = nn.Parameter(torch.randn(n_features, d_model) * 0.2)
        self.cls = nn.Parameter(torch.randn(1, 1, d_model) * 0.2)
        self.blocks = nn.ModuleList(EncoderBlock(d_model, n_heads, dropout) for _ in range(n_layers))
        self.norm = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, n_classes)

    def forward(self, x: torch.Tensor, return_attention: bool = False):
        z = (x - self.mean) / self.scale
        tokens = z.unsqueeze(-1) * self.weight + self.bias
        h = torch.cat([self.cls.expand(x.shape[0], -1, -1), tokens], dim=1)
        maps = []
        for block in self.blocks:
            h, attn = block(h)
            maps.append(attn)
        logits = self.head(self.norm(h[:, 0]))
        if return_attention:
            return logits, torch.stack(maps, dim=1)
        return logits


def load_tabular_transformer(weights_path: Path, config_path: Path) -> TabularTransformer:
    """Rebuild the model from its JSON config and safetensors weights, in eval mode.

    Raises
    ------
    FileNotFoundError
        If either file is missing.
    """
    from safetensors.torch import load_file

    meta = json.loads(Path(config_path).read_text())
    model = TabularTransformer(**meta["config"])
    model.load_state_dict(load_file(str(weights_path)))
    return model.eval()
