"""The persuasive layer: measured simplification operators over descriptive explanations.

Herman (2017, arXiv 1711.07414) asks that persuasiveness be added to a
descriptive explanation as a separate, explicit step whose fidelity cost is
reported. Each operator here is a pure function from a descriptive object (an
:class:`~explainers.types.Explanation` or a rule surrogate) or a previous
simplification to a new simplification that points back at the descriptive
parent, records fidelity and complexity before and after, and appends itself
to the recorded operator chain (docs/methods.md, "Persuasive layer" and "Persuasive measures"):

- attributions: :func:`top_k_items` (O1), :func:`round_values` (O2, numeric or
  qualitative), :func:`group_features` (O3), :func:`direction_only` (O4),
  :func:`summarize` (O9, verified sentences);
- rules: :func:`prune_rules` (O5), :func:`round_thresholds` (O2),
  :func:`plain_language` (O8).

:func:`simplify` runs the product's chain for one k; :func:`tradeoff_curve`
gives the chain's cheap measures for every k at once (one batched model call).

:func:`make_context` is the one way a row's :class:`Context` is built (the dashboard's services
use it); :func:`average_curve` averages :func:`tradeoff_curve` over rows (the page's global view).
ERASER's value function (:func:`masked_output`, :func:`sufficiency`, :func:`comprehensiveness`)
lives in :mod:`._masking`.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass, replace
from typing import Mapping, Sequence

import numpy as np

from ..capabilities import OUTPUT_WORDS
from ..types import Simplification
from ._attribution import (Context, Item, chain, describe, direction_only, group_features,
                           per_feature_values, predicted_class, predicted_sign, render_lines, round_half_away, round_values, strength,
                           top_k_items)
from ._groups import correlated_groups, group_attributions, one_hot_groups
from ._guard import DroppedFeature, GilpinLabel, GuardrailNote, gilpin_label, guardrail, what_was_dropped
from ._masking import comprehensiveness, masked_output, masked_outputs, sufficiency
from ._language import KINDS, ClaimCheck, Sentence, SentenceCheck, compose, partition_of, summarize, verify_sentence
from ._measures import (CHEAP_MEASURES, Neighborhood, aopc, attribution_fidelity, attribution_fidelity_many, complexity,
                        curve_auc, deletion_curve, explanation_order, importance_order, insertion_curve,
                        make_neighborhood, restricted_r2)
from ._rules import (Phrase, RuleSimplification, ShownRule, as_rules, nice_number, plain_language, prune_rules,
                     round_thresholds, rule_predictions)

__all__ = [
    "aopc", "average_curve", "is_compatible", "AverageCurve", "comprehensiveness", "masked_output", "masked_outputs", "reference_values",
    "sufficiency", "as_rules", "attribution_fidelity", "attribution_fidelity_many", "chain", "CHEAP_MEASURES", "CurvePoint", "ClaimCheck", "complexity", "compose", "Context",
    "correlated_groups", "curve_auc", "deletion_curve", "describe", "direction_only", "DroppedFeature",
    "explanation_order", "gilpin_label", "GilpinLabel", "group_attributions", "group_features", "guardrail",
    "GuardrailNote", "importance_order", "insertion_curve", "Item", "KINDS", "make_context", "make_neighborhood",
    "Neighborhood", "nice_number", "one_hot_groups", "partition_of", "per_feature_values",
    "Simplification", "Phrase", "plain_language", "predicted_sign", "prune_rules", "render_lines",
    "restricted_r2", "round_half_away", "round_thresholds", "round_values", "rule_predictions",
    "RuleSimplification", "Sentence", "SentenceCheck", "ShownRule", "simplify", "strength", "summarize",
    "top_k_items", "tradeoff_curve", "verify_sentence", "what_was_dropped",
]


def is_compatible(capabilities) -> str | None:
    """Why the persuasive layer does not apply to a model with these
    :class:`~explainers.capabilities.Capabilities`, or ``None``: it is defined on class probabilities."""
    if capabilities.output_kind == "probability":
        return None
    return ("The persuasive layer measures what a simplification costs in class probability (ERASER "
            "sufficiency and comprehensiveness) and verifies sentences about probabilities; this model "
            f"gives {OUTPUT_WORDS[capabilities.output_kind]}.")


def reference_values(train: np.ndarray, categorical=()) -> np.ndarray:
    """Typical values of each feature: training medians (missing values ignored), the most frequent code
    of a categorical column; 0 for a column with no value at all.

    Parameters
    ----------
    train : ndarray of shape (n_train, n_features)
    categorical : iterable of int
        Columns holding category codes.

    Returns
    -------
    ndarray of shape (n_features,)
    """
    train = np.asarray(train, float)
    with np.errstate(all="ignore"):
        ref = np.array([np.nanmedian(c) if np.isfinite(c).any() else 0.0 for c in train.T])
    for j in categorical:
        vals, counts = np.unique(train[:, j][np.isfinite(train[:, j])], return_counts=True)
        ref[j] = vals[np.argmax(counts)] if vals.size else 0.0
    return ref


def make_context(predict_fn, train: np.ndarray, background: np.ndarray, x: np.ndarray, class_names: tuple[str, str],
                 *, num_samples: int = 1000, seed: int = 0, full: bool = True, categories=None, codec=None,
                 reference: np.ndarray | None = None) -> Context:
    """The :class:`Context` of one row: training medians as baseline and reference, a seeded neighborhood.

    Parameters
    ----------
    predict_fn : callable
        ndarray (n, n_features) -> ndarray (n,), P(``class_names[1]``).
    train : ndarray of shape (n_train, n_features)
        Encoded training rows (NaN for missing values).
    background : ndarray of shape (n_background, n_features)
    x : ndarray of shape (n_features,)
    class_names : (negative, positive)
    num_samples : int, default=1000
        Neighborhood size for restricted R² (0 skips it).
    seed : int, default=0
    full : bool, default=True
        Also compute AOPC and deletion/insertion AUC for every step.
    categories : mapping of int to tuple of str, optional
        Level names by code of categorical columns: their reference is the most frequent code and the
        neighborhood draws them from the training values (LIME's binary representation).
    codec : TabularCodec, optional
        The user's encoding, for display.
    reference : ndarray of shape (n_features,), optional
        Precomputed :func:`reference_values` of ``train`` (a service caches it per workspace).
    """
    train = np.asarray(train, float)
    categories = dict(categories or {})
    ref = reference_values(train, categories) if reference is None else np.asarray(reference, float)
    nb = None
    if num_samples:
        with np.errstate(all="ignore"):
            scale = np.nanstd(train, axis=0)
        pools = {j: train[:, j][np.isfinite(train[:, j])] for j in categories}
        nb = make_neighborhood(predict_fn, np.asarray(x, float), scale, num_samples=num_samples, seed=seed,
                               categorical=pools)
    return Context(predict_fn, np.asarray(background, float), ref, ref, tuple(class_names), nb, full, categories,
                   codec=codec)


def simplify(explanation, ctx: Context, *, k: int, rounding=None, groups: Mapping[str, Sequence[str]] | None = None,
             sensitive: Sequence[str] = ()) -> Simplification:
    """The product's default chain: group (O3) → top-k (O1) → round / direction-only (O2/O4) → template (O9).

    Parameters
    ----------
    explanation : Explanation
    ctx : Context
    k : int
        Items kept; clipped to the number of items after grouping.
    rounding : float, "qualitative", "direction" or None
        O2 step, qualitative strengths, O4 direction-only, or exact values.
    groups : mapping of str to sequence of str, optional
        O3 groups; ``None`` skips grouping.
    sensitive : sequence of str
        Named inside any group they are merged into.
    """
    s = describe(explanation, ctx)
    if groups:
        s = group_features(s, groups, ctx, sensitive=sensitive)
    s = top_k_items(s, min(max(int(k), 0), len(s.items)), ctx)
    if rounding == "direction":
        s = direction_only(s, ctx)
    elif rounding is not None:
        s = round_values(s, rounding, ctx)
    return summarize(s, ctx)


@dataclass(frozen=True)
class CurvePoint:
    """One k of :func:`tradeoff_curve`: the items shown and what they cost.

    Parameters
    ----------
    k : int
        Items kept.
    items : tuple of Item
        What the reader sees at this k (after rounding), most important first.
    fidelity_after : dict of str to float
        The requested measures, equal to ``simplify(..., k=k).fidelity_after``'s.
    complexity_after : dict of str to int
        ``n_items`` and ``n_chunks``, equal to ``simplify(..., k=k).complexity_after``'s
        (words and numbers depend on the sentences, which the curve does not render).
    """

    k: int
    items: tuple
    fidelity_after: dict
    complexity_after: dict


def tradeoff_curve(explanation, ctx: Context, *, rounding=None, groups: Mapping[str, Sequence[str]] | None = None,
                   sensitive: Sequence[str] = (), measures: Sequence[str] = CHEAP_MEASURES,
                   max_k: int | None = None) -> tuple[CurvePoint, ...]:
    """The cheap measures of :func:`simplify` for every ``k = 0..items``, with one batched model call.

    Calling :func:`simplify` once per k measures every step of the chain and
    verifies every sentence for each k (one model call per step). The curve
    needs neither. Grouping (O3) precedes O1 in the chain, so it is applied
    once; rounding (O2/O4) acts item by item (the qualitative scale is the
    largest ``|value|``, always among the top k), so it is applied once to
    every item; O1 then keeps the first k in :func:`top_k_items`' order, and
    :func:`attribution_fidelity_many` measures every k together. Every value
    equals the per-k chain's (``tests/explainers/test_persuasive_batched.py``).

    Parameters
    ----------
    explanation : Explanation
    ctx : Context
        ``ctx.full`` is ignored (the curve has no AOPC or deletion/insertion).
    rounding, groups, sensitive
        As in :func:`simplify`.
    measures : sequence of str, default=CHEAP_MEASURES
        Keys of ``fidelity_after`` (see :func:`attribution_fidelity_many`).
    max_k : int, optional
        Largest k measured (default: every item). A table of 10,000 columns has no story of 10,000
        items, and the curve's cost grows with k squared.

    Returns
    -------
    tuple of CurvePoint
        Indexed by k, from 0 to ``min(items, max_k)``.

    References
    ----------
    Herman (2017). The Promise and Peril of Human Evaluation for Model
    Interpretability. arXiv 1711.07414 (the fidelity cost of each simplification).
    """
    cheap = replace(ctx, full=False)  # the steps before O1 only supply items
    s = describe(explanation, cheap)
    if groups:
        s = group_features(s, groups, cheap, sensitive=sensitive)
    shown = s
    if rounding == "direction":
        shown = direction_only(s, cheap)
    elif rounding is not None:
        shown = round_values(s, rounding, cheap)
    # O1's order (top_k_items), applied to the rounded items (rounding keeps order, values and members)
    order = sorted(range(len(s.items)), key=lambda i: (-abs(s.items[i].value), s.items[i].members[0]))
    ranked = [shown.items[i] for i in order]
    e, d = explanation, explanation.values.size
    f, phi, pred, base, flip = predicted_class(e, ctx)
    last = len(ranked) if max_k is None else min(len(ranked), int(max_k))
    steps = [tuple(ranked[:k]) for k in range(last + 1)]
    vectors = [per_feature_values(items, d) for items in steps]
    fids = attribution_fidelity_many(phi, [-v if flip else v for v in vectors],
                                     [[j for it in items for j in it.members] for items in steps],
                                     prediction=pred, base_value=base, predict_fn=f,
                                     x=np.asarray(e.feature_values, float), background=ctx.background,
                                     neighborhood=ctx.neighborhood, measures=measures)
    out = []
    for k, (items, fid) in enumerate(zip(steps, fids)):
        if "additivity_gap" in fid and not all(it.shown is not None for it in items):
            fid["additivity_gap"] = float("nan")
        cx = complexity([], [it.name for it in items], n_items=sum(1 for it in items if it.value != 0 or it.shown))
        out.append(CurvePoint(k, items, fid, {"n_items": cx["n_items"], "n_chunks": cx["n_chunks"]}))
    return tuple(out)


@dataclass(frozen=True)
class AverageCurve:
    """:func:`tradeoff_curve` measures averaged over rows, indexed by k (arrays of shape (n_k,)).

    Parameters
    ----------
    k : ndarray of int
    measures : dict of str to ndarray
        Mean over rows of each measure at each k (``nan`` entries, e.g. Spearman at k = 0, are left
        out of the mean; ``nan`` where every row is).
    std_error : dict of str to ndarray
        Standard error of each mean (sample standard deviation / sqrt(rows)).
    n_rows : int
    """

    k: np.ndarray
    measures: dict
    std_error: dict
    n_rows: int


def average_curve(explanations: Sequence, contexts: Sequence[Context], *, measures: Sequence[str],
                  rounding=None, groups: Mapping[str, Sequence[str]] | None = None,
                  max_k: int | None = None) -> AverageCurve:
    """Mean and standard error of :func:`tradeoff_curve`'s measures over rows (one batched call per row).

    Parameters
    ----------
    explanations : sequence of Explanation
        One per row, over the same features.
    contexts : sequence of Context
        One per row (:func:`make_context`; the neighborhood is only used for ``r2_restricted``).
    measures : sequence of str
        Keys of :data:`CHEAP_MEASURES`.
    rounding, groups
        As in :func:`simplify`.
    max_k : int, optional
        As in :func:`tradeoff_curve`.

    Returns
    -------
    AverageCurve

    Raises
    ------
    ValueError
        If there are no rows, or the two sequences differ in length.
    """
    if not explanations or len(explanations) != len(contexts):
        raise ValueError(f"need one context per explanation and at least one row; got {len(explanations)} "
                         f"explanations and {len(contexts)} contexts")
    table = {m: [] for m in measures}
    for e, ctx in zip(explanations, contexts):
        curve = tradeoff_curve(e, ctx, rounding=rounding, groups=groups, measures=measures, max_k=max_k)
        for m in measures:
            table[m].append([p.fidelity_after[m] for p in curve])
    n = len(explanations)
    means, errors = {}, {}
    for m, rows in table.items():
        a = np.asarray(rows, float)
        counts = np.isfinite(a).sum(axis=0)
        with warnings.catch_warnings():  # a column with no finite value (Spearman at k = 0) is nan, not a warning
            warnings.simplefilter("ignore", RuntimeWarning)
            means[m] = np.nanmean(a, axis=0)
            sd = np.nanstd(a, axis=0, ddof=1)
        errors[m] = np.where(counts > 1, sd / np.sqrt(np.maximum(counts, 1)), np.nan)
    return AverageCurve(np.arange(len(table[measures[0]][0])), means, errors, n)
