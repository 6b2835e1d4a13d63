"""SHAP attributions for scikit-learn models (Lundberg & Lee 2017, arXiv 1705.07874).

Backend dispatch follows ``shared/METHODS.md`` §1.1: exact interventional Tree
SHAP for tree ensembles (Lundberg et al. 2020, arXiv 1905.04610), Linear SHAP
for linear models, and the model-agnostic Permutation explainer otherwise.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import shap

from .types import Explanation, GlobalImportance

__all__ = ["ShapExplainer", "is_tree_model", "is_linear_model"]

_TREE_NAMES = (
    "GradientBoostingClassifier", "GradientBoostingRegressor", "RandomForestClassifier",
    "RandomForestRegressor", "ExtraTreesClassifier", "ExtraTreesRegressor",
    "DecisionTreeClassifier", "DecisionTreeRegressor", "XGBClassifier", "XGBRegressor",
    "LGBMClassifier", "LGBMRegressor", "CatBoostClassifier", "CatBoostRegressor",
)
_LINEAR_NAMES = ("LogisticRegression", "LinearRegression", "Ridge", "Lasso", "ElasticNet", "SGDClassifier")


def is_tree_model(model) -> bool:
    """True for the tree ensembles that ``shap.TreeExplainer`` explains exactly."""
    return type(model).__name__ in _TREE_NAMES


def is_linear_model(model) -> bool:
    """True for scikit-learn linear models with ``coef_``."""
    return type(model).__name__ in _LINEAR_NAMES


class ShapExplainer:
    """SHAP attributions of one class's predicted probability (or a linear margin).

    Parameters
    ----------
    model : fitted scikit-learn classifier with ``predict_proba``
    background : DataFrame of shape (n_background_rows, n_features)
        Rows the expectations are taken over; ``background_size`` rows are
        sampled from it with ``seed``.
    target_index : int, default=1
        Column of ``predict_proba`` to explain.
    target_name : str, default="class 1"
    background_size : int, default=100
    seed : int, default=0

    Notes
    -----
    Tree models: ``shap.TreeExplainer(feature_perturbation="interventional",
    model_output="probability")`` — exact, so the additivity gap is ~1e-7.
    Linear models: ``shap.LinearExplainer`` on the margin (log-odds), where
    φ_j = w_j (x_j − E[x_j]) under feature independence. Others:
    ``shap.PermutationExplainer`` with an ``Independent`` masker (exactly
    additive by its antithetic permutations), slower.

    Raises
    ------
    TypeError
        If ``model`` has no ``predict_proba``.
    """

    def __init__(self, model, *, background: pd.DataFrame, target_index: int = 1,
                 target_name: str = "class 1", background_size: int = 100, seed: int = 0) -> None:
        if not hasattr(model, "predict_proba"):
            raise TypeError(f"{type(model).__name__} has no predict_proba; SHAP needs class probabilities")
        self.model = model
        self.feature_names = tuple(str(c) for c in background.columns)
        n = min(background_size, len(background))
        self.background = background.sample(n=n, random_state=seed) if len(background) > n else background
        self.target_index, self.target_name, self.seed = target_index, target_name, seed
        self._columns = background.columns
        if is_tree_model(model):
            self._backend = shap.TreeExplainer(model, data=self.background,
                                               feature_perturbation="interventional",
                                               model_output="probability")
            self.output_space, kind = "probability", "TreeExplainer, interventional"
        elif is_linear_model(model):
            masker = shap.maskers.Independent(self.background, max_samples=n)
            self._backend = shap.LinearExplainer(model, masker)
            self.output_space, kind = "log_odds", "LinearExplainer (margin), independent masker"
        else:
            masker = shap.maskers.Independent(self.background, max_samples=n)
            self._backend = shap.PermutationExplainer(self._predict, masker, seed=seed)
            self.output_space, kind = "probability", "PermutationExplainer, independent masker"
        self.source = f"SHAP {shap.__version__} {kind}, {n} background rows (seed {seed})"

    def _predict(self, X) -> np.ndarray:
        X = X if isinstance(X, pd.DataFrame) else pd.DataFrame(X, columns=self._columns)
        return self.model.predict_proba(X)[:, self.target_index]

    def _output(self, X: pd.DataFrame) -> np.ndarray:
        if self.output_space == "log_odds":
            return np.asarray(self.model.decision_function(X), dtype=float).reshape(len(X), -1)[:, -1]
        return self._predict(X)

    def _values(self, X: pd.DataFrame) -> tuple[np.ndarray, float]:
        if isinstance(self._backend, shap.PermutationExplainer):
            res = self._backend(X, silent=True)
            return np.asarray(res.values, dtype=float), float(np.mean(res.base_values))
        vals = np.asarray(self._backend.shap_values(X), dtype=float)
        base = np.asarray(self._backend.expected_value, dtype=float).ravel()
        if vals.ndim == 3:
            vals = vals[:, :, self.target_index]
        b = base[self.target_index] if base.size > 1 else base[0]
        return vals, float(b)

    def explain_many(self, X: pd.DataFrame) -> GlobalImportance:
        """Attributions for every row of ``X``.

        Parameters
        ----------
        X : DataFrame of shape (n_rows, n_features)

        Returns
        -------
        GlobalImportance
            ``values`` of shape (n_rows, n_features) in ``output_space`` units.
        """
        values, base = self._values(X)
        return GlobalImportance(self.feature_names, values, X.to_numpy(dtype=float), base,
                                self.output_space, self.target_name, self.source)

    def explain(self, x: pd.DataFrame) -> Explanation:
        """Attribution of one row (a one-row DataFrame).

        Returns
        -------
        Explanation
            ``values`` of shape (n_features,); ``additivity_gap`` is reported.

        Raises
        ------
        ValueError
            If ``x`` does not have exactly one row.
        """
        if len(x) != 1:
            raise ValueError(f"explain takes one row, got {len(x)}")
        values, base = self._values(x)
        return self.from_row(x, values[0], base)

    def from_row(self, x: pd.DataFrame, values: np.ndarray, base_value: float) -> Explanation:
        """Wrap precomputed attributions of the one-row frame ``x`` as an :class:`Explanation`."""
        return Explanation(
            method="shap", feature_names=self.feature_names, values=values, base_value=base_value,
            prediction=float(self._output(x)[0]), feature_values=x.to_numpy()[0],
            output_space=self.output_space, target=self.target_name, source=self.source,
            params={"background_size": len(self.background), "seed": self.seed},
        )
