"""Candor's pure-compute library: models and data in, frozen dataclasses out.

Never imports dash, flask or plotly (``tests/test_boundaries.py`` checks).
Names backed by heavy libraries (shap, lime; torch and captum live in
:mod:`explainers.gradients`, :mod:`explainers.attention` and
:mod:`explainers.text`) are imported on first use (PEP 562), so that
``import explainers`` stays fast and the dashboard serves its first page sooner.
"""

from ._lazy import lazy_names
from .metrics import (
    RankAgreement,
    agreement_rate,
    compare_ranks,
    default_k,
    jaccard_at_k,
    kendall_tau_b,
    rank_agreement,
    sign_agreement,
    spearman,
    top_k,
    top_k_overlap,
)
from .rules import conjunction_mask, predicate_mask, rule_text
from .types import (
    AgreementReport,
    AttentionMap,
    Explanation,
    Fidelity,
    GlobalImportance,
    ModelSummary,
    PermutationImportance,
    Predicate,
    Rule,
    Simplification,
)
from .types import CurveFidelity, DependenceSet, PartialDependence, ShapDependence

_LAZY = {
    "LimeExplainer": ".lime_explainer", "weighted_r2": "._lime_fits",
    "ShapExplainer": ".shap_explainer", "ModelAdapter": ".model_adapter", "OutputView": ".model_adapter",
    "CallLimits": ".model_adapter", "is_linear_model": ".model_kinds", "is_tree_model": ".model_kinds",
    "PermutationImportanceExplainer": ".permutation_importance",
    "comprehensiveness": ".persuasive", "masked_output": ".persuasive", "sufficiency": ".persuasive",
    "PartialDependenceExplainer": ".dependence", "shap_dependence": ".interactions",
    "CounterfactualExplainer": ".counterfactuals", "story_test": ".counterfactuals",
    "error_tree": ".cohorts", "cohort_figures": ".cohorts", "fairness_report": ".fairness",
}


__getattr__ = lazy_names(__name__, _LAZY)


__all__ = [
    "AgreementReport", "AttentionMap", "CallLimits", "Explanation", "Fidelity", "GlobalImportance", "LimeExplainer",
    "ModelAdapter", "ModelSummary", "OutputView", "PermutationImportance", "PermutationImportanceExplainer",
    "Predicate", "RankAgreement", "Rule", "ShapExplainer", "Simplification",
    "agreement_rate", "comprehensiveness", "conjunction_mask",
    "is_linear_model", "is_tree_model", "compare_ranks", "default_k", "jaccard_at_k", "kendall_tau_b", "masked_output", "predicate_mask",
    "rank_agreement", "rule_text", "sign_agreement", "spearman",
    "sufficiency", "top_k", "top_k_overlap", "weighted_r2",
    "PartialDependenceExplainer", "shap_dependence", "PartialDependence", "ShapDependence", "CurveFidelity",
    "DependenceSet",
    "CounterfactualExplainer", "story_test",
    "cohort_figures", "error_tree", "fairness_report",
]
