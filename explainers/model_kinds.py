"""Which exact SHAP algorithm a fitted model admits, decided from its class (no shap import).

Its own module so that :mod:`explainers.model_adapter` (which builds tree views) and
:mod:`explainers.shap_explainer` (which chooses the algorithm) both ask it without importing each
other: the dependency runs one way, ``shap_explainer -> model_adapter -> model_kinds``.
"""
from __future__ import annotations

import numpy as np

__all__ = ["is_tree_model", "is_linear_model", "tree_shap_refusal"]

_TREE_NAMES = (
    "GradientBoostingClassifier", "GradientBoostingRegressor", "RandomForestClassifier",
    "RandomForestRegressor", "ExtraTreesClassifier", "ExtraTreesRegressor",
    "DecisionTreeClassifier", "DecisionTreeRegressor", "ExtraTreeClassifier", "ExtraTreeRegressor",
    "HistGradientBoostingClassifier", "HistGradientBoostingRegressor", "XGBClassifier", "XGBRegressor",
    "LGBMClassifier", "LGBMRegressor", "CatBoostClassifier", "CatBoostRegressor",
)
_LINEAR_NAMES = ("LogisticRegression", "LinearRegression", "Ridge", "Lasso", "ElasticNet", "SGDClassifier")


def is_tree_model(model) -> bool:
    """True for the tree models explained by exact Tree SHAP (Lundberg et al. 2020): scikit-learn's by Candor's own
    (:mod:`explainers.tree_shap`), the others by ``shap.TreeExplainer``."""
    return type(model).__name__ in _TREE_NAMES


def is_linear_model(model) -> bool:
    """True for scikit-learn linear models with ``coef_`` (exact linear SHAP, Lundberg & Lee 2017)."""
    return type(model).__name__ in _LINEAR_NAMES


def tree_shap_refusal(model) -> str | None:
    """Why shap's interventional Tree SHAP must not explain ``model``, or None when it may.

    shap 0.51's interventional Tree SHAP gives wrong values for scikit-learn regression trees fitted with
    unequal sample weights: a bootstrap ``RandomForestRegressor``, ``GradientBoosting*`` with ``subsample``
    below 1, any tree given ``sample_weight``. Measured against Shapley values by brute force (every
    coalition of scikit-learn's diabetes columns, 20 background rows): off by up to 1.6 in the target's units,
    though ``base_value + sum`` still equals f(x) on most rows. Classification trees (a bootstrap
    ``RandomForestClassifier``) and unweighted regression trees agree to 1e-7. Such a model is explained by
    the model-agnostic estimators instead (the caller says why, with this text).
    """
    for tree in _sklearn_trees(model):
        if type(tree).__name__ not in ("DecisionTreeRegressor", "ExtraTreeRegressor"):
            continue
        t = tree.tree_
        per_sample = t.weighted_n_node_samples / np.maximum(t.n_node_samples, 1)
        if not np.allclose(per_sample, per_sample[0]):
            return ("its regression trees were fitted with unequal sample weights (bootstrap or subsample), on "
                    "which shap's interventional Tree SHAP gives wrong values")
    return None


def _sklearn_trees(model):
    """The scikit-learn trees inside ``model`` (itself, or an ensemble's ``estimators_``), none for other kinds."""
    if hasattr(model, "tree_"):
        return [model]
    if not type(model).__module__.startswith("sklearn.") or not hasattr(model, "estimators_"):
        return []
    return [t for t in np.asarray(model.estimators_, dtype=object).ravel() if hasattr(t, "tree_")]
