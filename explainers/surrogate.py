"""Global rule surrogate from a depth-limited decision tree (CART) fitted to the model's labels.

A first, honest baseline: the tree is fitted to the black box's *predictions*
B(x), never to the ground truth, and each leaf becomes one readable rule. Its
fidelity is the agreement rate with B on held-out rows (docs/methods.md,
"Rule surrogates: MUSE and CART", the CART baseline). The tree and its leaves-as-rules come from
:class:`explainers.muse.CartSurrogate` (the frontier's CART, the one CART
implementation in Candor); this module gives them the flat :class:`Rule` /
:class:`Surrogate` types of ``python -m app check`` and the persuasive rules.
Two-level MUSE decision sets (Lakkaraju et al. 2019) are in :mod:`explainers.muse`.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted

from .metrics import agreement_rate
from .muse.cart import CartSurrogate
from .types import Fidelity, Rule, Surrogate, SurrogateCurve

__all__ = ["TreeRuleSurrogate", "tree_surrogate_curve"]


class TreeRuleSurrogate(ClassifierMixin, BaseEstimator):
    """CART surrogate whose leaves are read as rules.

    Parameters
    ----------
    max_leaf_nodes : int, default=8
        Number of rules (one per leaf).
    random_state : int, default=0

    Attributes
    ----------
    rules_ : tuple of Rule
        One rule per leaf, with support, coverage and precision on the fit data;
        predictions are the labels as text.
    complexity_ : int
        Total number of predicates (bounds on one feature along a path merged).
    classes_ : ndarray
    cart_ : CartSurrogate
        The fitted tree and its rules.

    Notes
    -----
    Predictions come from the rules, which partition every row without missing
    values; a row with NaN in a feature some rule tests fails that predicate and
    gets the default label (the default-rule convention of docs/methods.md, "Rule surrogates: MUSE and CART"; see :class:`CartSurrogate`).
    """

    def __init__(self, max_leaf_nodes: int = 8, random_state: int = 0) -> None:
        self.max_leaf_nodes = max_leaf_nodes
        self.random_state = random_state

    def fit(self, X: pd.DataFrame, y_model) -> "TreeRuleSurrogate":
        """Fit to the black box's labels ``y_model`` (shape (n_rows,)); returns self.

        Raises
        ------
        TypeError
            If ``X`` is not a DataFrame (rules name its columns).
        """
        if not isinstance(X, pd.DataFrame):
            raise TypeError(f"X must be a DataFrame with feature names, got {type(X).__name__}")
        self.cart_ = CartSurrogate(max_leaf_nodes=max(2, int(self.max_leaf_nodes)), seed=self.random_state)
        self.cart_.fit(X, np.asarray(y_model))
        self.classes_ = self.cart_.classes_
        self.feature_names_in_ = self.cart_.feature_names_in_
        self.rules_ = tuple(Rule(r.rule, str(r.label), r.support, r.coverage, r.precision) for r in self.cart_.rules_)
        self.complexity_ = sum(len(r.predicates) for r in self.rules_)
        return self

    def predict(self, X: pd.DataFrame) -> np.ndarray:
        """Labels of shape (n_rows,), from applying ``rules_``."""
        check_is_fitted(self, "rules_")
        return self.cart_.predict(X)

    def to_surrogate(self, X_eval: pd.DataFrame, y_model_eval, label_names: dict | None = None) -> Surrogate:
        """Freeze as a :class:`Surrogate` with held-out fidelity on ``X_eval``.

        Parameters
        ----------
        X_eval : DataFrame of shape (n_eval, n_features)
        y_model_eval : array-like of shape (n_eval,)
            The black box's labels on ``X_eval``.
        label_names : dict, optional
            Maps labels to display names (e.g. ``{1: "malignant"}``).
        """
        check_is_fitted(self, "rules_")
        names = label_names or {}
        rules = tuple(Rule(r.predicates, str(names.get(_label(r.prediction, self.classes_), r.prediction)),
                           r.support, r.coverage, r.precision) for r in self.rules_)
        agreement = agreement_rate(self.predict(X_eval), np.asarray(y_model_eval))
        return Surrogate(
            method="cart", rules=rules, default_prediction="(none: every row falls in one leaf)",
            feature_names=tuple(str(c) for c in X_eval.columns),
            fidelity=Fidelity("agreement", agreement, len(X_eval), "holdout"), coverage=1.0,
            complexity=self.complexity_,
            source=(f"CART surrogate (scikit-learn DecisionTreeClassifier, max_leaf_nodes="
                    f"{self.max_leaf_nodes}, random_state={self.random_state}) fitted to the model's "
                    f"predictions on {sum(r.support for r in self.rules_)} training rows"),
        )


def _label(text: str, classes: np.ndarray):
    for c in classes:
        if str(c) == text:
            return c.item() if hasattr(c, "item") else c
    return text


def tree_surrogate_curve(X_train: pd.DataFrame, y_model_train, X_eval: pd.DataFrame, y_model_eval,
                         sizes=(2, 3, 4, 5, 6, 8, 10, 12, 16, 20, 24, 32), random_state: int = 0) -> SurrogateCurve:
    """Held-out agreement of CART surrogates over a sweep of ``max_leaf_nodes``.

    Returns
    -------
    SurrogateCurve
        One point per size: number of rules (leaves actually grown), number of
        predicates, and agreement on ``X_eval`` in [0, 1].
    """
    rows = []
    for size in sizes:
        s = TreeRuleSurrogate(max_leaf_nodes=size, random_state=random_state).fit(X_train, y_model_train)
        rows.append((len(s.rules_), s.complexity_, agreement_rate(s.predict(X_eval), np.asarray(y_model_eval)), size))
    n_rules, n_preds, agr, size = map(np.asarray, zip(*rows))
    return SurrogateCurve(n_rules, n_preds, agr, size,
                          source=f"CART surrogates, max_leaf_nodes in {list(sizes)}, agreement on {len(X_eval)} held-out rows")
