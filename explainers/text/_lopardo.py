"""Single-layer multi-head attention classifier of Lopardo et al. (2024).

"Attention Meets Post-hoc Interpretability: A Mathematical Perspective",
Lopardo, Precioso, Garreau, ICML 2024, arXiv 2402.03485 (docs/methods.md, "Lopardo et al. 2024"). The
model and its closed-form input gradient follow the paper as implemented in
the authors' code (``gianluigilopardo/attention_meets_xai``) [V]; statements
about what the gradient implies are the paper's [P].

Model: ``e_t = W_e[x_t] + p_t`` (sinusoidal ``p_t``); per head ``i``
``q_t = W_q e_t``, ``k_t = W_k e_t``, ``v_t = W_v e_t`` (no biases); only the
CLS query is used, ``alpha_t = softmax_t(<q_0, k_t> / sqrt(d_att))``;
``f(x) = (1/K) sum_i W_l^(i) sum_t alpha^(i)_t v^(i)_t`` (logits).
"""
from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence

import numpy as np
import torch
from torch import nn

__all__ = ["LopardoClassifier", "sinusoidal_positions", "closed_form_gradient", "lopardo_scores",
           "SimpleVocab", "train_lopardo"]


def sinusoidal_positions(n_positions: int, dim: int, dtype=torch.float32) -> torch.Tensor:
    """Sinusoidal position encodings (Vaswani et al. 2017), shape (n_positions, dim)."""
    pos = torch.arange(n_positions, dtype=torch.float64)[:, None]
    i = torch.arange(dim, dtype=torch.float64)[None, :]
    angle = pos / torch.pow(10000.0, (2 * (i // 2)) / dim)
    return torch.where(i % 2 == 0, torch.sin(angle), torch.cos(angle)).to(dtype)


class LopardoClassifier(nn.Module):
    """Single-layer, K-head, CLS-query attention classifier (arXiv 2402.03485).

    Parameters
    ----------
    vocab_size : int
        Including ``[PAD]`` (id 0), ``[CLS]`` (1), ``[UNK]`` (2), ``[MASK]`` (3).
    n_classes : int
    d_e : int, default=32
        Embedding size.
    d_att : int, default=16
        Query/key size.
    d_out : int, default=16
        Value size.
    n_heads : int, default=2
        K.
    max_len : int, default=128
        Tokens after ``[CLS]``.
    dtype : torch dtype, default=torch.float32
    seed : int, default=0
    """

    def __init__(self, vocab_size: int, n_classes: int = 2, d_e: int = 32, d_att: int = 16,
                 d_out: int = 16, n_heads: int = 2, max_len: int = 128, dtype=torch.float32,
                 seed: int = 0):
        super().__init__()
        gen = torch.Generator().manual_seed(seed)

        def param(*shape, scale):
            return nn.Parameter(torch.randn(*shape, generator=gen, dtype=torch.float64).to(dtype) * scale)

        self.d_att, self.n_heads, self.max_len = d_att, n_heads, max_len
        self.W_e = param(vocab_size, d_e, scale=1.0)
        self.W_q = param(n_heads, d_att, d_e, scale=1 / math.sqrt(d_e))
        self.W_k = param(n_heads, d_att, d_e, scale=1 / math.sqrt(d_e))
        self.W_v = param(n_heads, d_out, d_e, scale=1 / math.sqrt(d_e))
        self.W_l = param(n_heads, n_classes, d_out, scale=1 / math.sqrt(d_out))
        self.register_buffer("positions", sinusoidal_positions(max_len + 1, d_e, dtype))

    def embed(self, ids: torch.Tensor) -> torch.Tensor:
        """Token ids (batch, T+1) -> embeddings ``e`` (batch, T+1, d_e)."""
        return self.W_e[ids] + self.positions[: ids.shape[1]]

    def forward_embeddings(self, e: torch.Tensor, pad_mask: torch.Tensor | None = None):
        """Logits (batch, n_classes) and alpha (batch, K, T+1) from embeddings.

        Parameters
        ----------
        e : Tensor of shape (batch, T+1, d_e)
            Position 0 is ``[CLS]``.
        pad_mask : BoolTensor of shape (batch, T+1), optional
            True at padding, which gets zero attention.
        """
        q0 = torch.einsum("kad,bd->bka", self.W_q, e[:, 0])
        keys = torch.einsum("kad,btd->bkta", self.W_k, e)
        vals = torch.einsum("kod,btd->bkto", self.W_v, e)
        scores = torch.einsum("bka,bkta->bkt", q0, keys) / math.sqrt(self.d_att)
        if pad_mask is not None:
            scores = scores.masked_fill(pad_mask[:, None, :], float("-inf"))
        alpha = torch.softmax(scores, dim=-1)
        v_tilde = torch.einsum("bkt,bkto->bko", alpha, vals)
        logits = torch.einsum("kco,bko->bc", self.W_l, v_tilde) / self.n_heads
        return logits, alpha

    def forward(self, ids: torch.Tensor, return_attention: bool = False):
        """Logits (batch, n_classes), and alpha (batch, K, T+1) if asked."""
        logits, alpha = self.forward_embeddings(self.embed(ids), ids == 0)
        return (logits, alpha) if return_attention else logits


def closed_form_gradient(model: LopardoClassifier, e: torch.Tensor, target: int) -> torch.Tensor:
    """Gradient of logit ``target`` w.r.t. each non-CLS embedding, in closed form.

    For head i with ``w = W_l^(i)[target]``, ``u_s = w v_s``:
    ``grad_{e_t} f^(i) = alpha_t [W_v^T w^T + (u_t - sum_s alpha_s u_s) W_k^T q_0 / sqrt(d_att)]``
    and ``grad_{e_t} f = (1/K) sum_i grad_{e_t} f^(i)`` (Lopardo et al. 2024,
    arXiv 2402.03485, docs/methods.md, "Lopardo et al. 2024"; oracle T13(b)).

    Parameters
    ----------
    model : LopardoClassifier
    e : Tensor of shape (T+1, d_e)
        One sequence of embeddings, position 0 = CLS, no padding.
    target : int

    Returns
    -------
    Tensor of shape (T, d_e)
        Rows for positions 1..T (the CLS row is not covered by the formula).
    """
    with torch.no_grad():
        _, alpha = model.forward_embeddings(e[None])
        alpha = alpha[0]  # (K, T+1)
        grads = torch.zeros(e.shape[0] - 1, e.shape[1], dtype=e.dtype)
        for i in range(model.n_heads):
            w = model.W_l[i, target]  # (d_out,)
            q0 = model.W_q[i] @ e[0]  # (d_att,)
            u = (e @ model.W_v[i].T) @ w  # (T+1,)
            centred = u - (alpha[i] * u).sum()
            a = alpha[i][1:, None]
            key_term = centred[1:, None] * (model.W_k[i].T @ q0) / math.sqrt(model.d_att)
            grads += a * (model.W_v[i].T @ w + key_term)
        return grads / model.n_heads


class SimpleVocab:
    """Lower-cased word vocabulary with ``[PAD]``=0, ``[CLS]``=1, ``[UNK]``=2, ``[MASK]``=3.

    Parameters
    ----------
    texts : sequence of str
    min_count : int, default=1
    """

    SPECIALS = ("[PAD]", "[CLS]", "[UNK]", "[MASK]")
    _SPLIT = re.compile(r"\w+|[^\w\s]")

    def __init__(self, texts: Sequence[str], min_count: int = 1):
        counts = Counter(w for t in texts for w in self.split(t))
        self.itos = list(self.SPECIALS) + sorted(w for w, c in counts.items() if c >= min_count)
        self.stoi = {w: i for i, w in enumerate(self.itos)}

    @classmethod
    def split(cls, text: str) -> list[str]:
        return cls._SPLIT.findall(text.lower())

    def encode(self, texts: Sequence[str], max_len: int) -> torch.Tensor:
        """Texts -> ids (n_texts, 1 + longest) with ``[CLS]`` first, 0-padded, truncated to ``max_len``."""
        rows = [[1] + [self.stoi.get(w, 2) for w in self.split(t)][:max_len] for t in texts]
        width = max(len(r) for r in rows)
        return torch.tensor([r + [0] * (width - len(r)) for r in rows], dtype=torch.long)


def train_lopardo(texts: Sequence[str], labels: Sequence[int], *, n_heads: int = 2, d_e: int = 32,
                  d_att: int = 16, d_out: int = 16, epochs: int = 10, lr: float = 1e-2,
                  batch_size: int = 32, max_len: int = 64, seed: int = 0, progress=None):
    """Train :class:`LopardoClassifier` on CPU with Adam and cross-entropy.

    Parameters
    ----------
    texts : sequence of str
    labels : sequence of int
        Class indices 0..n_classes-1.
    n_heads, d_e, d_att, d_out : int
    epochs : int, default=10
    lr : float, default=1e-2
    batch_size : int, default=32
    max_len : int, default=64
    seed : int, default=0
        Seeds initialisation and shuffling (bit-for-bit reproducible on CPU).
    progress : callable, optional
        ``progress(done, total)`` after every batch (``total = epochs * batches``), e.g. for a
        background job's progress bar.

    Returns
    -------
    model : LopardoClassifier
        In eval mode.
    vocab : SimpleVocab
    train_accuracy : float

    Raises
    ------
    ValueError
        If texts and labels differ in length or are empty.
    """
    y = torch.as_tensor(np.asarray(labels), dtype=torch.long)
    if len(texts) != y.numel() or y.numel() == 0:
        raise ValueError(f"got {len(texts)} texts and {y.numel()} labels")
    vocab = SimpleVocab(texts)
    ids = vocab.encode(texts, max_len)
    model = LopardoClassifier(len(vocab.itos), int(y.max()) + 1, d_e, d_att, d_out, n_heads,
                              max_len, seed=seed)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    gen = torch.Generator().manual_seed(seed)
    total, done = epochs * -(-len(y) // batch_size), 0
    for _ in range(epochs):
        perm = torch.randperm(len(y), generator=gen)
        for s in range(0, len(y), batch_size):
            idx = perm[s:s + batch_size]
            opt.zero_grad()
            nn.functional.cross_entropy(model(ids[idx]), y[idx]).backward()
            opt.step()
            done += 1
            if progress is not None:
                progress(done, total)
    model.eval()
    with torch.no_grad():
        acc = float((model(ids).argmax(-1) == y).float().mean())
    return model, vocab, acc


def lopardo_scores(model: LopardoClassifier, vocab: SimpleVocab, text: str,
                   target: int | None = None) -> dict:
    """The attention and gradient explanations of Lopardo et al.'s Figure 1, per word.

    Parameters
    ----------
    model : LopardoClassifier
    vocab : SimpleVocab
    text : str
    target : int, optional
        Explained logit; default the predicted class.

    Returns
    -------
    dict
        ``words`` (tuple of str, CLS excluded), ``target``, and arrays of shape
        (n_words,): ``alpha_avg``, ``alpha_max`` (CLS row, mean / max over
        heads), ``grad_avg``, ``grad_l1``, ``grad_l2``, ``gradient_x_input``
        (closed-form gradient, docs/methods.md, "Lopardo et al. 2024"). LIME is :func:`lime_text`-style
        and not included here.
    """
    words = vocab.split(text)[: model.max_len]
    ids = vocab.encode([text], model.max_len)
    with torch.no_grad():
        e = model.embed(ids)[0]
        logits, alpha = model.forward_embeddings(e[None])
    target = int(logits[0].argmax()) if target is None else int(target)
    g = closed_form_gradient(model, e, target)
    a = alpha[0, :, 1:].double().numpy()
    return dict(words=tuple(words), target=target, alpha_avg=a.mean(0), alpha_max=a.max(0),
                grad_avg=g.mean(-1).double().numpy(), grad_l1=g.abs().sum(-1).double().numpy(),
                grad_l2=g.norm(dim=-1).double().numpy(),
                gradient_x_input=(g * e[1:]).sum(-1).double().numpy())
