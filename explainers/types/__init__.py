"""Frozen result types shared by every explainer.

Everything :mod:`explainers` computes leaves the package as one of these
dataclasses: plain numpy arrays and Python scalars inside, no model objects, so
that the app layer can render them and ``to_dict`` can put them in a
``dcc.Store``. Field names follow the vocabulary of ``shared/STYLE.md`` (B4):
*attribution* for local per-feature values, *base_value* for the expected
output over the *background*, *fidelity* for agreement with the black box.

Each type lives in a module named for what it describes (``_attribution``, ``_rule``, ``_simplification``,
``_attention``, ``_model_summary``, ``_importance``, ``_counterfactual``); how they hold arrays is ``_arrays``, their JSON-ready values
``_json``.
This package is their public home: import them from ``explainers.types``.
"""
from ._attention import AgreementReport, AttentionMap
from ._attribution import Explanation, Fidelity, GlobalImportance, OutputSpace  # noqa: F401  (OutputSpace: a type alias)
from ._importance import PermutationImportance
from ._model_summary import ModelSummary
from ._rule import Predicate, Rule
from ._simplification import Simplification
from ._dependence import CurveFidelity, DependenceSet, PartialDependence, ShapDependence
from ._counterfactual import Change, Counterfactual, Counterfactuals, StoryTest

__all__ = [
    "Fidelity",
    "Explanation",
    "Predicate",
    "Rule",
    "Simplification",
    "AttentionMap",
    "AgreementReport",
    "ModelSummary",
    "GlobalImportance",
    "PermutationImportance",
    "CurveFidelity",
    "DependenceSet",
    "PartialDependence",
    "ShapDependence",
    "Change",
    "Counterfactual",
    "Counterfactuals",
    "StoryTest",
]
from ._performance import ClassifierPerformance, ConfusionCounts, MulticlassConfusion, RegressorPerformance, ScoreInterval  # noqa: E402

__all__ += ["ClassifierPerformance", "ConfusionCounts", "MulticlassConfusion", "RegressorPerformance", "ScoreInterval"]
