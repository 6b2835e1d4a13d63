"""Rule results: a :class:`Predicate` on one feature and the one :class:`Rule` type (MUSE, flat, CART)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal


@dataclass(frozen=True)
class Predicate:
    """One condition ``feature op threshold`` on a single feature.

    Parameters
    ----------
    feature : str
    op : {"<=", ">", "==", "in"}
    threshold : float or str or tuple
        A number for ``<=``/``>``, a level for ``==``, a tuple of levels for ``in``.
    """

    feature: str
    op: Literal["<=", ">", "==", "in"]
    threshold: Any

    def __str__(self) -> str:
        from ..rules import format_predicate

        return format_predicate(self.feature, self.op, self.threshold)


@dataclass(frozen=True)
class Rule:
    """The one rule type: *if* ``descriptor`` *: if* ``rule`` *then* ``label``; a flat rule has an empty descriptor.

    MUSE's triples ``(q, s, c)`` (``explainers.muse.TwoLevelRule`` is this class), the flat
    decision set's and CART's leaves (empty descriptor) are all this type; the persuasive layer
    shows one through :class:`~explainers.persuasive.ShownRule`.

    Parameters
    ----------
    descriptor : tuple of Predicate
        Neighborhood descriptor ``q`` (outer if-then); empty for a flat rule.
    rule : tuple of Predicate
        Decision-logic rule ``s`` (inner if-then).
    label : int or str
        Black-box label ``c`` the rule predicts.
    support : int
        Training rows satisfying ``q AND s``.
    coverage : float
        ``support`` as a fraction of the training rows, in [0, 1].
    precision : float
        Share of covered training rows whose black-box label is ``label``
        (the ``prec_i`` used to resolve conflicts, docs/methods.md, "Rule surrogates: MUSE and CART").
    """

    descriptor: tuple[Predicate, ...]
    rule: tuple[Predicate, ...]
    label: Any
    support: int
    coverage: float
    precision: float

    @property
    def predicates(self) -> tuple[Predicate, ...]:
        """``descriptor + rule``: the full conjunction the rule fires on."""
        return self.descriptor + self.rule

    @property
    def width(self) -> int:
        """``max(width(q), width(s))`` in predicates."""
        return max(len(self.descriptor), len(self.rule))

    def __str__(self) -> str:
        from ..rules import rule_text

        return rule_text(self)
