"""Text page: one text under a trained Lopardo et al. (2024) classifier, the card's numbers and sentences.

Lopardo, Precioso, Garreau, "Attention Meets Post-hoc Interpretability: A Mathematical
Perspective", ICML 2024, arXiv 2402.03485 (docs/methods.md, "Lopardo et al. 2024"). For one
text, :func:`lopardo_view` gives the seven per-word scores of the paper's Figure 1 (α-avg, α-max,
LIME, G-avg, G-L1, G-L2, G×I), the paper's closed-form approximation of LIME beside real LIME, their
rank agreement with α-avg (docs/methods.md, "Agreement" metrics, which are this product's choice and
are not attributed to the paper), and :func:`card_sentences` says in words what those numbers show.
The model is trained and read back by :mod:`app.services.text_lopardo`.

torch, scipy, lime and :mod:`explainers.text` are imported at module top: the training job runs in
a forked process, where a first import inside the job could deadlock on an import lock.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
import lime.lime_text  # noqa: F401 - imported before a fork (see above); used by lopardo_lime
from scipy import stats

from explainers.text import closed_form_gradient, lopardo_scores
from explainers.text._lopardo_lime import lime_approximation, lopardo_lime

from workspace.errors import CandorError
from .text import check_text
from .text_lopardo import SEED, LopardoModel, trained_model

LIME_SAMPLES = 500
SCORE_NAMES = ("α-avg", "α-max", "LIME", "LIME approx.", "G-avg", "G-L1", "G-L2", "G×I")
"""The seven explainers of Lopardo et al.'s Figure 1 and the paper's approximation of LIME, in display order."""
NEGLIGIBLE = 1e-4
"""A word's score below this share of the score's largest magnitude on the text is negligible: its order
among other negligible scores is float noise (issue 23 measured 82 % of words below it in α-avg; the
model trained on the built-in examples, on 60 Yelp sentences: 116 of 758 words), so
:func:`rank_agreement` ties it at zero."""
LIKE, PARTLY = 0.8, 0.5
"""Spearman ρ (or Pearson r) from which the card says two scores order the words "like" each other
(≥ LIKE), "partly like" (≥ PARTLY) or "differently" (below): Candor's wording thresholds, docs/methods.md."""


@dataclass(frozen=True)
class LopardoView:
    """The seven per-word explanations of one text under a trained Lopardo et al. (2024) model, and LIME's approximation.

    Parameters
    ----------
    words : tuple of str
        Lower-cased words (the model's tokenizer), ``[CLS]`` excluded, truncated to ``max_len``.
    scores : dict
        :data:`SCORE_NAMES` -> ndarray of shape (n_words,).
    spearman : dict
        Score name -> Spearman ρ of ``|score|`` with α-avg over the words where either is not
        negligible (:func:`rank_agreement`; NaN when undefined).
    spearman_words : dict
        Score name -> how many words entered that ρ.
    alpha : ndarray of shape (n_heads, n_words + 1)
        CLS-row attention of every head, ``[CLS]`` included (each row sums to 1).
    probabilities : ndarray of shape (n_classes,)
    target : int
        The explained logit (the predicted class).
    gradient_check : float
        Max |closed-form G×I − autograd G×I| (a live check of the formula).
    trained : LopardoModel
    truncated : bool
    lime_fit : dict
        LIME's weighted local R² of its linear model: ``score`` (in-sample) and ``heldout_r2`` (on a
        fresh neighbourhood, seed + 1), ``num_samples``.
    lime_pearson : float
        Pearson r between the paper's closed-form approximation of LIME and the LIME run (NaN with
        fewer than 3 words or a constant score).
    """

    words: tuple
    scores: dict
    spearman: dict
    spearman_words: dict
    alpha: np.ndarray
    probabilities: np.ndarray
    target: int
    gradient_check: float
    trained: LopardoModel
    truncated: bool
    lime_fit: dict
    lime_pearson: float

    @property
    def predicted_label(self) -> str:
        return self.trained.labels[self.target]


def _autograd_gxi(model, e: torch.Tensor, target: int) -> np.ndarray:
    e = e.detach().clone().requires_grad_(True)
    logits, _ = model.forward_embeddings(e[None])
    (grad,) = torch.autograd.grad(logits[0, target], e)
    return (grad[1:] * e[1:]).sum(-1).detach().double().numpy()


def lopardo_view(key: str | None, text) -> LopardoView | None:
    """α-avg, α-max, LIME, LIME's approximation, G-avg, G-L1, G-L2 and G×I of ``text``, and their agreement.

    Parameters
    ----------
    key : str or None
        The trained model's key (:func:`app.services.text_lopardo.model_key`).
    text : str

    Returns
    -------
    LopardoView or None
        None when no model has been trained under ``key``.

    Raises
    ------
    CandorError
        If the text is empty or has no word the tokenizer keeps.

    References
    ----------
    Lopardo, Precioso, Garreau (2024), arXiv 2402.03485: the model, the closed-form gradient and the
    seven explainers of their Figure 1, and their approximation of LIME (docs/methods.md, "Lopardo et al.
    2024"). The agreement metrics (Spearman, docs/methods.md, "Agreement"; Pearson r of the approximation
    with LIME) are Candor's choice, not the paper's.
    """
    trained = trained_model(key)
    if trained is None:
        return None
    text = check_text(text)
    model, vocab = trained.model, trained.vocab
    all_words = vocab.split(text)
    if not all_words:
        raise CandorError("the text has no word for the attention classifier's tokenizer")
    s = lopardo_scores(model, vocab, text)
    words, target = s["words"], s["target"]
    ids = vocab.encode([text], model.max_len)
    with torch.no_grad():
        e = model.embed(ids)[0]
        logits, alpha = model.forward_embeddings(e[None])
    z = logits[0].double().numpy()
    probs = np.exp(z - z.max()) / np.exp(z - z.max()).sum()
    closed = (closed_form_gradient(model, e, target) * e[1:]).sum(-1).double().numpy()
    check = float(np.max(np.abs(closed - _autograd_gxi(model, e, target))))
    run = lopardo_lime(model, vocab, text, target, num_samples=LIME_SAMPLES, seed=SEED, class_names=trained.labels)
    approx = lime_approximation(model, vocab, text, target)
    scores = {"α-avg": s["alpha_avg"], "α-max": s["alpha_max"], "LIME": run.values, "LIME approx.": approx,
              "G-avg": s["grad_avg"], "G-L1": s["grad_l1"], "G-L2": s["grad_l2"], "G×I": s["gradient_x_input"]}
    agree = {name: rank_agreement(scores["α-avg"], v) for name, v in scores.items()}
    pearson = (float(stats.pearsonr(approx, run.values)[0])
               if len(words) >= 3 and np.ptp(approx) > 0 and np.ptp(run.values) > 0 else float("nan"))
    fit = {"score": run.score, "heldout_r2": run.heldout_r2, "num_samples": run.num_samples}
    return LopardoView(tuple(words), scores, {k: a[0] for k, a in agree.items()}, {k: a[1] for k, a in agree.items()},
                       alpha[0].double().numpy(), probs, target, check, trained,
                       len(all_words) > model.max_len, fit, pearson)


def rank_agreement(reference, score, negligible: float = NEGLIGIBLE) -> tuple[float, int]:
    """Spearman ρ of ``|score|`` with ``|reference|`` over the words where either is not negligible.

    A magnitude below ``negligible`` times its own score's largest magnitude is set to exactly zero:
    those values are tied, since their order is float noise (attention below 1e-4 of the largest
    weight is about 1e-6 and float32). Words negligible in *both* scores are left out: they order
    neither, and a large block of shared zeros would inflate ρ. A word negligible in one score only
    stays, tied at the bottom of that score, so a gradient on a word attention ignores still counts
    against agreement.

    Parameters
    ----------
    reference, score : array-like of shape (n_words,)
    negligible : float, default=NEGLIGIBLE

    Returns
    -------
    rho : float
        NaN with fewer than 2 words kept or a constant score among them (or either score all zero).
    n_words : int
        Words that entered ρ.

    References
    ----------
    Lopardo, Precioso, Garreau (2024), "Attention Meets Post-hoc Interpretability: A Mathematical
    Perspective", ICML, arXiv 2402.03485: gradients are attention times a vector, so their
    magnitudes vanish where attention does. The threshold and ties are Candor's choice (docs/methods.md,
    "Lopardo et al. 2024").
    """
    a, b = (np.abs(np.asarray(v, dtype=np.float64)) for v in (reference, score))
    if len(a) < 2 or a.max() == 0 or b.max() == 0:
        return float("nan"), 0
    a = np.where(a >= negligible * a.max(), a, 0.0)
    b = np.where(b >= negligible * b.max(), b, 0.0)
    keep = (a > 0) | (b > 0)
    n = int(keep.sum())
    if n < 2 or np.ptp(a[keep]) == 0 or np.ptp(b[keep]) == 0:
        return float("nan"), n
    return float(stats.spearmanr(a[keep], b[keep])[0]), n


def _likeness(value: float) -> str:
    if value >= LIKE:
        return "like"
    return "partly like" if value >= PARTLY else "differently from"


def card_sentences(view: LopardoView) -> list[str]:
    """What the card's numbers show, in sentences computed from them (never fixed claims).

    Parameters
    ----------
    view : LopardoView

    Returns
    -------
    list of str
        One sentence on gradient magnitudes vs attention (Spearman ρ of G-L1 and G-L2 with α-avg over
        the words :func:`rank_agreement` keeps, read with :data:`LIKE` / :data:`PARTLY`, and how many), one on the sign that LIME and G×I carry and attention
        cannot, and one on the paper's LIME approximation vs the LIME run (Pearson r, LIME's held-out R²).
    """
    rho, n = view.spearman, len(view.words)
    out = []
    mags = [rho.get(k, float("nan")) for k in ("G-L1", "G-L2")]
    if any(np.isnan(mags)):
        out.append("Gradient magnitudes vs attention: undefined on this text (a constant score or fewer than 2 "
                   f"words with a score of at least {NEGLIGIBLE:g} of its largest).")
    else:
        low = min(mags)
        verb = _likeness(low)
        why = ("as the closed form predicts: each word's gradient is its attention weight α_t times a vector, "
               "so magnitudes follow attention unless that vector's size varies strongly between words"
               if verb == "like" else
               "the vector that multiplies α_t in the closed-form gradient varies enough between words to reorder "
               "them")
        used = [view.spearman_words.get(k, n) for k in ("G-L1", "G-L2")]
        over = (f"over the {used[0]} of {n} words" if used[0] == used[1] else
                f"over {used[0]} and {used[1]} of {n} words")
        out.append(f"Gradient magnitudes order the words {verb} attention on this text (Spearman ρ with α-avg "
                   f"{over} where either score is at least {NEGLIGIBLE:g} of its largest: G-L1 {mags[0]:.2f}, "
                   f"G-L2 {mags[1]:.2f}): {why}.")
    against = int(np.sum(view.scores["LIME"] < 0))
    out.append(f"LIME and G×I carry a direction that attention cannot express: LIME puts {against} of {n} words "
               f"against {view.predicted_label} and G×I {int(np.sum(view.scores['G×I'] < 0))}.")
    fit = view.lime_fit
    r2 = (f"LIME's linear model explains {fit['heldout_r2']:.2f} of the logit's weighted variance on "
          f"{fit['num_samples']} fresh masks not used for fitting ({fit['score']:.2f} in-sample)")
    if np.isnan(view.lime_pearson):
        out.append(f"The paper's approximation of LIME cannot be correlated with LIME on this text (fewer than 3 "
                   f"words or a constant score); {r2}.")
    else:
        r = view.lime_pearson
        how = "closely" if r >= LIKE else "partly" if r >= PARTLY else "poorly"
        out.append(f"The paper's closed-form approximation of LIME agrees {how} with this LIME run (Pearson r = "
                   f"{r:.2f} over {n} words); {r2}.")
    return out
