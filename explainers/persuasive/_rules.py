"""Operators on rule surrogates: O5 prune by coverage, O2 nice thresholds, O8 plain-language predicates.

They work on a rule set of :class:`~explainers.types.Rule` (MUSE, the flat set or CART:
:class:`explainers.muse.TwoLevelRuleSet`; descriptor predicates are counted once per rule), or a
previous :class:`RuleSimplification`. Predictions follow docs/methods.md, "Rule surrogates: MUSE and CART": a row takes the
label of the firing rule with the highest precision (then coverage, then
index); rows no rule fires on take the default label, recomputed after pruning
as the majority model label of the uncovered rows. Fidelity is agreement with
the model on the rows given, before and after (Lakkaraju et al. 2019, doi
10.1145/3306618.3314229).

Surrogates of a user's table are fitted on its encoding
(:class:`~explainers._codec.TabularCodec`). Given the ``codec``, rules are
shown in the user's levels and dates (``colour = red``, not ``colour > 1.5``),
O2 leaves predicates on category and datetime columns unrounded (rounding a
code is meaningless; they lose no agreement) and O8 phrases them as
membership. The codec passes from one operator to the next.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from .._codec import conjunction_parts
from ..rules import conjunction_mask, rule_text
from ..muse._semantics import resolve_rules
from ..numbers import plain
from ..types import Predicate
from ._measures import complexity

__all__ = ["ShownRule", "RuleSimplification", "as_rules", "rule_predictions", "prune_rules", "round_thresholds",
           "plain_language", "nice_number", "Phrase"]


@dataclass(frozen=True)
class Phrase:
    """A plain-language phrase and the predicate a reader would infer from it (O8)."""

    text: str
    reinterpreted: Predicate


@dataclass(frozen=True)
class ShownRule:
    """A displayed rule: its predicates, label, training coverage and precision, and phrases.

    ``phrases`` is empty until O8; then one :class:`Phrase` per predicate.
    ``n_descriptor`` counts the leading predicates that form a MUSE neighborhood descriptor;
    ``index`` is the rule's position in the descriptive parent; ``display`` is the conjunction
    in the user's levels and dates (set from a codec; empty: predicates as numbers).
    """

    predicates: tuple[Predicate, ...]
    label: Any
    coverage: float
    precision: float
    n_descriptor: int = 0
    phrases: tuple = ()
    index: int = -1
    display: tuple[str, ...] = ()

    def text(self) -> str:
        """The rule as the reader sees it: its phrases, else its display parts, else its predicates."""
        if self.phrases:
            return rule_text([p.text for p in self.phrases], label=self.label)
        return rule_text(self.display, label=self.label) if self.display else rule_text(self)


@dataclass(frozen=True)
class RuleSimplification:
    """A persuasive view of a rule surrogate and what it cost.

    Parameters
    ----------
    parent : TwoLevelRuleSet
        The descriptive surrogate.
    operators : tuple of (str, dict)
    rules : tuple of ShownRule
    dropped : tuple of int
        Indices (in the descriptive parent) of rules not shown.
    default_label : label
    fidelity_before, fidelity_after : dict
        ``agreement`` with the model and ``coverage`` (share of rows some shown rule fires on) on the rows given.
    complexity_before, complexity_after : dict
        :func:`~explainers.persuasive.complexity` proxies.
    changed_rows : ndarray of int
        Rows whose surrogate label differs from the parent's.
    previous : RuleSimplification or None
    codec : TabularCodec or None
        The encoding the surrogate was fitted on, for display (None: all-numeric features).
    """

    parent: Any
    operators: tuple
    rules: tuple[ShownRule, ...]
    dropped: tuple[int, ...]
    default_label: Any
    fidelity_before: dict
    fidelity_after: dict
    complexity_before: dict
    complexity_after: dict
    changed_rows: np.ndarray
    previous: "RuleSimplification | None" = None
    codec: Any = None


def _parent_rules(obj) -> tuple[list[ShownRule], Any]:
    if isinstance(obj, RuleSimplification):
        return list(obj.rules), obj.default_label
    rules = getattr(obj, "rules", None)
    if rules is None:
        raise TypeError(f"expected a rule surrogate with .rules, got {type(obj).__name__}")
    out = []
    for i, r in enumerate(rules):
        desc = tuple(getattr(r, "descriptor", ()))
        out.append(ShownRule(tuple(r.predicates), r.label, float(r.coverage), float(r.precision), len(desc), (), i))
    default = getattr(obj, "default_label", None)
    return out, default


def as_rules(obj) -> tuple[ShownRule, ...]:
    """The rules of a TwoLevelRuleSet or a RuleSimplification, as :class:`ShownRule`."""
    return tuple(_parent_rules(obj)[0])


def _eval_preds(rule: ShownRule) -> tuple[Predicate, ...]:
    return tuple(p.reinterpreted for p in rule.phrases) if rule.phrases else rule.predicates


def _fired(rules: Sequence[ShownRule], X: pd.DataFrame) -> np.ndarray:
    fired = np.zeros((len(rules), len(X)), dtype=bool)
    for i, r in enumerate(rules):
        fired[i] = conjunction_mask(_eval_preds(r), X)
    return fired


def rule_predictions(rules: Sequence[ShownRule], default, X: pd.DataFrame) -> np.ndarray:
    """Labels of shape (n_rows,): best-precision firing rule, else ``default`` (docs/methods.md, "Rule surrogates: MUSE and CART")."""
    return resolve_rules(rules, _fired(rules, X), default)[0]


def _same(a, b) -> np.ndarray:
    return np.array([str(u) == str(v) for u, v in zip(a, b)], dtype=bool)


def _complexity(rules: Sequence[ShownRule]) -> dict:
    lines = [r.text() for r in rules]
    descs = {r.predicates[:r.n_descriptor] for r in rules if r.n_descriptor}
    chunks = {p.feature for r in rules for p in r.predicates} | {str(d) for d in descs}
    n_preds = sum(len(r.predicates) - r.n_descriptor for r in rules) + sum(len(d) for d in descs)
    out = complexity(lines, chunks, n_items=len(rules), n_predicates=n_preds)
    out.update(numpreds=sum(len(r.predicates) for r in rules), n_neighborhoods=len(descs))
    return out


def _fidelity(rules, default, X, y) -> tuple[dict, np.ndarray]:
    pred = rule_predictions(rules, default, X)
    covered = _fired(rules, X).any(axis=0) if rules else np.zeros(len(X), bool)
    return {"agreement": float(np.mean(_same(pred, y))), "coverage": float(np.mean(covered))}, pred


def _codec(obj, codec):
    """The codec given, else the one ``obj`` carries from a previous operator."""
    return codec if codec is not None else getattr(obj, "codec", None) if isinstance(obj, RuleSimplification) else None


def _column(codec, feature: str):
    return codec.column(feature) if codec is not None else None


def _displayed(rules: Sequence[ShownRule], codec) -> list[ShownRule]:
    if codec is None:
        return list(rules)
    return [replace(r, display=conjunction_parts(r.predicates, codec)) for r in rules]


def _finish(obj, name, params, rules, default, X, y, codec=None) -> RuleSimplification:
    X, y = pd.DataFrame(X), np.asarray(y)
    prev = obj if isinstance(obj, RuleSimplification) else None
    root = prev.parent if prev else obj
    base_rules, base_default = _parent_rules(root)
    base_rules, rules = _displayed(base_rules, codec), _displayed(rules, codec)
    dropped = sorted(set(range(len(base_rules))) - {r.index for r in rules})
    fid_b, pred_b = _fidelity(base_rules, base_default, X, y)
    fid_a, pred_a = _fidelity(rules, default, X, y)
    fid_a.update(agreement_lost=fid_b["agreement"] - fid_a["agreement"], coverage_lost=fid_b["coverage"] - fid_a["coverage"])
    return RuleSimplification(root, (prev.operators if prev else ()) + ((name, params),), tuple(rules), tuple(dropped),
                              default, fid_b, fid_a, _complexity(base_rules), _complexity(rules),
                              np.flatnonzero(~_same(pred_a, pred_b)), prev, codec)


def prune_rules(obj, X: pd.DataFrame, y_model, *, min_coverage: float = 0.05, max_rules: int | None = None,
                X_default: pd.DataFrame | None = None, y_default=None, codec=None) -> RuleSimplification:
    """O5: drop rules with training coverage below ``min_coverage`` (or keep the top ``max_rules``).

    Parameters
    ----------
    obj : TwoLevelRuleSet or RuleSimplification
    X : DataFrame of shape (n_rows, n_features)
        Rows agreement is measured on (held-out rows).
    y_model : array-like of shape (n_rows,)
        The model's labels, in the rules' label space (compared as strings).
    min_coverage : float, default=0.05
        ``c_min``; rules with ``coverage < c_min`` are dropped.
    max_rules : int, optional
        If given, keep the top ``max_rules`` by (coverage, precision, index) instead.
    X_default, y_default : optional
        Rows whose uncovered majority label becomes the new default (default: ``X``, ``y_model``).
    codec : TabularCodec, optional
        The encoding of ``X`` (rules then shown in the user's levels); default: ``obj``'s.

    Returns
    -------
    RuleSimplification
        docs/methods.md, "Tests with exact oracles", T8: agreement 0.875 → 0.75 on the T7 toy with ``c_min = 0.2``.

    Raises
    ------
    ValueError
        If ``min_coverage`` is outside [0, 1] or ``max_rules < 0``.
    """
    if not 0 <= min_coverage <= 1 or (max_rules is not None and max_rules < 0):
        raise ValueError(f"need 0 <= min_coverage <= 1 and max_rules >= 0, got {min_coverage}, {max_rules}")
    rules, _ = _parent_rules(obj)
    if max_rules is not None:
        order = sorted(range(len(rules)), key=lambda i: (-rules[i].coverage, -rules[i].precision, i))
        keep = sorted(order[:max_rules])
    else:
        keep = [i for i, r in enumerate(rules) if r.coverage >= min_coverage]
    kept = [rules[i] for i in keep]
    Xd = pd.DataFrame(X if X_default is None else X_default)
    yd = np.asarray(y_model if y_default is None else y_default)
    unc = ~_fired(kept, Xd).any(axis=0) if kept else np.ones(len(Xd), bool)
    pool = yd[unc] if unc.any() else yd
    labels = sorted({str(v) for v in pool})
    counts = [int(np.sum(np.array([str(v) for v in pool]) == c)) for c in labels]
    default = next(v for v in pool if str(v) == labels[int(np.argmax(counts))])
    default = default.item() if isinstance(default, np.generic) else default
    params = {"min_coverage": min_coverage} if max_rules is None else {"max_rules": max_rules}
    return _finish(obj, "prune", params, kept, default, X, y_model, _codec(obj, codec))


def nice_number(v: float, sig: int = 2) -> float:
    """``v`` rounded to ``sig`` significant digits (16.795 → 17.0, 0.1425 → 0.14)."""
    if v == 0 or not math.isfinite(v):
        return v
    return float(f"{v:.{sig}g}")


def round_thresholds(obj, X: pd.DataFrame, y_model, *, sig: int = 2, codec=None) -> RuleSimplification:
    """O2 on rules: numeric thresholds to ``sig`` significant digits; agreement re-measured with them.

    Parameters
    ----------
    codec : TabularCodec, optional
        Default: ``obj``'s. Predicates on its category and datetime columns are
        left exactly as they are (a rounded code selects other levels), listed in
        ``params["not_rounded"]``; they cost no agreement.

    Raises
    ------
    ValueError
        If ``sig < 1``.
    """
    if sig < 1:
        raise ValueError(f"sig must be >= 1, got {sig}")
    codec = _codec(obj, codec)
    rules, default = _parent_rules(obj)

    def numeric(p: Predicate) -> bool:
        col = _column(codec, p.feature)
        return p.op in ("<=", ">") and (col is None or col.kind == "numeric")

    new = [replace(r, predicates=tuple(Predicate(p.feature, p.op, nice_number(float(p.threshold), sig))
                                       if numeric(p) else p for p in r.predicates), phrases=())
           for r in rules]
    kept = sorted({p.feature for r in rules for p in r.predicates if p.op in ("<=", ">") and not numeric(p)})
    params = {"sig": sig, **({"not_rounded": tuple(kept)} if kept else {})}
    return _finish(obj, "round_thresholds", params, new, default, X, y_model, codec)


def _default_phrase(p: Predicate, codec=None) -> Phrase:
    col = _column(codec, p.feature)
    if col is not None and col.kind == "category":
        codes = col.selected(p.op, p.threshold)
        rest = [c for c in range(len(col.levels)) if c not in set(codes)]
        text = (f"{p.feature} is {col.level_list(codes)}" if len(codes) == 1
                else f"{p.feature} is not {col.level_list(rest)}" if len(rest) == 1
                else f"{p.feature} is one of {col.level_list(codes)}" if len(codes) <= len(rest)
                else f"{p.feature} is none of {col.level_list(rest)}")
        return Phrase(text, p)
    if col is not None and col.kind == "datetime" and p.op in ("<=", ">"):
        when = "on or before" if p.op == "<=" else "after"
        return Phrase(f"{p.feature} is {when} {col.text(float(p.threshold))}", p)
    t = p.threshold
    num = isinstance(t, (int, float, np.number)) and not isinstance(t, bool)
    text = {"<=": f"{p.feature} is at most {plain(t, 6, trim=True)}" if num else f"{p.feature} <= {t}",
            ">": f"{p.feature} is above {plain(t, 6, trim=True)}" if num else f"{p.feature} > {t}",
            "==": f"{p.feature} is {t}", "in": f"{p.feature} is one of {', '.join(map(str, t)) if p.op == 'in' else t}"}
    return Phrase(text[p.op], p)


def plain_language(obj, X: pd.DataFrame, y_model, *, lexicon: Mapping[Predicate, Phrase] | None = None,
                   codec=None) -> RuleSimplification:
    """O8: replace each predicate by a phrase; agreement is re-measured with the reinterpreted predicates.

    Parameters
    ----------
    lexicon : mapping of Predicate to Phrase, optional
        Entries for specific predicates; others get a lossless phrase
        (``"age is above 50"``). A lossy entry (``"older people"`` read as
        ``age > 60``) changes agreement, which is recorded.
    codec : TabularCodec, optional
        Default: ``obj``'s. Predicates on category columns read as levels
        (``"colour is one of blue, green"``), on datetime columns as dates
        (``"signup is on or before 2021-03-04"``); both lossless.

    Returns
    -------
    RuleSimplification
        ``fidelity_after["lossless"]`` is 1.0 when every phrase reinterprets to its predicate.
    """
    codec = _codec(obj, codec)
    rules, default = _parent_rules(obj)
    lex = dict(lexicon or {})
    new = [replace(r, phrases=tuple(lex.get(p, _default_phrase(p, codec)) for p in r.predicates)) for r in rules]
    out = _finish(obj, "plain_language", {"lexicon": len(lex)}, new, default, X, y_model, codec)
    lossless = all(ph.reinterpreted == p for r in new for ph, p in zip(r.phrases, r.predicates))
    out.fidelity_after["lossless"] = float(lossless)
    return out
