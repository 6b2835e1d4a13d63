"""Token attributions for text classifiers: the explained output, IG and gradient x input.

All methods explain the same scalar ``g`` of the same model and input
(docs/methods.md, "Integrated Gradients"): by default the log-odds of the target class,
``z_c - logsumexp(z_{-c})`` (``output="log_odds"``), or its logit
(``output="logit"``). LIME explains the probability (its own convention).
Results are :class:`explainers.types.Explanation` objects over *words*
(pieces summed, docs/methods.md, "Attention"); the per-token values, the number of excluded
special tokens and the truncation note are kept in ``params``.

This module holds that shared part (:func:`explained_output`, the input preparation, the PAD
baseline and the :class:`~explainers.types.Explanation` every method returns) and the gradient
methods; LIME is in :mod:`explainers.text._lime_text`, SHAP in :mod:`explainers.text._shap_text`.
"""
from __future__ import annotations

import warnings

import numpy as np
import torch

from explainers.gradients import until_complete
from explainers.text._model import TextClassifier, detached_attention
from explainers.text._tokens import encode_text, merge_token_scores
from explainers.text._types import TextEncoding
from explainers.types import Explanation

__all__ = ["integrated_gradients", "gradient_x_input", "explained_output"]


def explained_output(logits: torch.Tensor, target: int, output: str) -> torch.Tensor:
    """The explained scalar per row: log-odds or logit of ``target``.

    Parameters
    ----------
    logits : Tensor of shape (batch, n_classes)
    target : int
    output : {"log_odds", "logit"}

    Returns
    -------
    Tensor of shape (batch,)
    """
    if output == "logit":
        return logits[:, target]
    if output == "log_odds":
        if logits.shape[1] < 2:
            raise ValueError("log_odds needs at least 2 classes; use output='logit'")
        others = torch.cat([logits[:, :target], logits[:, target + 1:]], dim=1)
        return logits[:, target] - torch.logsumexp(others, dim=1)
    raise ValueError(f"output must be 'log_odds' or 'logit', got {output!r}")


def _prepare(model: TextClassifier, text, target, is_split_into_words):
    enc = encode_text(model.tokenizer, text, model.max_length, is_split_into_words)
    ids = torch.tensor(np.array(enc.input_ids)).unsqueeze(0)
    mask = torch.ones_like(ids)
    if target is None:
        with torch.no_grad():
            target = int(torch.argmax(model(ids, mask)[0][0]))
    return enc, ids, mask, int(target)


def _pad_baseline(model: TextClassifier, enc: TextEncoding) -> torch.Tensor:
    pad = model.tokenizer.pad_token_id
    if pad is None:
        raise ValueError(f"{type(model.tokenizer).__name__} has no pad token for the baseline")
    base = np.where(enc.special_mask, enc.input_ids, pad)
    return torch.tensor(base).unsqueeze(0)


def _explanation(method, model, enc, token_values, base_value, prediction, target, output,
                 source, params) -> Explanation:
    token_values = np.asarray(token_values, dtype=float)
    words = merge_token_scores(token_values, enc.word_index, len(enc.words))
    params = dict(params)
    params.update(
        tokens=list(enc.tokens), token_values=token_values.tolist(),
        word_index=enc.word_index.tolist(), n_special_excluded=enc.n_special,
        n_padding_excluded=enc.n_padding, truncated=enc.truncated,
        truncation_note=enc.truncation_note, merge_rule=enc.merge_rule)
    space = {"log_odds": "log_odds", "logit": "raw", "probability": "probability"}[output]
    return Explanation(
        method=method, feature_names=enc.words, values=words, base_value=float(base_value),
        prediction=float(prediction), feature_values=np.array(enc.words, dtype=object),
        output_space=space, target=model.labels[target], source=source, params=params)


def integrated_gradients(
    model: TextClassifier,
    text,
    target: int | None = None,
    n_steps: int = 50,
    max_steps: int = 400,
    output: str = "log_odds",
    is_split_into_words: bool = False,
    internal_batch_size: int | None = None,
    detach_attention: bool = False,
) -> Explanation:
    """Integrated Gradients on the word embeddings with a PAD baseline.

    Sundararajan, Taly, Yan (2017), arXiv 1703.01365, via Captum's
    ``LayerIntegratedGradients`` on the word-embedding layer only (position
    and token-type embeddings are not interpolated). Baseline: the same
    sequence with every content token replaced by the tokenizer's pad token
    (``[CLS]``/``[SEP]`` kept), attention mask all ones. Gauss-Legendre
    quadrature. Token IG = sum over embedding dimensions.

    Parameters
    ----------
    model : TextClassifier
    text : str, or list of str with ``is_split_into_words``
    target : int, optional
        Class explained; default the predicted class.
    n_steps : int, default=50
    max_steps : int, default=400
        If ``|delta| > 0.01 |g(x) - g(x')|`` the steps are doubled up to this
        (docs/methods.md, "Integrated Gradients"); set equal to ``n_steps`` to disable.
    output : {"log_odds", "logit"}, default="log_odds"
    is_split_into_words : bool, default=False
    internal_batch_size : int, optional
        Passed to Captum; default all steps in one batch.
    detach_attention : bool, default=False
        Treat attention weights as constants in the backward pass (Jain &
        Wallace 2019, docs/methods.md, "Integrated Gradients"); completeness then no longer holds.

    Returns
    -------
    Explanation
        ``values`` per word; ``base_value = g(x')``, ``prediction = g(x)``;
        ``params["convergence_delta"]`` = sum(IG) - (g(x) - g(x')) and
        ``params["relative_gap"]`` = |delta| / |g(x) - g(x')|, ``n_steps`` used,
        ``baseline_ids``, ``token_values``, ``n_special_excluded``.

    Raises
    ------
    ValueError
        For an empty text or a tokenizer without a pad token.
    """
    from captum.attr import LayerIntegratedGradients

    enc, ids, mask, target = _prepare(model, text, target, is_split_into_words)
    base = _pad_baseline(model, enc)

    def forward(input_ids, attention_mask):
        return explained_output(model(input_ids, attention_mask)[0], target, output)

    lig = LayerIntegratedGradients(forward, model.word_embeddings)
    with torch.no_grad():
        g_x, g_b = forward(torch.cat([ids, base]), torch.cat([mask, mask])).tolist()

    def attribute(steps):
        with detached_attention(model, detach_attention):
            return lig.attribute(
                ids, baselines=base, additional_forward_args=(mask,), n_steps=steps,
                method="gausslegendre", internal_batch_size=internal_batch_size,
                return_convergence_delta=True)

    # detached attention breaks completeness, so doubling could not help: one run
    attr, steps, delta, gap = until_complete(attribute, g_x - g_b, n_steps,
                                             n_steps if detach_attention else max_steps)
    if gap > 0.01 and not detach_attention:
        warnings.warn(f"IG completeness gap {gap:.2%} > 1% at {steps} steps", RuntimeWarning, stacklevel=2)
    token_values = attr[0].sum(-1).detach().double().numpy()
    return _explanation(
        "integrated_gradients", model, enc, token_values, g_b, g_x, target, output,
        f"Captum LayerIntegratedGradients on word embeddings, {steps} steps Gauss-Legendre, "
        f"baseline: content tokens -> {model.tokenizer.pad_token} (id {model.tokenizer.pad_token_id}), "
        "special tokens kept",
        dict(n_steps=steps, convergence_delta=delta, relative_gap=gap, detach_attention=detach_attention,
             baseline_ids=base[0].tolist(), baseline=f"pad token {model.tokenizer.pad_token}"))


def gradient_x_input(model: TextClassifier, text, target: int | None = None,
                     output: str = "log_odds", is_split_into_words: bool = False,
                     detach_attention: bool = False) -> Explanation:
    """Gradient x input on the word embeddings: ``<e_t, dg/de_t>`` per token.

    Parameters
    ----------
    model, text, target, output, is_split_into_words, detach_attention :
        as :func:`integrated_gradients`

    Returns
    -------
    Explanation
        ``values`` per word (sum over pieces); ``base_value`` is 0 (no
        completeness property); ``params["saliency_l1"]``, ``saliency_l2``
        per token (docs/methods.md, "Integrated Gradients").
    """
    enc, ids, mask, target = _prepare(model, text, target, is_split_into_words)
    store = {}

    def hook(_m, _inp, out):
        out.requires_grad_(True)
        out.retain_grad()
        store["emb"] = out
        return out

    handle = model.word_embeddings.register_forward_hook(hook)
    try:
        with torch.enable_grad(), detached_attention(model, detach_attention):
            g = explained_output(model(ids, mask)[0], target, output)
            g.sum().backward()
    finally:
        handle.remove()
    emb, grad = store["emb"][0].detach(), store["emb"].grad[0]
    gxi = (emb * grad).sum(-1).double().numpy()
    return _explanation(
        "gradient_x_input", model, enc, gxi, 0.0, float(g.item()), target, output,
        "gradient x input on the word embeddings (autograd"
        + (", attention detached)" if detach_attention else ")"),
        dict(detach_attention=detach_attention, saliency_l1=grad.abs().sum(-1).tolist(), saliency_l2=grad.norm(dim=-1).tolist()))
