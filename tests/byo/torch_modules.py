"""Trusted model classes for the PyTorch bring-your-own-model tests (named as ``tests.byo.torch_modules:Cls``)."""
from __future__ import annotations

import torch
from torch import nn


class TabularMLP(nn.Module):
    """Standardise the raw features (buffers ``mean``, ``scale``), then one hidden ReLU layer.

    Parameters
    ----------
    n_features : int
    n_outputs : int
        Logits per class, or 1 (one logit, or a regression output): then the
        output has shape (batch,).
    hidden : int, default=16
    """

    def __init__(self, n_features: int, n_outputs: int, hidden: int = 16) -> None:
        super().__init__()
        self.register_buffer("mean", torch.zeros(n_features))
        self.register_buffer("scale", torch.ones(n_features))
        self.net = nn.Sequential(nn.Linear(n_features, hidden), nn.ReLU(), nn.Linear(hidden, n_outputs))
        self.squeeze = n_outputs == 1

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        z = self.net((x - self.mean) / self.scale)
        return z.squeeze(-1) if self.squeeze else z


class RenamedMLP(nn.Module):
    """Same shapes as :class:`TabularMLP`, other parameter names: its weights never fit ``TabularMLP``."""

    def __init__(self, n_features: int, n_outputs: int, hidden: int = 16) -> None:
        super().__init__()
        self.hidden = nn.Linear(n_features, hidden)
        self.head = nn.Linear(hidden, n_outputs)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(torch.relu(self.hidden(x)))


class SoftmaxMLP(nn.Module):
    """A :class:`TabularMLP` whose forward ends in a softmax: it returns class probabilities."""

    def __init__(self, inner: TabularMLP) -> None:
        super().__init__()
        self.inner = inner

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(self.inner(x), dim=1)
