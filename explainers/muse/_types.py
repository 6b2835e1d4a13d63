"""Frozen result types of the MUSE / BETA two-level decision-set surrogates.

Everything here is plain data (tuples, Python scalars, read-only numpy arrays)
so that the app can render it and put ``to_dict()`` payloads in a store.
Sources: Lakkaraju, Kamar, Caruana, Leskovec 2017 (BETA, arXiv 1707.01154) and
2019 (MUSE, AIES, doi 10.1145/3306618.3314229); docs/methods.md, "Rule surrogates: MUSE and CART".
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..types import Predicate, Rule
from ..types._json import _jsonable

__all__ = [
    "TwoLevelRule",
    "RuleSetQuantities",
    "TwoLevelRuleSet",
    "FrontierPoint",
    "Frontier",
    "AgreementDetail",
]


TwoLevelRule = Rule
"""MUSE's name for :class:`explainers.types.Rule`, the one rule type (a triple ``(q, s, c)``)."""


@dataclass(frozen=True)
class RuleSetQuantities:
    """The BETA/MUSE quantities of a rule set on one dataset (docs/methods.md, "Rule surrogates: MUSE and CART", [P]).

    Parameters
    ----------
    agreement : float
        Share of rows where the rule set (with the labelling rules of docs/methods.md, "Rule surrogates: MUSE and CART") predicts
        the black-box label, in [0, 1].
    disagreement : int
        ``sum_i |{x in cov_i : B(x) != c_i}|`` (a row wrongly covered twice counts twice).
    ruleoverlap : int
        ``sum_{i<j} |cov_i & cov_j|`` over unordered pairs ([D]; BETA sums
        ordered pairs, i.e. twice this).
    cover : int
        ``|union_i cov_i|``, rows covered by at least one triple.
    size : int
        Number of triples ``M``.
    numpreds : int
        ``sum_i width(q_i) + width(s_i)``, in predicates.
    numdsets : int
        Number of distinct descriptors (neighborhoods).
    featureoverlap : int
        ``sum_{q in dset} sum_i |feat(q) & feat(s_i)|``.
    maxwidth : int
        Largest number of predicates in any ``q_i`` or ``s_i``.
    ambiguous_share : float
        Share of rows fired by two or more triples with different labels.
    default_share : float
        Share of rows fired by no triple (they get the default label).
    n_rows : int
        Rows the quantities were computed on.
    agreement_low, agreement_high : float
        Wilson 95 % interval of ``agreement`` over these rows (Wilson 1927).
    """

    agreement: float
    disagreement: int
    ruleoverlap: int
    cover: int
    size: int
    numpreds: int
    numdsets: int
    featureoverlap: int
    maxwidth: int
    ambiguous_share: float
    default_share: float
    n_rows: int
    agreement_low: float = float("nan")
    agreement_high: float = float("nan")

    def to_dict(self) -> dict:
        return _jsonable(self)


@dataclass(frozen=True)
class TwoLevelRuleSet:
    """A fitted two-level decision set as plain data (what the UI shows).

    Parameters
    ----------
    method : {"muse", "flat", "cart"}
    rules : tuple of TwoLevelRule
        In conflict-resolution index order (docs/methods.md, "Rule surrogates: MUSE and CART", rule 4).
    default_label : int or str
        Label of rows no triple fires on.
    classes : tuple
        Black-box labels seen in training, sorted.
    feature_names : tuple of str
    train : RuleSetQuantities
        Quantities on the training rows.
    params : dict
        Settings that produced the set (budgets, lambdas, seed, ...).
    """

    method: str
    rules: tuple[TwoLevelRule, ...]
    default_label: Any
    classes: tuple
    feature_names: tuple[str, ...]
    train: RuleSetQuantities
    params: dict

    @property
    def neighborhoods(self) -> tuple[tuple[Predicate, ...], ...]:
        """Distinct descriptors in first-appearance order (the UI's groups)."""
        seen: dict = {}
        for r in self.rules:
            seen.setdefault(r.descriptor, None)
        return tuple(seen)

    def to_dict(self) -> dict:
        return _jsonable(self)


@dataclass(frozen=True)
class FrontierPoint:
    """One surrogate of the fidelity-complexity sweep.

    Parameters
    ----------
    method : {"muse", "cart", "cart_dl", "flat"}
        ``"cart_dl"`` is the same tree as ``"cart"`` drawn as a decision set (the default label's
        leaves left to the default rule).
    budget : int
        The rule budget that produced it (``max_rules`` or ``max_leaf_nodes``).
    n_rules, n_predicates, n_neighborhoods : int
        ``size``, ``numpreds`` and ``numdsets`` of the fitted set.
    agreement : float
        Held-out agreement with the black box, in [0, 1].
    fit_seconds : float
        Wall-clock fit time in seconds.
    rule_set : TwoLevelRuleSet
        The surrogate itself (shown when the point is clicked).
    agreement_low, agreement_high : float
        Wilson 95 % interval of ``agreement`` on the held-out rows.
    """

    method: str
    budget: int
    n_rules: int
    n_predicates: int
    n_neighborhoods: int
    agreement: float
    fit_seconds: float
    rule_set: TwoLevelRuleSet
    agreement_low: float = float("nan")
    agreement_high: float = float("nan")


@dataclass(frozen=True)
class Frontier:
    """Held-out agreement against complexity for MUSE, CART and the flat set.

    Parameters
    ----------
    points : tuple of FrontierPoint
        Ordered by method, then budget.
    n_train, n_eval : int
        Rows used to fit and to measure agreement.
    trivial_label : label
        The majority black-box label of the training rows: the trivial surrogate, "always this".
    trivial_agreement, trivial_low, trivial_high : float
        Its held-out agreement and Wilson 95 % interval; a surrogate that does not beat it
        explains nothing the majority label does not.
    """

    points: tuple[FrontierPoint, ...]
    n_train: int
    n_eval: int
    trivial_label: Any = None
    trivial_agreement: float = float("nan")
    trivial_low: float = float("nan")
    trivial_high: float = float("nan")

    def curve(self, method: str) -> tuple[FrontierPoint, ...]:
        """Points of one method, by increasing budget."""
        return tuple(sorted((p for p in self.points if p.method == method), key=lambda p: p.budget))

    def to_dict(self) -> dict:
        return _jsonable(self)


@dataclass(frozen=True)
class AgreementDetail:
    """Per-class agreement and the surrogate-vs-model confusion matrix.

    Parameters
    ----------
    classes : tuple
        Labels, in the order of the matrix axes.
    confusion : ndarray of int, shape (n_classes, n_classes)
        ``confusion[i, j]`` = rows with black-box label ``classes[i]`` that the
        surrogate labels ``classes[j]``.
    per_class_agreement : ndarray of float, shape (n_classes,)
        Row-normalised diagonal (NaN for a class the model never predicts).
    agreement : float
        Overall agreement in [0, 1].
    ambiguous_share, default_share : float
        As in :class:`RuleSetQuantities`, on these rows.
    n_rows : int
    agreement_low, agreement_high : float
        Wilson 95 % interval of ``agreement``.
    trivial_label : label
        The trivial surrogate's label (the training majority when given, else these rows' majority).
    trivial_agreement : float
        Agreement of "always ``trivial_label``" on these rows; a surrogate at or below it explains
        nothing the majority label does not.
    """

    classes: tuple
    confusion: np.ndarray
    per_class_agreement: np.ndarray
    agreement: float
    ambiguous_share: float
    default_share: float
    n_rows: int
    agreement_low: float = float("nan")
    agreement_high: float = float("nan")
    trivial_label: Any = None
    trivial_agreement: float = float("nan")

    def to_dict(self) -> dict:
        return _jsonable(self)
