"""SHAP on text classifiers: :func:`shap_text`, Shapley values of the words with standard errors.

Antithetic permutation sampling with the words as players and the PAD baseline of
:func:`explainers.text.integrated_gradients` (docs/methods.md, "SHAP" and "Integrated Gradients").
"""
from __future__ import annotations

import numpy as np
import torch

from explainers.numbers import plain
from explainers.text._attribution import _explanation, _prepare, explained_output
from explainers.text._model import TextClassifier
from explainers.text._types import TextEncoding
from explainers.types import Explanation

SHAP_MAX_EVALS = 1000
"""Budget of model evaluations per text SHAP explanation (MiniLM, one core: at most about 4 s)."""
SHAP_REL_TOL = 0.01
"""Target: every text SHAP standard error at most 1 % of |g(x) - g(baseline)|."""

__all__ = ["shap_text"]


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
                           time_budget_s=time_budget_s, seed=seed, enumerate_rows=False)
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
