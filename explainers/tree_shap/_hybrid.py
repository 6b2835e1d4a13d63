"""A gradient boosting model's expected output over a background with some columns kept from a row, for many sets of
kept columns at once, exactly and without building the hybrid rows.

ERASER's sufficiency and comprehensiveness, AOPC and the per-k tradeoff curve of the Persuasive page (DeYoung et
al. 2020, arXiv 1911.03429) all need ``v(S) = E_b[f(x_S, b_rest)]``, the interventional value function of SHAP
(Janzing et al. 2020), for tens of sets ``S`` per row: :func:`explainers.persuasive.masked_outputs` builds one
hybrid row per set and background row (31 sets x 100 rows = 3,100 rows for one curve) and calls the model on them.
For a tree model the hybrid rows need not be built: at each split the sets travel with ``x`` or with ``b`` according
to whether they keep the split's column (:mod:`explainers.tree_shap._hybrid_kernel`), so each tree is walked once
per background row for all sets together, and each set gathers the leaf values its hybrid row would. The sums are
made tree after tree from the model's base value, as scikit-learn's own prediction adds them, and the explained
output is the model's own link of those margins, so the result equals the hybrid rows' path bit for bit
(``tests/explainers/test_hybrid_outputs.py``).

Read: ``GradientBoosting*`` and ``HistGradientBoosting*`` (scikit-learn's own classes, not subclasses), alone or as
the last step of a Pipeline whose preprocessing maps each raw column to its own output columns
(:meth:`explainers.model_adapter.ModelAdapter.tree_view`). Anything else (a forest, a categorical split, a row or
background with infinite values, or a NaN given to a classic tree) gives None, and the caller builds the rows.
"""
from __future__ import annotations

import weakref

import numpy as np

from .._boosting_calls import margin_outputs
from ._forest import forest_of

__all__ = ["HybridOutputs", "FlatTrees", "flat_trees"]

_METHOD = {"probability": "predict_proba", "margin": "decision_function", "raw": "predict"}
"""The model method whose output each kind of explained output is (:class:`explainers.model_adapter.ModelAdapter`)."""
_BOOSTERS = ("GradientBoostingClassifier", "GradientBoostingRegressor", "HistGradientBoostingClassifier",
             "HistGradientBoostingRegressor")


class FlatTrees:
    """A boosted model's trees as one set of node arrays (a compiled walk's input), read from :func:`forest_of`.

    Attributes
    ----------
    feature, threshold, left, right, missing_left : ndarray of shape (n_nodes,)
        Every tree's nodes one after the other (``left``/``right`` as node numbers in these arrays; -1 at a leaf).
    value : ndarray of shape (n_nodes, n_outputs)
        What a leaf adds to each output.
    roots : ndarray of int64, shape (n_trees,)
        Each tree's first node, in the model's order.
    max_nodes : int
        The largest tree's node count.
    base : ndarray of shape (n_outputs,)
        The model's starting raw value.
    float32 : bool
        Whether the rows are compared as float32 (scikit-learn's classic trees).

    Raises
    ------
    TypeError
        From :meth:`of`, for a model that is not a plain scikit-learn gradient boosting model, that encodes categorical
        columns itself or has categorical splits.
    """

    def __init__(self, forest) -> None:
        trees = forest.trees
        sizes = np.array([len(t.feature) for t in trees])
        offset = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
        self.roots, self.max_nodes = offset, int(sizes.max())
        self.feature = np.concatenate([t.feature for t in trees]).astype(np.int64)
        self.threshold = np.concatenate([t.threshold for t in trees]).astype(np.float64)
        self.left = np.concatenate([np.where(t.feature >= 0, t.left + o, -1) for t, o in zip(trees, offset)])
        self.right = np.concatenate([np.where(t.feature >= 0, t.right + o, -1) for t, o in zip(trees, offset)])
        self.missing_left = np.concatenate([t.missing_left for t in trees]).astype(np.bool_)
        self.value = np.ascontiguousarray(np.concatenate([t.value for t in trees]), dtype=np.float64)
        self.base = np.asarray(forest.base, dtype=np.float64)
        self.float32 = bool(trees[0].float32)

    @classmethod
    def of(cls, est) -> FlatTrees:
        name = type(est).__name__
        if name not in _BOOSTERS or not type(est).__module__.startswith("sklearn."):
            raise TypeError(f"{name} is not a scikit-learn gradient boosting model")
        if getattr(est, "_preprocessor", None) is not None:  # HistGradientBoosting's own column reordering
            raise TypeError(f"{name} encodes categorical columns itself")
        forest = forest_of(est)
        if any(t.is_cat is not None for t in forest.trees):
            raise TypeError(f"{name} has categorical splits")
        return cls(forest)


_READ: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
"""Per model: its trees' container, their number, and what :func:`flat_trees` read from them."""


def flat_trees(est) -> FlatTrees | None:
    """:meth:`FlatTrees.of` ``est``, read once per fitted state: read again when its trees are another container or
    another number of them (a refit, a warm start), so a model changed in place is never walked as it was (the
    mutation guard's fingerprint calls the model through these walks too); None for a model not read."""
    trees = getattr(est, "_predictors", None) if type(est).__name__.startswith("Hist") else \
        getattr(est, "estimators_", None)
    seen = _READ.get(est)
    if seen is not None and seen[0] is trees and seen[1] == len(trees):
        return seen[2]
    try:
        flat = FlatTrees.of(est)
    except (TypeError, AttributeError, ValueError):
        flat = None
    _READ[est] = (trees, 0 if trees is None else len(trees), flat)
    return flat


class HybridOutputs:
    """``E_b[f(x_S, b_rest)]`` of one explained output of a boosted tree model, for many kept sets ``S``.

    Parameters
    ----------
    view : TreeView
        The booster, the transform from encoded rows to its input (a one-hot Pipeline's through the adapter's
        shortcut, :mod:`explainers._one_hot_input`) and each input column's raw column
        (:meth:`explainers.model_adapter.ModelAdapter.tree_view`).
    kind : {"probability", "margin", "raw"}
        What the explained output is (:attr:`explainers.model_adapter.ModelAdapter.kind`).
    index : int
        Its column among the model's outputs.

    Raises
    ------
    TypeError
        If the booster is not one this class reads (use :meth:`of`, which returns None instead).
    """

    def __init__(self, view, kind: str, index: int) -> None:
        est = view.model
        name = type(est).__name__
        if name not in _BOOSTERS or not type(est).__module__.startswith("sklearn."):
            raise TypeError(f"{name} is not a scikit-learn gradient boosting model")
        classifier = hasattr(est, "classes_")
        if kind != ("probability" if classifier else "raw") and not (classifier and kind == "margin"):
            raise TypeError(f"{name} explained as {kind!r} is not read here")
        if flat_trees(est) is None:
            FlatTrees.of(est)  # raises, naming what is not read
        self._est, self._view, self._kind, self._index = est, view, kind, int(index)
        self._groups = np.asarray(view.groups, dtype=np.int64)

    @classmethod
    def of(cls, adapter, index: int) -> HybridOutputs | None:
        """The reader of ``adapter``'s output ``index``, or None when its model is not one this class reads."""
        try:
            view = adapter.tree_view()
            return None if view is None else cls(view, adapter.kind, index)
        except (TypeError, AttributeError, ValueError):
            return None

    def _input(self, rows: np.ndarray, float32: bool) -> np.ndarray:
        T = self._view.transform(rows)
        T = T.toarray() if hasattr(T, "toarray") else np.asarray(T, dtype=np.float64)
        return np.ascontiguousarray(T.astype(np.float32) if float32 else T, dtype=np.float64)

    def __call__(self, x, keep_sets, background) -> np.ndarray | None:
        """Expected explained output for each kept set.

        Parameters
        ----------
        x : ndarray of shape (n_features,)
            The row, encoded (the table's columns).
        keep_sets : sequence of ndarray of int
            Columns of ``x`` each set keeps (each may be empty).
        background : ndarray of shape (n_background, n_features)

        Returns
        -------
        ndarray of shape (len(keep_sets),) or None
            ``mean over b of f(x_S, b_rest)``, in the explained output's units; None for rows the trees' shortcut
            does not vouch for (an infinite value; a NaN for a classic tree), which the caller computes itself.
        """
        from ._hybrid_kernel import hybrid_margins

        f = flat_trees(self._est)
        if f is None:  # refitted into something not read
            return None
        x = np.asarray(x, dtype=np.float64)
        bg = np.asarray(background, dtype=np.float64)
        both = np.vstack([x[None, :], bg])
        if np.isinf(both).any() or (f.float32 and np.isnan(both).any()):
            return None
        T = self._input(both, f.float32)
        xt, B = T[0], np.ascontiguousarray(T[1:])
        keep = np.zeros((len(keep_sets), len(x)), dtype=np.bool_)
        for s, cols in enumerate(keep_sets):
            keep[s, np.asarray(cols, dtype=np.int64)] = True
        member = np.ascontiguousarray(keep[:, self._groups])
        out = np.empty((len(B), len(keep_sets), len(f.base)))  # background-major: each walk writes nearby
        out[...] = f.base
        hybrid_margins(f.feature, f.threshold, f.left, f.right, f.missing_left, f.value, f.roots, f.max_nodes, xt, B,
                       member, out)
        raw = np.ascontiguousarray(out.transpose(1, 0, 2)).reshape(-1, len(f.base))  # set-major, as the rows
        outputs = margin_outputs(self._est, raw, _METHOD[self._kind])  # the model's own method's numbers
        values = np.asarray(outputs, dtype=float).reshape(raw.shape[0], -1)[:, self._index]  # the adapter's column
        return values.reshape(len(keep_sets), len(B)).mean(axis=1)
