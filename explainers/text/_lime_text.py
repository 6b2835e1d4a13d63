"""LIME on text classifiers: :func:`lime_text`, with standard errors and a held-out R².

Ribeiro et al. (2016), lime 0.2.0.1, over the tokenizer's words; it explains the probability of
the target class (LIME's convention), the other text attributions its log-odds
(:mod:`explainers.text._attribution`, docs/methods.md, "LIME").
"""
from __future__ import annotations

import numpy as np
import torch

from explainers._lime_fits import repeat_until_converged, weighted_r2
from explainers.numbers import plain
from explainers.text._attribution import _explanation, _prepare
from explainers.text._model import TextClassifier
from explainers.types import Explanation

LIME_SAMPLES = 250
"""First neighborhood size per text LIME fit."""
LIME_REPEATS = 4
"""Independent text LIME fits (their spread gives the standard error)."""
LIME_REL_TOLERANCE = 0.05
LIME_TIME_BUDGET_S = 30.0
LIME_MAX_SAMPLES = 4000

__all__ = ["lime_text", "lime_heldout_r2"]


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
    the surrogate ``intercept + z @ coef`` is scored with :func:`explainers._lime_fits.weighted_r2`.

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
    (:func:`explainers._lime_fits.repeat_until_converged`, docs/methods.md, "LIME").

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
