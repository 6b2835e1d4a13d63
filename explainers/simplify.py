"""The persuasive layer's first operator: top-k truncation with a templated sentence.

Herman (2017, "The Promise and Peril of Human Evaluation for Model
Interpretability", arXiv 1711.07414) asks that the descriptive explanation come
first and that persuasiveness be added as a separate step whose cost is
measured. :func:`simplify_top_k` is that step for attributions (operators O1
and O9 of ``shared/METHODS.md`` §2.3): it keeps the k largest ``|attribution|``,
renders one sentence from them, and records what was lost: the share of
``|attribution|`` mass dropped and ERASER sufficiency and comprehensiveness
(DeYoung et al. 2020, arXiv 1911.03429) with the dropped features set to the
background (an interventional expectation, as SHAP's value function). The full operator
set (rounding, grouping, direction-only, rule pruning, verified sentences) is
:mod:`explainers.persuasive`; this module stays the fast batched top-k.
"""
from __future__ import annotations

import re
from typing import Callable

import numpy as np

from .metrics import top_k
from .types import Explanation, Simplification

__all__ = ["masked_output", "sufficiency", "comprehensiveness", "summary_sentence", "simplify_top_k",
           "simplify_top_k_all"]

PredictFn = Callable[[np.ndarray], np.ndarray]


def masked_output(predict_fn: PredictFn, x: np.ndarray, keep: np.ndarray, background: np.ndarray) -> float:
    """Expected model output when only the features ``keep`` take their values from ``x``.

    Every other feature takes its value from each background row in turn; the
    outputs are averaged: ``E_b[f(x_S, b_{\\bar S})]``.

    Parameters
    ----------
    predict_fn : callable
        ndarray (n, n_features) -> ndarray (n,) of the explained output.
    x : ndarray of shape (n_features,)
    keep : ndarray of int
        Indices of the kept features (may be empty).
    background : ndarray of shape (n_background, n_features)

    Returns
    -------
    output : float, in the units of ``predict_fn``.
    """
    x = np.asarray(x, dtype=float)
    grid = np.array(background, dtype=float, copy=True)
    if len(keep):
        grid[:, np.asarray(keep, dtype=int)] = x[np.asarray(keep, dtype=int)]
    return float(np.mean(predict_fn(grid)))


def sufficiency(predict_fn: PredictFn, x, keep, background) -> float:
    """ERASER sufficiency ``f(x) - f(x_S only)``; 0 when the kept features suffice."""
    full = float(predict_fn(np.asarray(x, dtype=float)[None, :])[0])
    return full - masked_output(predict_fn, x, keep, background)


def comprehensiveness(predict_fn: PredictFn, x, removed, background) -> float:
    """ERASER comprehensiveness ``f(x) - f(x without S)``; exactly 0 for an empty ``removed``."""
    x = np.asarray(x, dtype=float)
    removed = np.asarray(removed, dtype=int)
    full = float(predict_fn(x[None, :])[0])
    if removed.size == 0:
        return 0.0
    keep = np.setdiff1d(np.arange(x.size), removed)
    return full - masked_output(predict_fn, x, keep, background)


def _fmt(v: float) -> str:
    return f"{v:.3g}"


def summary_sentence(explanation: Explanation, kept: np.ndarray, reference: np.ndarray,
                     class_names: tuple[str, str], mass_share: float) -> str:
    """One plain-language sentence from the kept attributions (template O9).

    Parameters
    ----------
    explanation : Explanation
        Binary classification, ``values`` explaining P(``class_names[1]``).
    kept : ndarray of int
        Indices of the features to mention, most important first.
    reference : ndarray of shape (n_features,)
        Typical values (training medians) that "high" and "low" refer to.
    class_names : (negative, positive)
    mass_share : float
        Share of total ``|attribution|`` that supports the prediction and is
        mentioned; "mainly" is used only when it is at least 0.5, else "partly".

    Returns
    -------
    sentence : str
        Every feature, direction and number in it is read from ``explanation``.
    """
    positive = explanation.prediction >= 0.5
    label = class_names[1] if positive else class_names[0]
    sign = 1.0 if positive else -1.0
    phrase = []
    against = []
    for j in kept:
        name, v, ref = explanation.feature_names[j], float(explanation.feature_values[j]), float(reference[j])
        level = "high" if v > ref else ("low" if v < ref else "typical")
        cmp = ">" if v > ref else ("<" if v < ref else "=")
        text = f"{name} is {level} ({_fmt(v)} {cmp} median {_fmt(ref)})"
        (phrase if explanation.values[j] * sign > 0 else against).append(text)
    head = (f"The model predicts {label} (probability of {class_names[1]} "
            f"{explanation.prediction:.2f}, {explanation.base_value:.2f} on average)")
    if phrase:
        head += f" {'mainly' if mass_share >= 0.5 else 'partly'} because " + _join(phrase)
    if against:
        head += (", although " if phrase else " although ") + _join(against)
    return head + "."


def _join(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _complexity(n_items: int, text: str) -> dict:
    return {"n_items": n_items, "n_words": len(text.split()),
            "n_numbers": len(re.findall(r"-?\d+(?:\.\d+)?(?:e-?\d+)?", text))}


def _masked_outputs(predict_fn: PredictFn, x: np.ndarray, keep_sets: list[np.ndarray],
                    background: np.ndarray) -> np.ndarray:
    """:func:`masked_output` for many kept sets with one call of ``predict_fn`` (shape (n_sets,))."""
    bg = np.asarray(background, dtype=float)
    grid = np.tile(bg, (len(keep_sets), 1))
    for i, keep in enumerate(keep_sets):
        if len(keep):
            grid[i * len(bg):(i + 1) * len(bg), np.asarray(keep, dtype=int)] = x[np.asarray(keep, dtype=int)]
    return np.asarray(predict_fn(grid), dtype=float).reshape(len(keep_sets), len(bg)).mean(axis=1)


def simplify_top_k(explanation: Explanation, k: int, *, predict_fn: PredictFn, background: np.ndarray,
                   reference: np.ndarray, class_names: tuple[str, str]) -> Simplification:
    """Keep the k largest ``|attribution|`` and measure what the truncation costs.

    Parameters
    ----------
    explanation : Explanation
        The descriptive explanation (its ``values`` explain ``predict_fn``'s output).
    k : int
        Number of features kept, ``0 <= k <= n_features``.
    predict_fn : callable
        ndarray (n, n_features) -> ndarray (n,), the explained output.
    background : ndarray of shape (n_background, n_features)
        Values that dropped features are set to.
    reference : ndarray of shape (n_features,)
        Typical values for the sentence ("high" / "low").
    class_names : (negative, positive)

    Returns
    -------
    Simplification
        ``fidelity_before``/``fidelity_after`` hold ``mass_retained`` (share of
        ``|attribution|``), ``output`` (model output with only the shown
        features kept, the rest from the background), ``sufficiency`` and
        ``comprehensiveness``; the complexity dicts count items, words, numbers.

    Raises
    ------
    ValueError
        If ``k`` is outside ``[0, n_features]``.
    """
    return simplify_top_k_all(explanation, [k], predict_fn=predict_fn, background=background,
                              reference=reference, class_names=class_names)[0]


def simplify_top_k_all(explanation: Explanation, ks, *, predict_fn: PredictFn, background: np.ndarray,
                       reference: np.ndarray, class_names: tuple[str, str]) -> tuple[Simplification, ...]:
    """:func:`simplify_top_k` for several k at once, with a single batched call of ``predict_fn``.

    Parameters
    ----------
    ks : sequence of int
        Each in ``[0, n_features]``; results come back in the same order.

    Returns
    -------
    tuple of Simplification
        Identical to calling :func:`simplify_top_k` for each k.
    """
    d = explanation.values.size
    ks = [int(k) for k in ks]
    bad = [k for k in ks if not 0 <= k <= d]
    if bad:
        raise ValueError(f"k must be between 0 and {d}, got {bad[0]}")
    x = np.asarray(explanation.feature_values, dtype=float)
    order = top_k(explanation.values, d)
    every = np.arange(d)
    # per k: output with only top-k kept, output with top-k removed; plus f(x) and f(nothing kept)
    sets = [every, np.array([], dtype=int)]
    for k in ks:
        sets += [order[:k], order[k:]]
    outs = _masked_outputs(predict_fn, x, sets, background)
    full_output, empty_output = float(outs[0]), float(outs[1])
    total = float(np.abs(explanation.values).sum())
    sign = 1.0 if explanation.prediction >= 0.5 else -1.0
    names = explanation.feature_names
    full_text = None
    results = []
    for i, k in enumerate(ks):
        kept, dropped = order[:k], np.sort(order[k:])
        mass = float(np.abs(explanation.values[kept]).sum()) / total if total else 1.0
        support = float(np.clip(explanation.values[kept] * sign, 0, None).sum()) / total if total else 0.0
        if full_text is None:
            full_support = float(np.clip(explanation.values * sign, 0, None).sum()) / total if total else 0.0
            full_text = summary_sentence(explanation, order, reference, class_names, full_support)
        values = np.zeros(d)
        values[kept] = explanation.values[kept]
        statement = summary_sentence(explanation, kept, reference, class_names, support) if k else ""
        kept_out, removed_out = float(outs[2 + 2 * i]), float(outs[3 + 2 * i])
        results.append(Simplification(
            parent=explanation,
            operators=(("top_k", {"k": k}), ("template_sentence", {"reference": "training median"})),
            kept=tuple(names[j] for j in kept), dropped=tuple(names[j] for j in dropped), values=values,
            statement=statement,
            fidelity_before={"mass_retained": 1.0, "output": full_output, "sufficiency": 0.0,
                             "comprehensiveness": full_output - empty_output},
            fidelity_after={"mass_retained": mass, "output": kept_out, "sufficiency": full_output - kept_out,
                            "comprehensiveness": full_output - removed_out if k else 0.0},
            complexity_before=_complexity(d, full_text),
            complexity_after=_complexity(k, statement),
        ))
    return tuple(results)
