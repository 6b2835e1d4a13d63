"""Token attributions for text classifiers: IG, gradient x input, LIME, SHAP.

All methods explain the same scalar ``g`` of the same model and input
(docs/methods.md, "Integrated Gradients"): by default the log-odds of the target class,
``z_c - logsumexp(z_{-c})`` (``output="log_odds"``), or its logit
(``output="logit"``). LIME explains the probability (its own convention).
Results are :class:`explainers.types.Explanation` objects over *words*
(pieces summed, docs/methods.md, "Attention"); the per-token values, the number of excluded
special tokens and the truncation note are kept in ``params``.
"""
from __future__ import annotations

import warnings

import numpy as np
import torch

from explainers.gradients import until_complete
from explainers.numbers import plain
from explainers.text._model import TextClassifier, detached_attention
from explainers.text._tokens import encode_text, merge_token_scores
from explainers.text._types import TextEncoding
from explainers.types import Explanation

LIME_SAMPLES = 250
"""First neighborhood size per text LIME fit."""
LIME_REPEATS = 4
"""Independent text LIME fits (their spread gives the standard error)."""
LIME_REL_TOLERANCE = 0.05
LIME_TIME_BUDGET_S = 30.0
LIME_MAX_SAMPLES = 4000
SHAP_MAX_EVALS = 1000
"""Budget of model evaluations per text SHAP explanation (MiniLM, one core: at most about 4 s)."""
SHAP_REL_TOL = 0.01
"""Target: every text SHAP standard error at most 1 % of |g(x) - g(baseline)|."""

__all__ = ["integrated_gradients", "gradient_x_input", "lime_text", "lime_heldout_r2", "shap_text",
           "explained_output"]


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
        warnings.warn(f"IG completeness gap {gap:.2%} > 1% at {steps} steps", RuntimeWarning)
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


def _predict_proba(model: TextClassifier, texts, batch_size: int = 64) -> np.ndarray:
    out = []
    tok = model.tokenizer
    for i in range(0, len(texts), batch_size):
        b = tok(list(texts[i:i + batch_size]), padding=True, truncation=True,
                max_length=model.max_length, return_tensors="pt")
        with torch.no_grad():
            out.append(torch.softmax(model(b["input_ids"], b["attention_mask"])[0], -1).double().numpy())
    return np.concatenate(out)


def lime_heldout_r2(explainer, exp, classifier_fn, target: int, num_samples: int, *,
                    coef: np.ndarray | None = None, intercept: float | None = None) -> float:
    """Weighted R² of a fitted LIME text surrogate on a fresh neighbourhood not used for fitting.

    The text counterpart of tabular LIME's held-out R² (:class:`explainers.lime_explainer.LimeExplainer`,
    docs/methods.md, "LIME"): ``explainer`` (a ``LimeTextExplainer`` with the fitting one's settings
    and another seed, one no fit used) draws ``num_samples`` new masks of the same text the way
    LIME does (number of removed words uniform, then which ones), weighs them with LIME's kernel, and
    the surrogate ``intercept + z @ coef`` is scored with :func:`explainers.lime_explainer.weighted_r2`.

    Parameters
    ----------
    explainer : lime.lime_text.LimeTextExplainer
        Seeded differently from the one that fitted ``exp``.
    exp : lime.explanation.Explanation
        The fitted explanation (its ``domain_mapper.indexed_string`` is the text's features).
    classifier_fn : callable
        Strings -> outputs (n, n_classes), as given to LIME.
    target : int
        Column of the outputs that ``exp`` explains.
    num_samples : int
    coef : ndarray of shape (n_words,), optional
    intercept : float, optional
        Score this surrogate instead of ``exp``'s own (e.g. the mean of several fits).

    Returns
    -------
    float
        At most 1 (negative when the surrogate is worse than the weighted mean); NaN when the
        output is constant on the new neighbourhood.
    """
    from explainers.lime_explainer import weighted_r2  # imports lime: lazily, as lime_text does

    indexed = exp.domain_mapper.indexed_string
    data, labels, distances = explainer._LimeTextExplainer__data_labels_distances(
        indexed, classifier_fn, num_samples)
    if coef is None:
        coef = np.zeros(indexed.num_words())
        for j, w in exp.local_exp[target]:
            coef[j] = w
    b = float(exp.intercept[target]) if intercept is None else float(intercept)
    weights = explainer.base.kernel_fn(distances)
    return weighted_r2(np.asarray(labels)[:, target], b + data @ np.asarray(coef, dtype=float), weights)


def lime_text(model: TextClassifier, text: str, target: int | None = None,
              num_samples: int = LIME_SAMPLES, seed: int = 0, batch_size: int = 64, *,
              repeats: int = LIME_REPEATS, rel_tolerance: float = LIME_REL_TOLERANCE,
              time_budget_s: float = LIME_TIME_BUDGET_S, max_samples: int = LIME_MAX_SAMPLES) -> Explanation:
    """LIME text explanation (Ribeiro et al. 2016, arXiv 1602.04938), lime 0.2.0.1, with standard errors.

    Interpretable features are the tokenizer's words by *position*
    (``bow=False``); a removed word is replaced by the pad token, as the IG
    baseline. The explained output is the probability of ``target``.
    The weights are the mean of ``repeats`` LIME fits on independent seeded neighborhoods and their
    standard error the spread of those fits over ``sqrt(repeats)``; the neighborhood doubles until
    the largest standard error is within ``rel_tolerance`` of the largest weight, ``max_samples`` or
    the time budget: the loop tabular LIME uses
    (:func:`explainers.lime_explainer.repeat_until_converged`, docs/methods.md, "LIME").

    Parameters
    ----------
    model : TextClassifier
    text : str
    target : int, optional
    num_samples : int, default=250
        First neighborhood size per fit (4 fits of 250 cost what one LIME fit of 1000 did).
    seed : int, default=0
        Fits use seeds ``seed .. seed + repeats - 1``, the held-out neighborhood ``seed + repeats``.
    batch_size : int, default=64
    repeats : int, default=4
        At least 2.
    rel_tolerance : float, default=0.05
    time_budget_s : float, default=30.0
        Do not start a doubling predicted to end after this many seconds (with MiniLM on one core a
        round of 4 x 250 samples of a 15-word sentence took about 4 s).
    max_samples : int, default=4000
        Largest neighborhood per fit; ``max_samples=num_samples`` fits one round only.

    Returns
    -------
    Explanation
        ``values`` per word (mean weight); ``base_value`` = mean surrogate intercept,
        ``prediction`` = mean surrogate prediction at the text
        (``params["model_probability"]`` is the model's),
        ``params["score"]`` = mean of LIME's weighted in-sample R2,
        ``params["heldout_r2"]`` = the mean surrogate's R2 on a fresh neighbourhood drawn with
        ``seed + repeats`` (:func:`lime_heldout_r2`), as tabular LIME reports it;
        ``params["standard_error"]`` (tuple, one float per word, probability units),
        ``converged``, ``tolerance``, ``num_samples`` (per fit, last round), ``repeats``,
        ``total_samples``, ``seconds``.

    Raises
    ------
    ValueError
        If ``repeats < 2`` or ``num_samples`` is not between 2 and ``max_samples``.
    """
    from lime.lime_text import LimeTextExplainer

    from explainers.lime_explainer import repeat_until_converged

    if not 2 <= int(num_samples) <= int(max_samples):
        raise ValueError(f"need 2 <= num_samples <= max_samples, got {num_samples} and {max_samples}")
    enc, ids, mask, target = _prepare(model, text, target, False)
    words = list(enc.words)

    def make(s):
        return LimeTextExplainer(
            class_names=list(model.labels), split_expression=lambda _s: words, bow=False,
            mask_string=model.tokenizer.pad_token, random_state=s)

    def proba(ts):
        return _predict_proba(model, ts, batch_size)

    def fit(s, n):
        exp = make(s).explain_instance(enc.text, proba, labels=(target,), num_features=len(words),
                                       num_samples=n)
        n_feat = len(exp.domain_mapper.indexed_string.inverse_vocab)
        if n_feat != len(words):
            raise RuntimeError(f"LIME found {n_feat} words, the tokenizer {len(words)}")
        coef = np.zeros(len(words))
        for j, w in exp.as_map()[target]:
            coef[j] = w
        return coef, float(exp.intercept[target]), float(exp.score), float(np.ravel(exp.local_pred)[0]), exp

    r = repeat_until_converged(fit, int(num_samples), seed=seed, repeats=int(repeats),
                               rel_tolerance=rel_tolerance, time_budget_s=time_budget_s,
                               max_samples=int(max_samples))
    word_values = r.values
    intercept = float(np.mean([f[1] for f in r.fits]))
    # spread word values to first pieces so the token view stays consistent
    token_values = np.zeros(enc.n_tokens)
    for j in range(len(words)):
        token_values[np.flatnonzero(enc.word_index == j)[0]] = word_values[j]
    prob = float(_predict_proba(model, [enc.text])[0, target])
    heldout = lime_heldout_r2(make(seed + int(repeats)),
                              r.fits[0][4], proba, target, r.num_samples, coef=word_values, intercept=intercept)
    se = r.standard_error
    source = (f"lime 0.2.0.1 LimeTextExplainer, bow=False, mask {model.tokenizer.pad_token}, kernel_width=25; "
              f"mean of {int(repeats)} seeded fits (seeds {seed}–{seed + int(repeats) - 1}) of {r.num_samples} "
              f"samples; largest standard error {plain(np.max(se), 2, trim=True)} {'≤' if r.converged else '>'} "
              f"tolerance {plain(r.tolerance, 2, trim=True)} ({rel_tolerance:.0%} of the largest |weight|): "
              + ("converged" if r.converged else f"not converged ({r.stopped_by})"))
    return _explanation(
        "lime", model, enc, token_values, intercept, float(np.mean([f[3] for f in r.fits])), target,
        "probability", source,
        dict(num_samples=r.num_samples, seed=seed, score=float(np.mean([f[2] for f in r.fits])),
             heldout_r2=heldout, model_probability=prob, repeats=int(repeats),
             total_samples=r.total_samples, standard_error=tuple(float(v) for v in se),
             converged=r.converged, tolerance=r.tolerance, rel_tolerance=float(rel_tolerance),
             time_budget_s=float(time_budget_s), seconds=r.seconds))


def _masked_words(model: TextClassifier, enc: TextEncoding, target: int, output: str, batch_size: int):
    """The value function of words as players: masks (n, n_words) of 0/1 -> g, shape (n, 1).

    A word outside the coalition has every piece replaced by the pad token (the IG baseline);
    special tokens, positions and the sequence length stay, the attention mask is all ones.
    """
    ids = np.asarray(enc.input_ids)
    pad = model.tokenizer.pad_token_id
    if pad is None:
        raise ValueError(f"{type(model.tokenizer).__name__} has no pad token for the baseline")
    wi = np.asarray(enc.word_index)
    content = np.flatnonzero(wi >= 0)

    def f(Z: np.ndarray) -> np.ndarray:
        keep = np.asarray(Z, dtype=float)[:, wi[content]] > 0.5
        rows = np.repeat(ids[None, :], len(keep), axis=0)
        rows[:, content] = np.where(keep, ids[content][None, :], pad)
        out = []
        for i in range(0, len(rows), batch_size):
            b = torch.tensor(rows[i:i + batch_size])
            with torch.no_grad():
                out.append(explained_output(model(b, torch.ones_like(b))[0], target, output).double().numpy())
        return np.concatenate(out)[:, None]
    return f


def shap_text(model: TextClassifier, text: str, target: int | None = None,
              max_evals: int = SHAP_MAX_EVALS, seed: int = 0, output: str = "log_odds",
              batch_size: int = 64, *, rel_tol: float = SHAP_REL_TOL,
              time_budget_s: float | None = None) -> Explanation:
    """Shapley values of the words by antithetic permutation sampling, with standard errors.

    Shapley values (Lundberg & Lee 2017, arXiv 1705.07874) with the text's words as players,
    estimated as Štrumbelj & Kononenko (2014, KAIS 41) with each ordering followed by its reverse
    (:func:`explainers._permutation.permutation_shap`, the tabular permutation path, docs/methods.md,
    "SHAP"). A word outside a coalition has all its pieces replaced by the pad token, like the IG
    baseline; ``[CLS]``/``[SEP]``, positions and length stay. Sampling stops when every standard error
    is at most ``rel_tol * |g(x) - g(baseline)|``, or at the budget.

    Parameters
    ----------
    model, text, target, output : as :func:`integrated_gradients`
    max_evals : int, default=1000
        Budget of model evaluations: ``max_evals // (n_words - 1)`` orderings (each costs
        ``n_words - 1`` forward passes), at least 16.
    seed : int, default=0
    batch_size : int, default=64
    rel_tol : float, default=0.01
    time_budget_s : float, optional
        Also stop after the round that passes this many seconds (the values then depend on the
        machine's speed; None keeps them a function of ``seed``).

    Returns
    -------
    Explanation
        ``values`` per word (output units), exactly additive: ``base_value`` = g of the all-pad
        baseline, ``prediction`` = g(x); ``params["standard_error"]`` (tuple, one float per word:
        the spread of the antithetic pairs over sqrt(pairs)), ``converged``, ``tolerance``,
        ``orderings``, ``stopped_by``, ``max_evals``. ``token_values`` carry each word's value
        on its first piece.

    Raises
    ------
    ValueError
        For an empty text or a tokenizer without a pad token.
    """
    from explainers._permutation import permutation_shap

    enc, ids, mask, target = _prepare(model, text, target, False)
    f = _masked_words(model, enc, target, output, batch_size)
    d = len(enc.words)
    max_orderings = max(16, int(max_evals) // max(d - 1, 1))
    res = permutation_shap(f, np.ones(d), np.zeros((1, d)), rel_tol=rel_tol, max_orderings=max_orderings,
                           time_budget_s=time_budget_s, seed=seed)
    word_values, se = res.values[:, 0], res.standard_error[:, 0]
    token_values = np.zeros(enc.n_tokens)
    for j in range(d):
        token_values[np.flatnonzero(enc.word_index == j)[0]] = word_values[j]
    base, g_x = float(res.base[0]), float(f(np.ones((1, d)))[0, 0])
    stopped = {"tolerance": "converged", "max_orderings": "not converged (evaluation budget)",
               "time_budget": "not converged (time budget)"}[res.stopped_by]
    tol = float(res.tolerance[0])
    return _explanation(
        "shap", model, enc, token_values, base, g_x, target, output,
        f"permutation SHAP (antithetic orderings, Štrumbelj & Kononenko 2014), words as players, a removed "
        f"word's pieces -> {model.tokenizer.pad_token}; {res.orderings} orderings, seed {seed}; largest standard "
        f"error {plain(np.max(se), 2, trim=True)} {'≤' if res.converged else '>'} tolerance {plain(tol, 2, trim=True)} ({rel_tol:.1%} of "
        f"|g(x) − g(baseline)|): {stopped}",
        dict(max_evals=int(max_evals), seed=seed, orderings=res.orderings, converged=bool(res.converged),
             tolerance=tol, rel_tol=float(rel_tol), stopped_by=res.stopped_by,
             standard_error=tuple(float(v) for v in se), players="words",
             baseline=f"pad token {model.tokenizer.pad_token}"))
