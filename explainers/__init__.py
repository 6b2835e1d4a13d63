"""Candor's pure-compute library: models and data in, frozen dataclasses out.

Never imports dash, flask or plotly (``tests/test_boundaries.py`` checks).
Heavy optional parts (torch, captum) are imported by the modules that need
them (:mod:`explainers.gradients`, :mod:`explainers.attention`), not here, so
that importing :mod:`explainers` stays fast.
"""
from .lime_explainer import LimeExplainer, weighted_r2
from .metrics import (
    RankAgreement,
    agreement_rate,
    jaccard_at_k,
    kendall_tau_b,
    rank_agreement,
    sign_agreement,
    spearman,
    top_k,
    top_k_overlap,
)
from .rules import conjunction_mask, predicate_mask, rule_text
from .shap_explainer import ShapExplainer, is_linear_model, is_tree_model
from .simplify import comprehensiveness, masked_output, simplify_top_k, sufficiency, summary_sentence
from .surrogate import TreeRuleSurrogate, tree_surrogate_curve
from .types import (
    AgreementReport,
    AttentionMap,
    Explanation,
    Fidelity,
    GlobalImportance,
    ModelSummary,
    Predicate,
    Rule,
    Simplification,
    Surrogate,
    SurrogateCurve,
)

__all__ = [
    "AgreementReport", "AttentionMap", "Explanation", "Fidelity", "GlobalImportance", "LimeExplainer",
    "ModelSummary", "Predicate", "RankAgreement", "Rule", "ShapExplainer", "Simplification", "Surrogate",
    "SurrogateCurve", "TreeRuleSurrogate", "agreement_rate", "comprehensiveness", "conjunction_mask",
    "is_linear_model", "is_tree_model", "jaccard_at_k", "kendall_tau_b", "masked_output", "predicate_mask",
    "rank_agreement", "rule_text", "sign_agreement", "simplify_top_k", "spearman", "sufficiency",
    "summary_sentence", "top_k", "top_k_overlap", "tree_surrogate_curve", "weighted_r2",
]
