"""Which exact SHAP algorithm a fitted model admits, decided from its class (no shap import).

Its own module so that :mod:`explainers.model_adapter` (which builds tree views) and
:mod:`explainers.shap_explainer` (which chooses the algorithm) both ask it without importing each
other: the dependency runs one way, ``shap_explainer -> model_adapter -> model_kinds``.
"""
from __future__ import annotations

__all__ = ["is_tree_model", "is_linear_model"]

_TREE_NAMES = (
    "GradientBoostingClassifier", "GradientBoostingRegressor", "RandomForestClassifier",
    "RandomForestRegressor", "ExtraTreesClassifier", "ExtraTreesRegressor",
    "DecisionTreeClassifier", "DecisionTreeRegressor", "XGBClassifier", "XGBRegressor",
    "LGBMClassifier", "LGBMRegressor", "CatBoostClassifier", "CatBoostRegressor",
)
_LINEAR_NAMES = ("LogisticRegression", "LinearRegression", "Ridge", "Lasso", "ElasticNet", "SGDClassifier")


def is_tree_model(model) -> bool:
    """True for the tree ensembles that ``shap.TreeExplainer`` explains exactly (Lundberg et al. 2020)."""
    return type(model).__name__ in _TREE_NAMES


def is_linear_model(model) -> bool:
    """True for scikit-learn linear models with ``coef_`` (exact linear SHAP, Lundberg & Lee 2017)."""
    return type(model).__name__ in _LINEAR_NAMES
