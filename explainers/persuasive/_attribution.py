"""Operators O1–O4 on attribution explanations, each a pure function returning a measured simplification.

Herman (2017, arXiv 1711.07414): the descriptive explanation comes first and
persuasiveness is a separate, measured step. Every operator here takes an
:class:`~explainers.types.Explanation` (the descriptive parent) or the result of
another operator, returns a :class:`Simplification` whose ``parent``
is the descriptive explanation, appends ``(name, params)`` to ``operators``,
links the step it came from in ``previous``, and records fidelity
(:func:`~explainers.persuasive._measures.attribution_fidelity`) and complexity
before (the parent) and after. Operators never re-fit anything.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Mapping, Sequence

import numpy as np

from .._codec import MISSING, value_labels
from ..numbers import plain
from ..types import Explanation, Simplification
from ._measures import Neighborhood, PredictFn, attribution_fidelity, complexity

__all__ = ["Item", "Context", "Simplification", "describe", "top_k_items", "round_values",
           "direction_only", "group_features", "strength", "round_half_away", "per_feature_values",
           "render_lines", "chain", "predicted_sign", "value_texts"]

STRENGTHS = ((0.5, "strong"), (0.2, "moderate"), (0.0, "weak"))


@dataclass(frozen=True)
class Item:
    """One displayed entry: a feature or a named group of features.

    Parameters
    ----------
    name : str
        Display name (feature name, or group name).
    members : tuple of int
        Indices of the parent's features it stands for.
    value : float
        Exact attribution: the signed sum of the members' attributions (output units).
    shown : float or None
        The number displayed (rounded by O2), or None when no number is shown.
    strength : str or None
        ``"strong"``, ``"moderate"`` or ``"weak"`` (qualitative O2), else None.
    tolerance : float
        Largest allowed ``|shown - value|`` (half the rounding step), checked by the verifier.
    """

    name: str
    members: tuple[int, ...]
    value: float
    shown: float | None
    strength: str | None = None
    tolerance: float = 0.0


@dataclass(frozen=True)
class Context:
    """What measuring and wording a simplification needs, computed once per row.

    Parameters
    ----------
    predict_fn : callable
        ndarray (n, n_features) -> ndarray (n,), the explained output (P(positive class)).
    background : ndarray of shape (n_background, n_features)
        Values removed features take in ERASER measures.
    baseline : ndarray of shape (n_features,)
        Deletion/insertion baseline (training medians) [D].
    reference : ndarray of shape (n_features,)
        Typical values "high"/"low" refer to (training medians).
    class_names : (str, str)
        (negative, positive); ``values`` explain the positive class.
    neighborhood : Neighborhood, optional
        For restricted local R².
    full : bool, default=True
        Compute AOPC and deletion/insertion curves too.
    categories : mapping of int to tuple of str, default={}
        Level names by code for categorical features (encoded as codes); the
        sentences then say "is <level>" instead of "high"/"low".
    codec : TabularCodec, optional
        The user's encoding (:class:`~explainers._codec.TabularCodec`): values
        are then shown as levels and dates everywhere (category columns need no
        ``categories`` entry; datetime columns are said as dates).
    """

    predict_fn: PredictFn
    background: np.ndarray
    baseline: np.ndarray
    reference: np.ndarray
    class_names: tuple[str, str]
    neighborhood: Neighborhood | None = None
    full: bool = True
    categories: dict = field(default_factory=dict)
    codec: object = None


def round_half_away(v: float, step: float) -> float:
    """``step * round_half_away_from_zero(v / step)`` (docs/methods.md, "Persuasive layer", O2)."""
    q = abs(v) / step
    r = math.floor(q + 0.5) * step
    return math.copysign(r, v) if r else 0.0


def strength(share: float) -> str:
    """Qualitative label of ``|φ| / max|φ|``: strong ≥ 0.5, moderate ≥ 0.2, else weak (docs/methods.md, "Persuasive layer", O2)."""
    return next(label for cut, label in STRENGTHS if share >= cut)


def _fmt(v: float) -> str:
    return plain(v, 3, signed=True, trim=True)


def value_texts(e: Explanation, ctx: Context) -> tuple[str, ...] | None:
    """The row's values as a reader sees them: levels and dates from ``ctx``, numbers to 3 digits.

    Returns
    -------
    tuple of str, length n_features, or None
        None when ``ctx`` has neither a codec nor categories (all values are numbers).
    """
    if ctx.codec is not None:
        return value_labels(e.feature_values, ctx.codec, ".3g")
    if not ctx.categories:
        return None
    out = []
    for j, v in enumerate(np.asarray(e.feature_values, dtype=float)):
        levels = ctx.categories.get(j)
        out.append(MISSING if not math.isfinite(v) and levels else
                   str(levels[int(min(max(round(v), 0), len(levels) - 1))]) if levels else plain(v, 3, trim=True))
    return tuple(out)


def render_lines(items: Sequence[Item], explanation: Explanation, labels: Sequence[str] | None = None) -> list[str]:
    """One display line per item, e.g. ``"worst radius = 16.8: +0.12"`` (what complexity counts).

    ``labels`` (one per feature, e.g. from :func:`value_texts`) replaces the
    values printed with 3 significant digits: ``"colour = blue: +0.12"``.
    """
    lines = []
    for it in items:
        j = it.members[0]
        value = labels[j] if labels is not None else plain(explanation.feature_values[j], 3, trim=True)
        label = f"{it.name} = {value}" if len(it.members) == 1 else f"{it.name} ({len(it.members)} features)"
        if it.shown is not None:
            lines.append(f"{label}: {_fmt(it.shown)}")
        elif it.strength is not None:
            lines.append(f"{label}: {it.strength} {'up' if it.value > 0 else 'down'}")
        else:
            lines.append(f"{label}: {'up' if it.value > 0 else 'down' if it.value < 0 else 'none'}")
    return lines


def per_feature_values(items: Sequence[Item], n_features: int) -> np.ndarray:
    """Per-feature vector the reader is shown, shape (n_features,).

    A group's number is split evenly over its members (completeness kept); with
    no number shown (direction-only, qualitative), items get ``sign * (m - rank)``
    scaled to the largest exact ``|value|`` so only order and sign carry meaning.
    """
    out = np.zeros(n_features)
    m = len(items)
    vmax = max((abs(it.value) for it in items), default=0.0)
    for r, it in enumerate(items):
        v = it.shown if it.shown is not None else np.sign(it.value) * (m - r) / m * vmax
        out[list(it.members)] = v / len(it.members)
    return out


def predicted_sign(e: Explanation) -> float:
    """+1 if the explained class is the predicted one, else -1 (probability ≥ 0.5, log-odds ≥ 0; raw: +1)."""
    cut = {"probability": 0.5, "log_odds": 0.0}.get(e.output_space)
    return 1.0 if cut is None or e.prediction >= cut else -1.0


def predicted_class(e: Explanation, ctx: Context):
    """``(predict_fn, φ, g(x), φ_0, flip)`` for the predicted class, as every measure takes them.

    For a row predicted negative, P(neg) = 1 - P(pos) (log-odds and raw outputs negate) and the
    attributions negate; ``flip`` says so, for the shown values to negate too (ERASER [D]).
    """
    if predicted_sign(e) >= 0:
        return ctx.predict_fn, e.values, e.prediction, e.base_value, False
    if e.output_space == "probability":  # P(neg) = 1 - P(pos)
        return (lambda a: 1.0 - ctx.predict_fn(a)), -e.values, 1.0 - e.prediction, 1.0 - e.base_value, True
    return (lambda a: -ctx.predict_fn(a)), -e.values, -e.prediction, -e.base_value, True


def _measure(e: Explanation, items: Sequence[Item], ctx: Context) -> dict:
    shown = per_feature_values(items, e.values.size)
    numbers = all(it.shown is not None for it in items)
    members = [j for it in items for j in it.members]
    f, phi, pred, base, flip = predicted_class(e, ctx)
    shown = -shown if flip else shown
    out = attribution_fidelity(phi, shown, members, prediction=pred, base_value=base, predict_fn=f,
                               x=np.asarray(e.feature_values, float), background=ctx.background,
                               baseline=ctx.baseline, neighborhood=ctx.neighborhood, full=ctx.full)
    if not numbers:
        out["additivity_gap"] = float("nan")
    return out


def _complexity(e: Explanation, items: Sequence[Item], ctx: Context, statement: str = "") -> dict:
    lines = render_lines(items, e, value_texts(e, ctx)) + ([statement] if statement else [])
    return complexity(lines, [it.name for it in items], n_items=sum(1 for it in items if it.value != 0 or it.shown))


def describe(e: Explanation, ctx: Context) -> Simplification:
    """The identity view: every feature, exact values, no operator; fidelity after = before."""
    items = tuple(Item(n, (j,), float(v), float(v)) for j, (n, v) in
                  enumerate(zip(e.feature_names, e.values)))
    order = np.lexsort((np.arange(e.values.size), -np.abs(e.values)))
    items = tuple(items[j] for j in order)
    fid, cx = _measure(e, items, ctx), _complexity(e, items, ctx)
    return Simplification(parent=e, operators=(), kept=tuple(e.feature_names), dropped=(),
                                    values=e.values.copy(), statement="", fidelity_before=fid, fidelity_after=fid,
                                    complexity_before=cx, complexity_after=cx, items=items)


def _start(obj, ctx: Context) -> Simplification:
    if isinstance(obj, Simplification):
        return obj
    if isinstance(obj, Explanation):
        return describe(obj, ctx)
    raise TypeError(f"expected an Explanation or a Simplification, got {type(obj).__name__}")


def _step(prev: Simplification, name: str, params: dict, items: Sequence[Item], ctx: Context, *,
          measure: bool = True, statement: str = "", sentences: tuple = ()) -> Simplification:
    e = prev.parent
    items = tuple(items)
    shown = {j for it in items for j in it.members}
    fid = _measure(e, items, ctx) if measure else dict(prev.fidelity_after)
    return Simplification(
        parent=e, operators=prev.operators + ((name, params),),
        kept=tuple(e.feature_names[j] for j in sorted(shown)),
        dropped=tuple(e.feature_names[j] for j in range(e.values.size) if j not in shown),
        values=per_feature_values(items, e.values.size), statement=statement,
        fidelity_before=prev.fidelity_before, fidelity_after=fid, complexity_before=prev.complexity_before,
        complexity_after=_complexity(e, items, ctx, statement), items=items, previous=prev, sentences=sentences)


def top_k_items(obj, k: int, ctx: Context) -> Simplification:
    """O1: keep the ``k`` items with the largest ``|value|`` (ties by first member index).

    Parameters
    ----------
    obj : Explanation or Simplification
    k : int
        ``0 <= k <= number of items``.
    ctx : Context

    Returns
    -------
    Simplification
        docs/methods.md, "Tests with exact oracles", T10: with ``k`` = all items every fidelity measure equals the parent's.

    Raises
    ------
    ValueError
        If ``k`` is out of range.

    References
    ----------
    Herman (2017). The Promise and Peril of Human Evaluation for Model
    Interpretability. arXiv 1711.07414.
    """
    prev = _start(obj, ctx)
    m = len(prev.items)
    if not 0 <= int(k) <= m:
        raise ValueError(f"k must be between 0 and {m}, got {k}")
    order = sorted(range(m), key=lambda i: (-abs(prev.items[i].value), prev.items[i].members[0]))
    return _step(prev, "top_k", {"k": int(k)}, [prev.items[i] for i in order[:int(k)]], ctx)


def round_values(obj, step, ctx: Context) -> Simplification:
    """O2: round each shown value to a multiple of ``step``, or to a qualitative strength.

    Parameters
    ----------
    step : float, "qualitative" or None
        A positive step (e.g. 0.05: ``|shown - value| <= step / 2``, asserted);
        ``"qualitative"``: strong/moderate/weak by ``|value| / max|value|``, no
        number shown; ``None``: identity (still recorded).

    Raises
    ------
    ValueError
        If ``step`` is not positive.
    """
    prev = _start(obj, ctx)
    if step is None:
        return _step(prev, "round", {"step": None}, prev.items, ctx, measure=False)
    if step == "qualitative":
        vmax = max((abs(it.value) for it in prev.items), default=0.0) or 1.0
        items = [replace(it, shown=None, strength=strength(abs(it.value) / vmax)) for it in prev.items]
        return _step(prev, "round", {"step": "qualitative"}, items, ctx)
    s = float(step)
    if not s > 0:
        raise ValueError(f"rounding step must be positive, 'qualitative' or None, got {step!r}")
    items = [replace(it, shown=round_half_away(it.value, s), tolerance=s / 2 + 1e-12) for it in prev.items]
    assert all(abs(it.shown - it.value) <= s / 2 + 1e-12 for it in items)
    return _step(prev, "round", {"step": s}, items, ctx)


def direction_only(obj, ctx: Context) -> Simplification:
    """O4: show only each item's sign and rank (no numbers)."""
    prev = _start(obj, ctx)
    items = [replace(it, shown=None, strength=None) for it in prev.items]
    return _step(prev, "direction_only", {}, items, ctx)


def group_features(obj, groups: Mapping[str, Sequence[str]], ctx: Context, *,
                   sensitive: Sequence[str] = ()) -> Simplification:
    """O3: merge the items of each group into one named item whose value is the signed sum.

    Parameters
    ----------
    groups : mapping of str to sequence of str
        Group name -> member feature names (e.g. from
        :func:`~explainers.persuasive.correlated_groups` or
        :func:`~explainers.persuasive.one_hot_groups`). Only members still
        shown are merged; a group with fewer than two shown members is left alone.
    sensitive : sequence of str
        Features that may never be merged silently: a group containing one is
        named ``"<name> (incl. <feature>)"`` (Lakkaraju & Bastani 2020, arXiv 1911.06473).

    Returns
    -------
    Simplification
        Completeness is kept exactly: the sum of shown values does not change.
    """
    prev = _start(obj, ctx)
    e = prev.parent
    index = {n: j for j, n in enumerate(e.feature_names)}
    unknown = sorted({f for fs in groups.values() for f in fs} - set(index))
    if unknown:
        raise ValueError(f"group members not among the features: {unknown}")
    items, used = [], set()
    for name, feats in groups.items():
        cols = {index[f] for f in feats}
        inside = [it for it in prev.items if set(it.members) <= cols and id(it) not in used]
        if len(inside) < 2:
            continue
        used |= {id(it) for it in inside}
        members = tuple(sorted(j for it in inside for j in it.members))
        flagged = [e.feature_names[j] for j in members if e.feature_names[j] in set(sensitive)]
        label = name + (f" (incl. {', '.join(flagged)})" if flagged else "")
        value = float(e.values[list(members)].sum())
        items.append(Item(label, members, value, value))
    items += [it for it in prev.items if id(it) not in used]
    items.sort(key=lambda it: (-abs(it.value), it.members[0]))
    return _step(prev, "group", {"groups": {k: list(v) for k, v in groups.items()}}, items, ctx)


def chain(s: Simplification) -> list[Simplification]:
    """The steps from the identity view to ``s``, in application order."""
    steps = []
    while s is not None:
        steps.append(s)
        s = s.previous
    return steps[::-1]
