"""The node arrays of a loaded scikit-learn model that its compiled code indexes without bounds checks (split from
:mod:`workspace.model_safety`, which calls :func:`check_structures` after skops has rebuilt the model).

Decision trees (``Tree``) and histogram gradient-boosting predictors (``TreePredictor``): every child and feature
index in range and every child after its parent (no cycle), so a crafted tree cannot crash the process or loop
forever; neighbour search trees (``KDTree``, ``BallTree``) are rebuilt from the estimator's own training rows.
"""
from __future__ import annotations

import numpy as np

from .errors import CandorError


def _objects(model):
    """(object, nearest enclosing estimator, the estimator enclosing that one) for everything reachable from ``model``."""
    from sklearn.base import BaseEstimator

    seen, stack = set(), [(model, None, None)]
    while stack:
        obj, owner, outer = stack.pop()
        if id(obj) in seen or obj is None or isinstance(obj, (str, bytes, int, float, bool)):
            continue
        seen.add(id(obj))
        yield obj, owner, outer
        if isinstance(obj, BaseEstimator):
            owner, outer = obj, owner
        if isinstance(obj, dict):
            children = obj.values()
        elif isinstance(obj, (list, tuple, set, frozenset)):
            children = obj
        elif isinstance(obj, np.ndarray):
            children = obj.ravel() if obj.dtype.hasobject else ()
        else:
            children = getattr(obj, "__dict__", {}).values()
        stack.extend((c, owner, outer) for c in children)


def _check_children(name: str, what: str, left, right, inner, n_nodes: int) -> None:
    """Inner nodes' children must come after them (no cycles) and exist (no reads past the array)."""
    idx = np.arange(n_nodes)
    for side, child in (("left", left), ("right", right)):
        bad = inner & ~((child > idx) & (child < n_nodes))
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise CandorError(f"{name}: a {what} is corrupt: node {i}'s {side} child is {int(child[i])}, "
                              f"outside nodes {i + 1} to {n_nodes - 1}")


def _check_tree(name: str, tree, owner, outer) -> None:
    from sklearn.ensemble._forest import BaseForest
    from sklearn.ensemble._gb import BaseGradientBoosting

    n = int(tree.node_count)
    left, right, feature = (np.asarray(a, dtype=np.int64) for a in (tree.children_left, tree.children_right,
                                                                   tree.feature))
    if not (len(left) == len(right) == len(feature) == n):
        raise CandorError(f"{name}: a decision tree is corrupt: {n} nodes but arrays of length {len(left)}")
    inner = left != -1
    _check_children(name, "decision tree", left, right, inner, n)
    if (right[~inner] != -1).any():
        raise CandorError(f"{name}: a decision tree is corrupt: a leaf has a right child")
    widths = [int(tree.n_features)]
    for est in (owner, outer if isinstance(outer, (BaseForest, BaseGradientBoosting)) else None):
        if est is not None and hasattr(est, "n_features_in_"):  # trees of forests/boosting see the ensemble's rows
            widths.append(int(est.n_features_in_))
    width = min(widths)
    bad = inner & ~((feature >= 0) & (feature < width))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise CandorError(f"{name}: a decision tree is corrupt: node {i} splits on feature {int(feature[i])}, "
                          f"but the model takes {width} features")


def _check_predictor(name: str, pred, owner) -> None:
    from sklearn.ensemble._hist_gradient_boosting.common import PREDICTOR_RECORD_DTYPE

    nodes = pred.nodes
    if not isinstance(nodes, np.ndarray) or nodes.dtype != PREDICTOR_RECORD_DTYPE or nodes.ndim != 1:
        raise CandorError(f"{name}: a histogram gradient-boosting tree is corrupt: unexpected node array")
    n = len(nodes)
    inner = ~nodes["is_leaf"].astype(bool)
    _check_children(name, "histogram gradient-boosting tree", nodes["left"].astype(np.int64),
                    nodes["right"].astype(np.int64), inner, n)
    width = int(getattr(owner, "n_features_in_", 0))
    mapper = getattr(owner, "_bin_mapper", None)  # its is_categorical_ maps features to known-category bitsets
    cats = np.asarray(getattr(mapper, "is_categorical_", None))
    feat = nodes["feature_idx"].astype(np.int64)
    bad = inner & ~((feat >= 0) & (feat < width))
    split_cat = inner & nodes["is_categorical"].astype(bool)
    n_bitsets = min(len(pred.raw_left_cat_bitsets), len(pred.binned_left_cat_bitsets))
    if split_cat.any():
        ok_cat = cats.ndim == 1 and cats.size == width and cats.dtype.kind in "biu"
        cats = cats.astype(bool) if ok_cat else cats
        bad |= split_cat & ~((nodes["bitset_idx"].astype(np.int64) < n_bitsets) & ok_cat)
        if ok_cat:
            bad |= split_cat & ~cats[np.clip(feat, 0, max(width - 1, 0))]
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise CandorError(f"{name}: a histogram gradient-boosting tree is corrupt: node {i} splits on feature "
                          f"{int(feat[i])} (categorical: {bool(nodes['is_categorical'][i])}), but the model takes "
                          f"{width} features")


def check_structures(model, name: str) -> None:
    """Check the node arrays of every tree in ``model``; rebuild neighbour search trees from their training rows.

    Parameters
    ----------
    model : object
        As loaded by skops.
    name : str
        The file's name, for messages.

    Raises
    ------
    CandorError
        If a tree has a child or feature index out of range, a child that does not come after its
        parent (a cycle), or a search tree that does not belong to a neighbours estimator.
    """
    from sklearn.ensemble._hist_gradient_boosting.predictor import TreePredictor
    from sklearn.neighbors import BallTree, KDTree
    from sklearn.tree._tree import Tree

    rebuild = []
    for obj, owner, outer in list(_objects(model)):
        if isinstance(obj, Tree):
            _check_tree(name, obj, owner, outer)
        elif isinstance(obj, TreePredictor):
            _check_predictor(name, obj, owner)
        elif isinstance(obj, (KDTree, BallTree)):
            if owner is None or getattr(owner, "_tree", None) is not obj or not hasattr(owner, "_fit_X"):
                raise CandorError(f"{name}: a {type(obj).__name__} outside a neighbours estimator")
            rebuild.append(owner)
    for est in rebuild:  # what NeighborsBase._fit does: the file's index arrays are never used
        try:
            est._tree = type(est._tree)(np.asarray(est._fit_X), est.leaf_size, metric=est.effective_metric_,
                                        **(est.effective_metric_params_ or {}))
        except Exception as exc:
            raise CandorError(f"{name}: could not rebuild the neighbour search tree of {type(est).__name__} "
                              f"({type(exc).__name__}: {exc})") from None
