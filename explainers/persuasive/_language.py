"""O9 templated summary with verified language: every claim is checked against the descriptive layer.

Each sentence is rendered from a template and its slots only, never free text.
:func:`verify_sentence` re-renders the text from the slots (so text and claims
cannot diverge), derives the sentence's claims (class, numbers, direction,
rank, level, magnitude words such as "mainly", strength) and checks each one
against the parent :class:`~explainers.types.Explanation`, not against the
simplification that produced it. :func:`summarize` keeps only sentences whose
every claim holds (docs/methods.md, "Persuasive layer", O9 consistency check; Herman 2017,
arXiv 1711.07414).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from .._column_code import date_text
from ..numbers import parse_plain, plain
from ..types import Explanation, Simplification
from ._attribution import Context, _start, _step, strength

__all__ = ["Sentence", "ClaimCheck", "SentenceCheck", "compose", "verify_sentence", "summarize", "KINDS"]

KINDS = ("prediction", "item", "summary", "hidden")
_ADVERB = {"strong": "strongly", "moderate": "moderately", "weak": "weakly"}


@dataclass(frozen=True)
class Sentence:
    """A rendered sentence: ``kind`` (one of :data:`KINDS`), its ``slots`` and ``text``."""

    kind: str
    slots: tuple
    text: str


@dataclass(frozen=True)
class ClaimCheck:
    """One claim of a sentence and whether the descriptive explanation supports it."""

    claim: str
    ok: bool
    detail: str


@dataclass(frozen=True)
class SentenceCheck:
    """A sentence and its claim-by-claim check; ``ok`` only if every claim holds."""

    sentence: Sentence
    checks: tuple[ClaimCheck, ...]

    @property
    def ok(self) -> bool:
        return all(c.ok for c in self.checks)


def _sig(v: float, digits: int = 3) -> tuple[str, float]:
    """``v`` with ``digits`` significant digits and half a unit in the last place as tolerance."""
    if v == 0 or not math.isfinite(v):
        return "0", 1e-12
    text = plain(v, digits, trim=True)  # never "1.33e+03" (explainers.numbers)
    return text, 0.5 * 10 ** (math.floor(math.log10(abs(parse_plain(text)))) - digits + 1) + 1e-12


def output_quantity(output_space: str) -> tuple[str, float]:
    """What a binary explanation's numbers are, in words, and the output at which the class flips.

    A probability flips at 0.5 and log-odds at 0 (a logistic model explained in its margin: a first user saw
    "move the probability of 1 from -0.14 on average to -3.26").

    Returns
    -------
    quantity : str
        ``"probability"``, ``"log-odds"`` or ``"output"``.
    threshold : float
        0.5, 0.0, or 0.5 for a raw output.
    """
    if output_space == "log_odds":
        return "log-odds", 0.0
    if output_space == "probability":
        return "probability", 0.5
    return "output", 0.5


def _ordinal(r: int) -> str:
    return "Strongest factor" if r == 1 else f"{r}{'nd' if r == 2 else 'rd' if r == 3 else 'th'} factor"


def _render(kind: str, s: dict) -> str:
    if kind == "prediction":
        return (f"The model predicts {s['label']}: its features move the {s.get('quantity', 'probability')} of {s['positive']} "
                f"from {s['base']} on average to {s['prediction']}.")
    if kind == "item":
        head = f"{_ordinal(s['rank'])}: {s['name']}"
        unit = s.get("unit", "")
        head += (f" is {s['level']} ({s['x']}{unit} vs median {s['median']}{unit})" if s.get("level")
                 else f" is {s['category']}" if "category" in s else f" ({s['n_members']} features together)")
        push = f"pushes {_ADVERB[s['strength']] + ' ' if s.get('strength') else ''}towards {s['towards']}"
        return f"{head}, which {push}{' by about ' + s['amount'] if s.get('amount') else ''}."
    if kind == "summary":
        return (f"The named factors that support {s['label']} carry {s['share']}% of the total |attribution|, "
                f"so the prediction rests {s['word']} on them.")
    if kind == "hidden":
        one = s["n"] == 1
        return (f"{s['n']} feature{'' if one else 's'} not named here {'carries' if one else 'carry'} {s['share']}% "
                f"of the total |attribution| and {'pushes' if one else 'together push'} towards {s['towards']} "
                f"by {s['net']}.")
    raise ValueError(f"unknown sentence kind {kind!r}; expected one of {KINDS}")


def _category(code: float, levels) -> str:
    """Display text of a categorical (or missing, or non-comparable numeric) value."""
    if not math.isfinite(code):
        return "missing"
    if levels:
        return str(levels[int(min(max(round(code), 0), len(levels) - 1))])
    return _sig(code)[0]


def _unit(j: int, ctx: Context) -> tuple[float, str]:
    """The user's unit of feature ``j`` from the features file (``ctx.codec``'s display format): ``(scale, text)``.

    A percentage is said as ``12.5 %`` (scale 100), a unit as ``14.1 µm``; the sentence keeps three significant
    digits so the verifier reads the same number back. ``(1.0, "")`` without a format.
    """
    col = ctx.codec.columns[j] if ctx.codec is not None and j < len(ctx.codec.columns) else None
    display = getattr(col, "display", None)
    if display is None:
        return 1.0, ""
    if getattr(display, "percent", False):
        return 100.0, " %"
    unit = str(getattr(display, "unit", "") or "")
    return 1.0, (f" {unit}" if unit else "")


def _value_slots(j: int, v: float, ref: float, ctx: Context) -> dict | None:
    """Slots naming the value of a category or datetime feature (None: say "high"/"low" vs the median).

    Levels come from ``ctx.categories``, else from ``ctx.codec``; a datetime
    column of ``ctx.codec`` is said as its date.
    """
    col = ctx.codec.columns[j] if ctx.codec is not None and j < len(ctx.codec.columns) else None
    if col is not None and col.kind == "datetime":
        return dict(category="missing" if not math.isfinite(v) else date_text(v, col.timed), levels=(),
                    date="timed" if col.timed else "day")
    levels = ctx.categories.get(j) or (tuple(col.label(float(i)) for i in range(len(col.levels)))
                                       if col is not None and col.kind == "category" else None)
    if levels or not math.isfinite(v) or not math.isfinite(ref):
        return dict(category=_category(v, levels), levels=tuple(levels or ()))
    return None


def _make(kind: str, **slots) -> Sentence:
    return Sentence(kind, tuple(sorted(slots.items())), _render(kind, slots))


def compose(s: Simplification, ctx: Context) -> list[Sentence]:
    """Every sentence the template produces for a simplification (before verification).

    One ``prediction`` sentence, one ``item`` sentence per shown item (rank,
    level and value of a single feature or the size of a group; direction; the
    shown number or strength), a ``summary`` sentence with "mainly" (named
    supporting features carry at least half of total ``|attribution|``) or
    "partly", and a ``hidden`` sentence when features are not named.
    """
    e, neg, pos = s.parent, ctx.class_names[0], ctx.class_names[1]
    quantity, threshold = output_quantity(e.output_space)
    label = pos if e.prediction >= threshold else neg
    slots = dict(label=label, positive=pos, base=f"{e.base_value:.2f}", prediction=f"{e.prediction:.2f}")
    if quantity != "probability":
        slots["quantity"] = quantity
    out = [_make("prediction", **slots)]
    total = float(np.abs(e.values).sum()) or 1.0
    sign = 1.0 if e.prediction >= threshold else -1.0
    support = 0.0
    for r, it in enumerate(s.items, start=1):
        slots = dict(rank=r, name=it.name, members=it.members, towards=pos if it.value > 0 else neg)
        if len(it.members) == 1:
            j = it.members[0]
            v, ref = float(e.feature_values[j]), float(ctx.reference[j])
            named = _value_slots(j, v, ref, ctx)
            if named is not None:
                slots.update(named)
            else:
                scale, unit = _unit(j, ctx)
                slots.update(level="high" if v > ref else "low" if v < ref else "typical", x=_sig(v * scale)[0],
                             median=_sig(ref * scale)[0], reference=ref)
                if unit:
                    slots.update(unit=unit, scale=scale)
        else:
            slots.update(n_members=len(it.members))
        if it.shown is not None:
            text, tol = _sig(it.shown) if it.tolerance == 0 else (f"{abs(it.shown):.{_decimals(it.tolerance)}f}",
                                                                  it.tolerance)
            slots.update(amount=text.lstrip("-"), tolerance=tol)
        elif it.strength is not None:
            slots.update(strength=it.strength)
        out.append(_make("item", **slots))
        support += max(it.value * sign, 0.0)
    if s.items:
        share = 100 * support / total
        out.append(_make("summary", label=label, share=f"{share:.0f}", word="mainly" if share >= 50 else "partly",
                         members=tuple(tuple(it.members) for it in s.items)))
    dropped = set(s.dropped)  # once: built per feature, it cost 10,000² steps on a 10,000-column row (issue 27)
    hidden = tuple(j for j in range(e.values.size) if e.feature_names[j] in dropped)
    if hidden:
        net = float(e.values[list(hidden)].sum())
        out.append(_make("hidden", n=len(hidden), share=f"{100 * np.abs(e.values[list(hidden)]).sum() / total:.0f}",
                         towards=pos if net >= 0 else neg, net=_sig(abs(net))[0], members=hidden))
    return out


def _decimals(tol: float) -> int:
    """Decimals needed to print multiples of the rounding step ``2 * tol`` exactly."""
    step = 2 * tol
    return next((d for d in range(10) if abs(step * 10 ** d - round(step * 10 ** d)) < 1e-6), 10)


def _check(name: str, ok: bool, detail: str) -> ClaimCheck:
    return ClaimCheck(name, bool(ok), detail)


def _item_values(e: Explanation, partition: Sequence[Sequence[int]]) -> list[tuple[tuple[int, ...], float]]:
    return [(tuple(m), float(e.values[list(m)].sum())) for m in partition]


def verify_sentence(sentence: Sentence, explanation: Explanation, *, partition: Sequence[Sequence[int]],
                    class_names: tuple[str, str], threshold: float | None = None) -> SentenceCheck:
    """Check every claim of ``sentence`` against the descriptive ``explanation``.

    Parameters
    ----------
    sentence : Sentence
    explanation : Explanation
        The descriptive parent (values explain P(``class_names[1]``)).
    partition : sequence of sequence of int
        Feature indices of every item, shown or not (groups as one item), used to rank items.
    class_names : (negative, positive)
    threshold : float, optional
        Output at or above which the positive class is predicted; default from the explanation's
        ``output_space`` (0.5 for a probability, 0 for log-odds: :func:`output_quantity`).

    Returns
    -------
    SentenceCheck
        A text that differs from the template's rendering of its slots fails
        the ``template`` claim; numbers are checked within the precision shown.
    """
    e, s = explanation, dict(sentence.slots)
    neg, pos = class_names
    checks = [_check("template", _render(sentence.kind, s) == sentence.text, "text is the template's rendering")]
    phi = e.values
    total = float(np.abs(phi).sum()) or 1.0
    threshold = output_quantity(e.output_space)[1] if threshold is None else threshold
    label = pos if e.prediction >= threshold else neg
    if sentence.kind == "prediction":
        p, b = float(s["prediction"]), float(s["base"])
        checks += [_check("class", s["label"] == label, f"model predicts {label}"),
                   _check("number: probability", abs(p - e.prediction) <= 0.005 + 1e-9, f"exact {e.prediction:.4f}"),
                   _check("number: average", abs(b - e.base_value) <= 0.005 + 1e-9, f"exact {e.base_value:.4f}"),
                   _check("sum of attributions", abs(phi.sum() - (p - b)) <= 0.01 + 1e-9,
                          f"attributions sum to {phi.sum():+.4f}, text implies {p - b:+.2f}")]
    elif sentence.kind == "item":
        members = tuple(s["members"])
        value = float(phi[list(members)].sum())
        items = sorted(_item_values(e, partition), key=lambda t: (-abs(t[1]), min(t[0])))
        rank = 1 + [m for m, _ in items].index(members) if members in [m for m, _ in items] else -1
        checks.append(_check("rank", rank == s["rank"], f"ranks {rank} by |attribution|"))
        checks.append(_check("direction", (value > 0 and s["towards"] == pos) or (value < 0 and s["towards"] == neg),
                             f"attribution {plain(value, 4, signed=True, trim=True)}"))
        if "level" in s:
            j = members[0]
            v, ref = float(e.feature_values[j]), float(s["reference"])
            truth = "high" if v > ref else "low" if v < ref else "typical"
            checks.append(_check("level", truth == s["level"], f"value {plain(v, 4, trim=True)}, median {plain(ref, 4, trim=True)}"))
            scale = float(s.get("scale", 1.0))
            checks.append(_check("number: value", abs(parse_plain(s["x"]) - v * scale) <= _sig(v * scale)[1],
                                 f"exact {plain(v, 6, trim=True)}"))
        if "category" in s:
            v = float(e.feature_values[members[0]])
            truth = (("missing" if not math.isfinite(v) else date_text(v, s["date"] == "timed")) if "date" in s
                     else _category(v, s["levels"] or None))
            checks.append(_check("value", truth == s["category"], f"the row has {truth}"))
        if "amount" in s:
            checks.append(_check("number: attribution", abs(parse_plain(s["amount"]) - abs(value)) <= s["tolerance"] + 1e-9,
                                 f"exact {plain(abs(value), 4, trim=True)}, allowed ±{plain(s['tolerance'], 3, trim=True)}"))
        if "strength" in s:
            vmax = max(abs(v) for _, v in items) or 1.0
            truth = strength(abs(value) / vmax)
            checks.append(_check("strength", truth == s["strength"], f"|value| / max = {abs(value) / vmax:.2f}"))
    elif sentence.kind == "summary":
        sign = 1.0 if label == pos else -1.0
        share = 100 * sum(max(float(phi[list(m)].sum()) * sign, 0.0) for m in s["members"]) / total
        checks += [_check("class", s["label"] == label, f"model predicts {label}"),
                   _check("number: share", abs(float(s["share"]) - share) <= 0.5 + 1e-9, f"exact {share:.2f}%"),
                   _check("magnitude word", s["word"] == ("mainly" if share >= 50 else "partly"),
                          "'mainly' needs at least 50%")]
    elif sentence.kind == "hidden":
        hid = list(s["members"])
        share = 100 * float(np.abs(phi[hid]).sum()) / total
        net = float(phi[hid].sum())
        checks += [_check("number: share", abs(float(s["share"]) - share) <= 0.5 + 1e-9, f"exact {share:.2f}%"),
                   _check("direction", (net >= 0) == (s["towards"] == pos), f"net {plain(net, 4, signed=True, trim=True)}"),
                   _check("number: net", abs(parse_plain(s["net"]) - abs(net)) <= _sig(abs(net))[1], f"exact {plain(abs(net), 4, trim=True)}")]
    return SentenceCheck(sentence, tuple(checks))


def partition_of(s: Simplification) -> list[tuple[int, ...]]:
    """Every item's members, shown or hidden: the shown items, then the hidden items of the last
    step that still covered every feature (so a hidden group ranks as one item), then singletons."""
    d = s.parent.values.size
    shown = [tuple(it.members) for it in s.items]
    used = {j for m in shown for j in m}
    step = s
    while step is not None and {j for it in step.items for j in it.members} != set(range(d)):
        step = step.previous
    hidden = [tuple(it.members) for it in (step.items if step is not None else ()) if not set(it.members) & used]
    used |= {j for m in hidden for j in m}
    return shown + hidden + [(j,) for j in range(d) if j not in used]


def summarize(obj, ctx: Context) -> Simplification:
    """O9: render the shown items as sentences and keep only those the verifier accepts.

    Returns
    -------
    Simplification
        ``statement`` joins the accepted sentences; ``sentences`` holds every
        :class:`SentenceCheck` (withheld ones included, for the details panel);
        fidelity is that of the step it renders.
    """
    prev = _start(obj, ctx)
    part = partition_of(prev)
    checks = tuple(verify_sentence(x, prev.parent, partition=part, class_names=ctx.class_names)
                   for x in compose(prev, ctx))
    statement = " ".join(c.sentence.text for c in checks if c.ok)
    return _step(prev, "template", {"reference": "training median"}, prev.items, ctx, measure=False,
                 statement=statement, sentences=checks)
