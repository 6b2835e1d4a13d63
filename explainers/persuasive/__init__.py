"""The persuasive layer: measured simplification operators over descriptive explanations.

Herman (2017, arXiv 1711.07414) asks that persuasiveness be added to a
descriptive explanation as a separate, explicit step whose fidelity cost is
reported. Each operator here is a pure function from a descriptive object (an
:class:`~explainers.types.Explanation` or a rule surrogate) or a previous
simplification to a new simplification that points back at the descriptive
parent, records fidelity and complexity before and after, and appends itself
to the recorded operator chain (METHODS §2.2–2.4):

- attributions: :func:`top_k_items` (O1), :func:`round_values` (O2, numeric or
  qualitative), :func:`group_features` (O3), :func:`direction_only` (O4),
  :func:`summarize` (O9, verified sentences);
- rules: :func:`prune_rules` (O5), :func:`round_thresholds` (O2),
  :func:`plain_language` (O8).

The older :func:`explainers.simplify_top_k` stays as a fast batched top-k.
"""
from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np

from ._attribution import (Context, Item, PersuasiveSimplification, chain, describe, direction_only, group_features,
                           per_feature_values, predicted_sign, render_lines, round_half_away, round_values, strength,
                           top_k_items)
from ._groups import correlated_groups, group_attributions, one_hot_groups
from ._guard import DroppedFeature, GilpinLabel, GuardrailNote, gilpin_label, guardrail, what_was_dropped
from ._language import KINDS, ClaimCheck, Sentence, SentenceCheck, compose, partition_of, summarize, verify_sentence
from ._measures import (Neighborhood, aopc, attribution_fidelity, complexity, curve_auc, deletion_curve,
                        explanation_order, importance_order, insertion_curve, make_neighborhood, restricted_r2)
from ._rules import (Phrase, RuleSimplification, ShownRule, as_rules, nice_number, plain_language, prune_rules,
                     round_thresholds, rule_predictions)

__all__ = [
    "aopc", "as_rules", "attribution_fidelity", "chain", "ClaimCheck", "complexity", "compose", "Context",
    "correlated_groups", "curve_auc", "deletion_curve", "describe", "direction_only", "DroppedFeature",
    "explanation_order", "gilpin_label", "GilpinLabel", "group_attributions", "group_features", "guardrail",
    "GuardrailNote", "importance_order", "insertion_curve", "Item", "KINDS", "make_context", "make_neighborhood",
    "Neighborhood", "nice_number", "one_hot_groups", "partition_of", "per_feature_values",
    "PersuasiveSimplification", "Phrase", "plain_language", "predicted_sign", "prune_rules", "render_lines",
    "restricted_r2", "round_half_away", "round_thresholds", "round_values", "rule_predictions",
    "RuleSimplification", "Sentence", "SentenceCheck", "ShownRule", "simplify", "strength", "summarize",
    "top_k_items", "verify_sentence", "what_was_dropped",
]


def make_context(predict_fn, train: np.ndarray, background: np.ndarray, x: np.ndarray, class_names: tuple[str, str],
                 *, num_samples: int = 1000, seed: int = 0, full: bool = True) -> Context:
    """A :class:`Context` for one row: training medians as baseline and reference, a seeded neighborhood.

    Parameters
    ----------
    predict_fn : callable
        ndarray (n, n_features) -> ndarray (n,), P(``class_names[1]``).
    train : ndarray of shape (n_train, n_features)
    background : ndarray of shape (n_background, n_features)
    x : ndarray of shape (n_features,)
    class_names : (negative, positive)
    num_samples : int, default=1000
        Neighborhood size for restricted R² (0 skips it).
    seed : int, default=0
    full : bool, default=True
        Also compute AOPC and deletion/insertion AUC for every step.
    """
    train = np.asarray(train, float)
    med = np.median(train, axis=0)
    nb = (make_neighborhood(predict_fn, x, train.std(axis=0), num_samples=num_samples, seed=seed)
          if num_samples else None)
    return Context(predict_fn, np.asarray(background, float), med, med, tuple(class_names), nb, full)


def simplify(explanation, ctx: Context, *, k: int, rounding=None, groups: Mapping[str, Sequence[str]] | None = None,
             sensitive: Sequence[str] = ()) -> PersuasiveSimplification:
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
