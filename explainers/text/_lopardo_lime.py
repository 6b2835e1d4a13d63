"""LIME on the single-layer attention classifier of Lopardo et al. (2024), and the paper's approximation of it.

Lopardo, Precioso, Garreau, "Attention Meets Post-hoc Interpretability: A Mathematical Perspective",
ICML 2024, arXiv 2402.03485 (docs/methods.md, "Lopardo et al. 2024"). :func:`lopardo_lime` runs real
LIME (lime 0.2.0.1 ``LimeTextExplainer``) on the explained logit, a removed word becoming the model's
``[MASK]`` token; :func:`lime_approximation` is the paper's closed-form approximation of LIME's
coefficients from the attention weights and the value/output projections.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from explainers.text._lime_text import lime_heldout_r2
from explainers.text._lopardo import LopardoClassifier, SimpleVocab

__all__ = ["MASK_ID", "MASK_WORD", "LopardoLime", "lime_approximation", "lopardo_lime", "lopardo_logits"]

MASK_ID = 3
"""``[MASK]`` in :class:`~explainers.text._lopardo.SimpleVocab`."""
MASK_WORD = "candormaskword"
"""What LIME writes for a removed word; encoded as ``[MASK]`` (id 3)."""


def _mask_embeddings(model: LopardoClassifier, n_tokens: int, cls: torch.Tensor) -> torch.Tensor:
    """Embeddings of ``[CLS]`` followed by ``n_tokens`` ``[MASK]``, shape (n_tokens + 1, d_e)."""
    ids = torch.full((1, n_tokens + 1), MASK_ID, dtype=torch.long)
    e = model.embed(ids)[0]
    e[0] = cls
    return e


def lime_approximation(model: LopardoClassifier, vocab: SimpleVocab, text: str, target: int | None = None,
                       bow: bool = False) -> np.ndarray:
    """Lopardo et al.'s approximation of LIME's coefficients for the single-layer attention classifier.

    For head ``i`` with ``w = W_l^(i)[target]``, ``u_t = w W_v e_t`` and ``u^M_t = w W_v e^M_t`` (the
    value contribution of ``[MASK]`` at position ``t``, ``e^M_t = W_e[MASK] + p_t``):

    ``beta_t = 3/2 * (1/K) sum_i ( alpha_t u_t - alpha^M_t u^M_t )``

    where ``alpha_t`` is the CLS-row attention of the text and ``alpha^M_t`` the softmax over positions
    ``0..T`` of ``<q_0, W_k e^M_t> / sqrt(d_att)`` (``q_0`` the text's CLS query; position 0 keeps the
    CLS key). The factor 3/2 comes from LIME's default text sampling (number of removed words uniform,
    Mardaoui & Garreau 2021, arXiv 2010.12487); it scales every coefficient alike.

    Parameters
    ----------
    model : LopardoClassifier
    vocab : SimpleVocab
    text : str
    target : int, optional
        Explained logit; default the predicted class.
    bow : bool, default=False
        False: one coefficient per position (LIME with ``bow=False``, Candor's setting). True: every
        position gets the sum over the occurrences of its word (LIME's default ``bow=True``, the
        paper's setting, where removing a word removes all its occurrences).

    Returns
    -------
    ndarray of shape (n_words,)
        In logit units, ``[CLS]`` excluded, truncated to ``model.max_len``.

    Raises
    ------
    ValueError
        If the text has no word for the tokenizer.

    References
    ----------
    Lopardo, Precioso, Garreau (2024), arXiv 2402.03485, docs/methods.md, "Lopardo et al. 2024".
    """
    words = vocab.split(text)[: model.max_len]
    if not words:
        raise ValueError("the text has no word for the attention classifier's tokenizer")
    ids = vocab.encode([text], model.max_len)
    with torch.no_grad():
        e = model.embed(ids)[0].double()
        logits, alpha = model.forward_embeddings(model.embed(ids))
        target = int(logits[0].argmax()) if target is None else int(target)
        e_mask = _mask_embeddings(model, len(words), model.embed(ids)[0, 0]).double()
        beta = torch.zeros(len(words), dtype=torch.float64)
        for i in range(model.n_heads):
            W_q, W_k, W_v = (m[i].double() for m in (model.W_q, model.W_k, model.W_v))
            w = model.W_l[i, target].double()
            q0 = W_q @ e[0]
            u = (e @ W_v.T) @ w
            u_mask = (e_mask @ W_v.T) @ w
            alpha_mask = torch.softmax((e_mask @ W_k.T) @ q0 / math.sqrt(model.d_att), dim=0)
            a = alpha[0, i].double()
            beta += (a * u - alpha_mask * u_mask)[1:]
        beta = 1.5 * beta / model.n_heads
    out = beta.numpy()
    if bow:
        summed: dict[str, float] = {}
        for word, b in zip(words, out):
            summed[word] = summed.get(word, 0.0) + float(b)
        out = np.array([summed[word] for word in words])
    return out


def lopardo_logits(model: LopardoClassifier, vocab: SimpleVocab):
    """The classifier LIME calls: strings -> logits (n, n_classes); :data:`MASK_WORD` becomes ``[MASK]``."""
    def logits(strings):
        rows = [[1] + [MASK_ID if w == MASK_WORD else vocab.stoi.get(w, 2) for w in vocab.split(s)][:model.max_len]
                for s in strings]
        width = max(len(r) for r in rows)
        ids = torch.tensor([r + [0] * (width - len(r)) for r in rows], dtype=torch.long)
        with torch.no_grad():
            return model(ids).double().numpy()
    return logits


@dataclass(frozen=True)
class LopardoLime:
    """Real LIME on the explained logit of the Lopardo et al. (2024) classifier.

    Parameters
    ----------
    values : ndarray of shape (n_words,)
        LIME's coefficients (logit units), one per position (``bow=False``) or per word (``bow=True``,
        every occurrence gets its word's coefficient).
    intercept : float
    score : float
        LIME's weighted in-sample R² of the local linear model.
    heldout_r2 : float
        The same R² on a fresh neighbourhood (seed + 1) not used for fitting.
    num_samples : int
    seed : int
    bow : bool
    """

    values: np.ndarray
    intercept: float
    score: float
    heldout_r2: float
    num_samples: int
    seed: int
    bow: bool


def lopardo_lime(model: LopardoClassifier, vocab: SimpleVocab, text: str, target: int, *, num_samples: int = 500,
                 seed: int = 0, bow: bool = False, class_names=None) -> LopardoLime:
    """LIME (Ribeiro et al. 2016, arXiv 1602.04938; lime 0.2.0.1) on logit ``target``, removed words -> ``[MASK]``.

    Parameters
    ----------
    model : LopardoClassifier
    vocab : SimpleVocab
    text : str
    target : int
    num_samples : int, default=500
    seed : int, default=0
    bow : bool, default=False
        LIME's ``bow``: False = one feature per position (Candor's default), True = one per distinct word.
    class_names : sequence of str, optional

    Returns
    -------
    LopardoLime
        With LIME's in-sample R² and the held-out R² (:func:`explainers.text.lime_heldout_r2`).

    Raises
    ------
    ValueError
        If the text has no word for the tokenizer.
    """
    from lime.lime_text import LimeTextExplainer

    words = vocab.split(text)[: model.max_len]
    if not words:
        raise ValueError("the text has no word for the attention classifier's tokenizer")
    fn = lopardo_logits(model, vocab)
    n_classes = int(model.W_l.shape[1])
    names = list(class_names) if class_names is not None else [f"class {c}" for c in range(n_classes)]

    def make(s):
        return LimeTextExplainer(split_expression=lambda _s: list(_s.split(" ")), bow=bow, mask_string=MASK_WORD,
                                 random_state=s, class_names=names)

    exp = make(seed).explain_instance(" ".join(words), fn, labels=(target,), num_features=len(words),
                                      num_samples=num_samples)
    indexed = exp.domain_mapper.indexed_string
    coef = np.zeros(indexed.num_words())
    for j, w in exp.as_map()[target]:
        coef[j] = w
    if bow:  # every occurrence gets its word's coefficient
        column = {indexed.word(j): j for j in range(coef.size)}
        values = np.array([coef[column[w]] for w in words])
    elif coef.size == len(words):
        values = coef
    else:
        raise RuntimeError(f"LIME found {coef.size} words, the tokenizer {len(words)}")
    heldout = lime_heldout_r2(make(seed + 1), exp, fn, target, num_samples)
    return LopardoLime(values, float(exp.intercept[target]), float(exp.score), heldout, num_samples, seed, bow)
