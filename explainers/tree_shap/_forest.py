"""scikit-learn tree models read into one array form: every tree's split tests and leaf values, and the output
they add up to.

A :class:`Forest` is what :mod:`explainers.tree_shap` explains: for input rows ``X`` (the model's own input,
after any Pipeline steps), output ``k`` of the model is ``base[k] + sum over trees t of trees[t].value[leaf, k]``
(the model's *margin* for boosted classifiers, the probability for forests of classification trees, the prediction
for regressors). :meth:`Forest.predict` recomputes it from the arrays alone; the tests hold it equal to the model's
own ``predict_proba`` / ``decision_function`` / ``predict``, so the split tests below are the model's.

Split tests, as scikit-learn's own traversal code makes them:

* ``DecisionTree*``, ``RandomForest*``, ``ExtraTrees*``, ``GradientBoosting*``: the row is cast to float32 and goes
  left when ``x <= threshold``; a NaN goes where ``tree_.missing_go_to_left`` says.
* ``HistGradientBoosting*``: float64 ``x <= num_threshold`` goes left; NaN follows ``missing_go_to_left``; a
  categorical split sends a category left when it is in the node's bitset, right when it is another known
  category, and treats a negative or unknown category as missing.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["Tree", "Forest", "forest_of", "SUPPORTED"]

SUPPORTED = (
    "DecisionTreeClassifier", "DecisionTreeRegressor", "ExtraTreeClassifier", "ExtraTreeRegressor",
    "RandomForestClassifier", "RandomForestRegressor", "ExtraTreesClassifier", "ExtraTreesRegressor",
    "GradientBoostingClassifier", "GradientBoostingRegressor",
    "HistGradientBoostingClassifier", "HistGradientBoostingRegressor",
)
"""Model classes (scikit-learn's) that :func:`forest_of` reads."""


@dataclass(frozen=True)
class Tree:
    """One tree's nodes as arrays (``n_nodes`` entries each; a leaf has ``feature == -1``).

    Parameters
    ----------
    feature : ndarray of int, shape (n_nodes,)
        Input column tested at the node, -1 at a leaf.
    threshold : ndarray of float, shape (n_nodes,)
    left, right : ndarray of int, shape (n_nodes,)
        Children.
    missing_left : ndarray of bool, shape (n_nodes,)
        Where a missing value (NaN, or an unknown category) goes.
    value : ndarray of float, shape (n_nodes, n_outputs)
        What a leaf adds to each output (already scaled, e.g. by a learning rate).
    cat_left : ndarray of uint32, shape (n_nodes, 8) or None
        For a categorical split, the bitset of categories that go left (``cat_left[node]``), else None.
    is_cat : ndarray of bool, shape (n_nodes,) or None
    known : dict or None
        Input column -> bitset (uint32, shape (8,)) of the categories seen in training.
    float32 : bool
        Compare the row cast to float32 (scikit-learn's classic trees) or as float64 (HistGradientBoosting).
    """

    feature: np.ndarray
    threshold: np.ndarray
    left: np.ndarray
    right: np.ndarray
    missing_left: np.ndarray
    value: np.ndarray
    cat_left: np.ndarray | None = None
    is_cat: np.ndarray | None = None
    known: dict | None = None
    float32: bool = True

    def goes_left(self, X: np.ndarray, nodes: np.ndarray) -> np.ndarray:
        """Whether each row goes left at each of ``nodes`` (internal nodes), shape (n_rows, len(nodes)).

        The test is made at every node for every row, reached or not: what the interventional algorithm needs
        (a row's side at a node it would not reach by itself).
        """
        f = self.feature[nodes]
        V = X[:, f]
        if self.float32:
            V = V.astype(np.float32)
        missing = np.isnan(V)
        out = np.where(missing, self.missing_left[nodes][None, :], V <= self.threshold[nodes][None, :])
        if self.is_cat is not None and self.is_cat[nodes].any():
            for j in np.flatnonzero(self.is_cat[nodes]):
                out[:, j] = self._categorical_left(V[:, j], nodes[j])
        return out

    def _categorical_left(self, v: np.ndarray, node: int) -> np.ndarray:
        """HistGradientBoosting's categorical test for one node, as its predictor makes it."""
        ok = ~np.isnan(v) & (v >= 0) & (v < 256)
        code = np.where(ok, v, 0).astype(np.int64)
        in_left = ok & (((self.cat_left[node][code // 32] >> (code % 32).astype(np.uint32)) & 1) == 1)
        known = self.known[int(self.feature[node])]
        in_known = ok & (((known[code // 32] >> (code % 32).astype(np.uint32)) & 1) == 1)
        return np.where(in_left, True, np.where(in_known, False, bool(self.missing_left[node])))

    def leaf_of(self, X: np.ndarray) -> np.ndarray:
        """The leaf each row reaches, shape (n_rows,) (a traversal from the root, for checks)."""
        node = np.zeros(len(X), dtype=np.int64)
        internal = np.flatnonzero(self.feature >= 0)
        if internal.size == 0:
            return node
        column = np.full(len(self.feature), -1)
        column[internal] = np.arange(internal.size)
        left = self.goes_left(X, internal)
        rows = np.arange(len(X))
        while True:
            inner = self.feature[node] >= 0
            if not inner.any():
                return node
            r = rows[inner]
            go = left[r, column[node[inner]]]
            node[inner] = np.where(go, self.left[node[inner]], self.right[node[inner]])


@dataclass(frozen=True)
class Forest:
    """A tree model as arrays: ``output(X)[:, k] = base[k] + sum_t trees[t].value[leaf_t(X), k]``.

    Parameters
    ----------
    trees : tuple of Tree
    base : ndarray of float, shape (n_outputs,)
        The constant every row starts from (a booster's initial raw prediction; 0 for a forest).
    output : {"probability", "margin", "raw"}
        What the sum is: class probabilities (forests of classification trees, a mean of the trees' class
        fractions), a boosted classifier's margin (log-odds for two classes, per-class scores before the
        softmax for more), or a regressor's prediction.
    n_features : int
        Input columns the trees read.
    """

    trees: tuple
    base: np.ndarray
    output: str
    n_features: int

    @property
    def n_outputs(self) -> int:
        return len(self.base)

    def predict(self, X: np.ndarray) -> np.ndarray:
        """The summed output of rows ``X`` (n_rows, n_features), shape (n_rows, n_outputs)."""
        X = np.asarray(X, dtype=float)
        out = np.tile(self.base, (len(X), 1))
        for t in self.trees:
            out += t.value[t.leaf_of(X)]
        return out


def forest_of(model) -> Forest:
    """Read a fitted scikit-learn tree model into a :class:`Forest`.

    Parameters
    ----------
    model : one of :data:`SUPPORTED`, fitted

    Returns
    -------
    Forest

    Raises
    ------
    TypeError
        If the model is not one of :data:`SUPPORTED`, or its output is not a sum of its trees (a
        GradientBoosting model whose ``init`` estimator is not a constant, a multi-output tree).
    """
    name = type(model).__name__
    if name not in SUPPORTED or not type(model).__module__.startswith("sklearn."):
        raise TypeError(f"{name} is not a scikit-learn tree model this Tree SHAP reads")
    if name.startswith("HistGradientBoosting"):
        return _hist_forest(model)
    if name.startswith("GradientBoosting"):
        return _boosted_forest(model)
    trees = [model] if hasattr(model, "tree_") else list(model.estimators_)
    classifier = hasattr(model, "classes_")
    read = [_sklearn_tree(t, classifier) for t in trees]
    scaled = tuple(Tree(**{**r.__dict__, "value": r.value / len(read)}) for r in read)
    n_out = read[0].value.shape[1]
    return Forest(scaled, np.zeros(n_out), "probability" if classifier else "raw", int(model.n_features_in_))


def _sklearn_tree(est, classifier: bool, scale: float = 1.0) -> Tree:
    """A scikit-learn ``Tree`` (``est.tree_``); a classifier's leaf values as class fractions."""
    t = est.tree_
    if t.n_outputs != 1:
        raise TypeError(f"{type(est).__name__} has {t.n_outputs} outputs; one is explained")
    value = np.asarray(t.value[:, 0, :], dtype=float)
    if classifier:
        value = value / np.maximum(value.sum(axis=1, keepdims=True), np.finfo(float).tiny)
    feature = np.where(t.children_left < 0, -1, t.feature).astype(np.int64)
    missing = getattr(t, "missing_go_to_left", np.zeros(t.node_count, np.uint8))
    return Tree(feature, np.asarray(t.threshold, float), t.children_left.astype(np.int64),
                t.children_right.astype(np.int64), np.asarray(missing, bool), value * scale)


def _boosted_forest(model) -> Forest:
    """GradientBoosting*: raw prediction = init + learning_rate * sum of the stages' regression trees."""
    init = model.init_
    if not (init == "zero" or type(init).__name__ in ("DummyClassifier", "DummyRegressor")):
        raise TypeError(f"{type(model).__name__} starts from a fitted {type(init).__name__}, not a constant: its "
                        "output is not a sum of trees")
    n_features = int(model.n_features_in_)
    base = np.asarray(model._raw_predict_init(np.zeros((1, n_features), dtype=np.float32)), dtype=float)[0]
    stages = np.asarray(model.estimators_, dtype=object)
    trees = []
    for k in range(stages.shape[1]):
        for est in stages[:, k]:
            t = _sklearn_tree(est, False, model.learning_rate)
            value = np.zeros((len(t.value), stages.shape[1]))
            value[:, k] = t.value[:, 0]
            trees.append(Tree(**{**t.__dict__, "value": value}))
    output = "margin" if hasattr(model, "classes_") else "raw"
    return Forest(tuple(trees), base, output, n_features)


def _hist_forest(model) -> Forest:
    """HistGradientBoosting*: raw prediction = baseline + sum of the predictors' leaf values."""
    k_out = int(model.n_trees_per_iteration_)
    base = np.asarray(model._baseline_prediction, dtype=float).ravel()
    base = np.broadcast_to(base, (k_out,)).copy() if base.size in (1, k_out) else base[:k_out]
    known_bits, f_idx_map = model._bin_mapper.make_known_categories_bitsets()
    trees = []
    for iteration in model._predictors:
        for k, pred in enumerate(iteration):
            nodes = pred.nodes
            leaf = nodes["is_leaf"].astype(bool)
            value = np.zeros((len(nodes), k_out))
            value[:, k] = np.where(leaf, nodes["value"], 0.0)
            is_cat = nodes["is_categorical"].astype(bool) & ~leaf
            cat_left = None
            if is_cat.any():
                cat_left = np.zeros((len(nodes), 8), dtype=np.uint32)
                cat_left[is_cat] = pred.raw_left_cat_bitsets[nodes["bitset_idx"][is_cat]]
            known = {int(f): np.asarray(known_bits[f_idx_map[f]], dtype=np.uint32)
                     for f in np.unique(nodes["feature_idx"][is_cat])} if is_cat.any() else None
            trees.append(Tree(np.where(leaf, -1, nodes["feature_idx"]).astype(np.int64),
                              np.asarray(nodes["num_threshold"], float), nodes["left"].astype(np.int64),
                              nodes["right"].astype(np.int64), nodes["missing_go_to_left"].astype(bool), value,
                              cat_left, is_cat if is_cat.any() else None, known, float32=False))
    output = "margin" if hasattr(model, "classes_") else "raw"
    return Forest(tuple(trees), base, output, int(model.n_features_in_))
