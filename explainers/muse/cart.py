"""CART surrogate baseline: a decision tree on the black box's labels, leaves as rules.

docs/methods.md, "Rule surrogates: MUSE and CART" product baseline (a): ``DecisionTreeClassifier`` trained on
``B(x)`` with ``max_leaf_nodes`` equal to the rule budget. Each leaf becomes one
rule (empty descriptor); bounds on one feature along a path are merged, so a
leaf's predicate count is what its rendered rule shows.

Drawn as a decision set (``decision_set_``, method ``"cart_dl"``): a decision set with a default
rule never shows the leaves of its default label, so the fair comparison with MUSE keeps only the
leaves of the other labels as rules and lets the default rule (the label of the most training rows
among the leaves) label the rest. It predicts what the tree predicts; its predicates are counted
as MUSE's are (one per merged bound or level set).
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.tree import DecisionTreeClassifier
from sklearn.utils.validation import check_is_fitted

from ..types import Predicate
from ._items import _is_numeric
from ._semantics import default_label, fire_matrix, quantities, resolve_rules
from ._types import RuleSetQuantities, TwoLevelRule, TwoLevelRuleSet
from ._frames import _py, as_frame

__all__ = ["CartSurrogate"]


class CartSurrogate(ClassifierMixin, BaseEstimator):
    """Decision-tree surrogate whose leaves are read as a flat rule set.

    Parameters
    ----------
    max_leaf_nodes : int, default=10
        Number of leaves = number of rules.
    seed : int, default=0
        ``random_state`` of the tree.
    max_depth : int, optional
        Depth limit of the tree (the error tree of :mod:`explainers.cohorts` uses 3); default: none.
    min_samples_leaf : int, default=1
        Fewest fitting rows in a leaf.

    Attributes
    ----------
    rules_ : tuple of TwoLevelRule
        One per leaf, empty descriptors, disjoint coverage.
    default_label_ : label
        Only used for rows no leaf rule matches (missing numeric values or
        categorical levels unseen in training).
    decision_set_ : TwoLevelRuleSet
        Method ``"cart_dl"``: the leaves not of the default label as rules, plus the default rule.
    classes_, feature_names_in_, rule_set_, tree_model_

    Notes
    -----
    Categorical columns are one-hot encoded; a path ``level <= 0.5`` becomes
    the predicate ``feature in (other levels)``. Missing numeric values are
    routed by the tree but fail every rule predicate (the default-rule convention of docs/methods.md, "Rule surrogates: MUSE and CART"), so
    such rows fall to the default label when the rules are applied.

    References
    ----------
    Breiman, Friedman, Olshen, Stone (1984). Classification and Regression Trees.
    """

    def __init__(self, *, max_leaf_nodes=10, seed=0, max_depth=None, min_samples_leaf=1):
        self.max_leaf_nodes = max_leaf_nodes
        self.seed = seed
        self.max_depth = max_depth
        self.min_samples_leaf = min_samples_leaf

    def _encode(self, X: pd.DataFrame) -> np.ndarray:
        cols = []
        for f in self.feature_names_in_:
            if f in self._levels:
                v = X[f].to_numpy()
                cols += [(v == lv).astype(float) for lv in self._levels[f]]
            else:
                cols.append(pd.to_numeric(X[f], errors="coerce").to_numpy(dtype=float))
        return np.column_stack(cols)

    def fit(self, X, y_model, feature_names: Sequence[str] | None = None):
        """Fit the tree on ``(X, y_model)`` and read its leaves as rules.

        Parameters
        ----------
        X : DataFrame or ndarray of shape (n_rows, n_features)
        y_model : array-like of shape (n_rows,)
            Black-box labels.

        Returns
        -------
        self

        Raises
        ------
        ValueError
            If ``max_leaf_nodes < 2`` or lengths differ.
        """
        if not isinstance(self.max_leaf_nodes, (int, np.integer)) or self.max_leaf_nodes < 2:
            raise ValueError(f"max_leaf_nodes must be an int >= 2, got {self.max_leaf_nodes!r}")
        Xf = as_frame(X, feature_names)
        y = np.asarray(y_model)
        if len(y) != len(Xf):
            raise ValueError(f"y_model has {len(y)} rows, X has {len(Xf)}")
        self.feature_names_in_ = np.asarray(Xf.columns, dtype=object)
        self.n_features_in_ = Xf.shape[1]
        self._levels = {f: sorted({_py(v) for v in Xf[f].dropna().unique()}, key=str)
                        for f in Xf.columns if not _is_numeric(Xf[f])}
        cols = []
        for f in Xf.columns:
            cols += [(f, lv) for lv in self._levels[f]] if f in self._levels else [(f, None)]
        self.classes_, y_idx = np.unique(y, return_inverse=True)
        self.tree_model_ = DecisionTreeClassifier(max_leaf_nodes=self.max_leaf_nodes, random_state=self.seed,
                                                  max_depth=self.max_depth, min_samples_leaf=self.min_samples_leaf)
        self.tree_model_.fit(self._encode(Xf), y_idx)
        leaves = self._leaf_rules(cols)
        rules = []
        for preds, lab in leaves:
            m = fire_matrix([TwoLevelRule((), preds, 0, 0, 0.0, 0.0)], Xf)[0]
            sup = int(m.sum())
            prec = float(np.mean(y_idx[m] == lab)) if sup else 0.0
            rules.append(TwoLevelRule((), preds, _py(self.classes_[lab]), sup, sup / len(y), prec))
        self.rules_ = tuple(rules)
        fired = fire_matrix(self.rules_, Xf)
        self.default_label_ = _py(self.classes_[default_label(fired, y_idx, list(range(len(self.classes_))))])
        pred, amb, unc = resolve_rules(self.rules_, fired, self.default_label_)
        yo = np.asarray([_py(v) for v in y], dtype=object)
        q = quantities(self.rules_, fired, yo, pred, amb, unc)
        self.rule_set_ = TwoLevelRuleSet("cart", self.rules_, self.default_label_,
                                         tuple(_py(c) for c in self.classes_),
                                         tuple(str(c) for c in Xf.columns), q, self.get_params())
        self.decision_set_ = self._as_decision_set(Xf, yo)
        return self

    def _as_decision_set(self, Xf: pd.DataFrame, yo: np.ndarray) -> TwoLevelRuleSet:
        rows_by_label: dict = {}
        for r in self.rules_:
            rows_by_label[r.label] = rows_by_label.get(r.label, 0) + r.support
        order = {c: i for i, c in enumerate(_py(c) for c in self.classes_)}
        dflt = max(rows_by_label, key=lambda c: (rows_by_label[c], -order[c]))
        rules = tuple(r for r in self.rules_ if r.label != dflt)
        fired = fire_matrix(rules, Xf)
        pred, amb, unc = resolve_rules(rules, fired, dflt)
        q = quantities(rules, fired, yo, pred, amb, unc)
        return TwoLevelRuleSet("cart_dl", rules, dflt, tuple(_py(c) for c in self.classes_),
                               tuple(str(c) for c in Xf.columns), q, {**self.get_params(), "default_leaves_dropped":
                                                                      len(self.rules_) - len(rules)})

    def _leaf_rules(self, cols):
        t = self.tree_model_.tree_
        out = []

        def walk(node, bounds):
            if t.children_left[node] == -1:
                out.append((self._predicates(bounds), int(np.argmax(t.value[node][0]))))
                return
            f, lv = cols[t.feature[node]]
            thr = float(t.threshold[node])
            for child, side in ((t.children_left[node], "le"), (t.children_right[node], "gt")):
                b = {k: dict(v) for k, v in bounds.items()}
                d = b.setdefault(f, {})
                if lv is None:
                    if side == "le":
                        d["<="] = min(d.get("<=", np.inf), thr)
                    else:
                        d[">"] = max(d.get(">", -np.inf), thr)
                elif side == "gt":
                    d["=="] = lv
                else:
                    d.setdefault("not", set()).add(lv)
                walk(child, b)

        walk(0, {})
        return out

    def _predicates(self, bounds) -> tuple[Predicate, ...]:
        preds = []
        for f in self.feature_names_in_:
            d = bounds.get(f)
            if not d:
                continue
            if f in self._levels:
                if "==" in d:
                    preds.append(Predicate(f, "==", d["=="]))
                else:
                    allowed = tuple(lv for lv in self._levels[f] if lv not in d["not"])
                    preds.append(Predicate(f, "==", allowed[0]) if len(allowed) == 1
                                 else Predicate(f, "in", allowed))
            else:
                if ">" in d:
                    preds.append(Predicate(f, ">", float(d[">"])))
                if "<=" in d:
                    preds.append(Predicate(f, "<=", float(d["<="])))
        return tuple(preds)


    def predict(self, X) -> np.ndarray:
        """Labels from the leaf rules (equal to the tree's except for missing values).

        Returns
        -------
        ndarray of shape (n_rows,)
        """
        check_is_fitted(self, "rules_")
        Xf = as_frame(X, list(self.feature_names_in_) if not isinstance(X, pd.DataFrame) else None)
        pred, _, _ = resolve_rules(self.rules_, fire_matrix(self.rules_, Xf), self.default_label_)
        return np.asarray(pred.tolist(), dtype=self.classes_.dtype)

    def quantities(self, X, y_model) -> RuleSetQuantities:
        """Same quantities as :meth:`TwoLevelDecisionSet.quantities`."""
        check_is_fitted(self, "rules_")
        Xf = as_frame(X, list(self.feature_names_in_) if not isinstance(X, pd.DataFrame) else None)
        fired = fire_matrix(self.rules_, Xf)
        pred, amb, unc = resolve_rules(self.rules_, fired, self.default_label_)
        return quantities(self.rules_, fired, np.asarray([_py(v) for v in np.asarray(y_model)], dtype=object),
                          pred, amb, unc)
