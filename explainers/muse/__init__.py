"""MUSE / BETA two-level decision-set surrogates and their baselines.

Sources: Lakkaraju, Kamar, Caruana, Leskovec (2017), arXiv 1707.01154 (BETA);
(2019), AIES, doi 10.1145/3306618.3314229 (MUSE); spec in docs/methods.md, "Rule surrogates: MUSE and CART".

The estimators (which import scikit-learn) are imported on first use (PEP 562), so that a
server that imports this package for :func:`is_compatible` serves its first page before scikit-learn has loaded
(issue 23: scikit-learn and the scipy it imports were 1.7 s of ``python -m app``'s 2.7 s to a first HTTP 200).
"""

from .._lazy import lazy_names
from ._types import (AgreementDetail, Frontier, FrontierPoint, RuleSetQuantities, TwoLevelRule,
                     TwoLevelRuleSet)
from ..intervals import wilson_interval
from .frontier import (agreement_detail, evaluate_rule_set, majority_label, make_rule_set, predict_rule_set,
                       rule_agreement, surrogate_frontier)

_LAZY = {"CartSurrogate": ".cart", "FlatDecisionSet": ".estimator", "TwoLevelDecisionSet": ".estimator"}


__getattr__ = lazy_names(__name__, _LAZY)


__all__ = [
    "TwoLevelDecisionSet",
    "FlatDecisionSet",
    "CartSurrogate",
    "surrogate_frontier",
    "agreement_detail",
    "evaluate_rule_set",
    "predict_rule_set",
    "make_rule_set",
    "rule_agreement",
    "majority_label",
    "wilson_interval",
    "TwoLevelRule",
    "TwoLevelRuleSet",
    "RuleSetQuantities",
    "FrontierPoint",
    "Frontier",
    "AgreementDetail",
    "is_compatible",
]


def is_compatible(capabilities) -> str | None:
    """Why rule surrogates do not apply to a model with these
    :class:`~explainers.capabilities.Capabilities`, or ``None``: they imitate a classifier's labels."""
    if capabilities.is_classifier:
        return None
    return ("Rule surrogates (MUSE, CART) imitate a classifier's labels; this model is a regressor, so "
            "there are no labels to imitate.")
