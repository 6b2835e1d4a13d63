"""Persuasive page, rules: simplify a surrogate of the frontier and measure what it costs (docs/methods.md, "Persuasive layer", O5, O2, O8).

The descriptive parent is one surrogate of the Surrogate page's default frontier (MUSE, CART or
the flat set at a rule budget); the persuasive operators keep the top-m rules by coverage, round
thresholds and phrase predicates in plain language; agreement with the model is re-measured on
the held-out rows after each choice. On the user's files the rules are shown in their levels and
dates (the workspace's codec goes along), and predicates on category or datetime columns are never
rounded.
"""
from __future__ import annotations

from dataclasses import dataclass

from explainers.persuasive import RuleSimplification, plain_language, prune_rules, round_thresholds

from workspace.errors import CandorError
from ._core import row_cache
from .surrogates import _default_frontier as _frontier_key
from .surrogates import _split, frontier
from .tabular import display_codec


def surrogate_choices() -> list[dict]:
    """Dropdown options: every surrogate of the default frontier, ``value = "method|budget"``."""
    f = frontier(_frontier_key())
    return [{"label": f"{p.method.upper()}, budget {p.budget}: {p.n_rules} rules, agreement {p.agreement:.3f}",
             "value": f"{p.method}|{p.budget}"} for p in f.points]


def default_choice() -> str:
    """The frontier surrogate with the most rules (pruning has something to remove)."""
    f = frontier(_frontier_key())
    best = max(f.points, key=lambda p: (p.n_rules, p.method == "cart"))
    return f"{best.method}|{best.budget}"


@dataclass(frozen=True)
class RuleView:
    """The simplified rules, and agreement/predicates for every number of rules kept."""

    simplification: RuleSimplification
    kept_counts: tuple[int, ...]
    agreement_curve: tuple[float, ...]
    predicates_curve: tuple[int, ...]
    n_eval: int


@row_cache(maxsize=64)
def rule_view(choice: str, max_rules: int, round_sig: int | None, plain: bool) -> RuleView:
    """Keep the top ``max_rules`` rules by coverage of surrogate ``choice``, optionally round and phrase.

    Raises
    ------
    CandorError
        If ``choice`` is not a surrogate of the frontier.
    """
    method, _, budget = (choice or "").partition("|")
    point = next((p for p in frontier(_frontier_key()).points if p.method == method and str(p.budget) == budget), None)
    if point is None:
        raise CandorError(f"no surrogate {choice!r} in the frontier")
    _, _, X_eval, y_eval = _split(train_rows=False)
    n = len(point.rule_set.rules)
    codec = display_codec()
    curve = [prune_rules(point.rule_set, X_eval, y_eval, max_rules=m, codec=codec) for m in range(0, n + 1)]
    s = curve[min(max(int(max_rules), 0), n)]
    if round_sig:
        s = round_thresholds(s, X_eval, y_eval, sig=int(round_sig))
    if plain:
        s = plain_language(s, X_eval, y_eval)
    return RuleView(s, tuple(range(0, n + 1)), tuple(c.fidelity_after["agreement"] for c in curve),
                    tuple(c.complexity_after["numpreds"] for c in curve), len(X_eval))
