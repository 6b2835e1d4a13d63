"""A scikit-learn HistGradientBoosting model's outputs in one compiled walk of all its trees, once numba is loaded.

``HistGradientBoostingClassifier.predict_proba`` walks its trees one Python call at a time (``_predict_iterations``:
a Cython call with an OpenMP region per tree): about 12 µs a tree whatever the rows, 1.25 ms of every call of Adult's
100-tree pipeline, of which the Persuasive page's what-if edit makes about a dozen and LIME several. When numba is
already in the process (Candor's compiled Tree SHAP or the Persuasive page's expectations loaded it), the same trees
are walked in one compiled call (:func:`explainers.tree_shap._hybrid_kernel.forest_margins`), each row's leaf values
added in the model's order from its baseline, then put through the model's own link: equal bit for bit
(``tests/explainers/test_hist_calls.py``). numba is never imported for this (about 100 MB of memory).

Anything else gets None and is called as the model's own method: a subclass, a model not fitted, one with categorical
splits or its own categorical encoding, sparse rows, a DataFrame whose column names are not ``feature_names_in_``, a
width other than ``n_features_in_``, an array given to a model fitted on named columns (scikit-learn warns), more
than :data:`COMPILED_MAX_ROWS` rows, or no numba loaded.
"""
from __future__ import annotations

import sys

import numpy as np

from ._boosting_calls import margin_outputs
from ._pipeline_parts import numeric_rows, pipeline_parts
from .tree_shap._hybrid import flat_trees

__all__ = ["hist_outputs"]

_METHODS = {"HistGradientBoostingClassifier": ("predict_proba", "decision_function"),
            "HistGradientBoostingRegressor": ("predict",)}
COMPILED_MAX_ROWS = 512
"""Larger calls go to scikit-learn's own method: its OpenMP threads win there (Adult's 100 trees, two cores: 300 rows
1.6 ms compiled against 2.0, 3,000 rows 16.5 against 12.2; one row 0.02 against 0.92)."""
def _rows(est, X) -> np.ndarray | None:
    """``X`` as the float64 array HistGradientBoosting's validation would give it, or None where it might differ."""
    X = numeric_rows(est, X, arrays_when_named=False)
    return None if X is None else np.ascontiguousarray(X, dtype=np.float64)


def hist_outputs(model, X, method: str):
    """``getattr(model, method)(X)`` for a plain HistGradientBoosting model (or a Pipeline ending in one), when numba
    is loaded.

    Parameters
    ----------
    model : estimator
        The user's model.
    X : DataFrame or ndarray of shape (n_rows, n_features)
        Its input rows, as the model takes them.
    method : {"predict_proba", "decision_function", "predict"}
        ``predict_proba`` or ``decision_function`` of a classifier, ``predict`` of a regressor.

    Returns
    -------
    ndarray or None
        Float64, the shape of the model's own method, equal to it; None where the model or the rows are not such (see
        the module docstring) and the caller calls the method itself.
    """
    if "numba" not in sys.modules:
        return None
    parts = pipeline_parts(model)
    if parts is None:
        return None
    steps, est = parts
    name = type(est).__name__
    if name not in _METHODS or method not in _METHODS[name] or type(est).__module__.split(".")[0] != "sklearn" \
            or not hasattr(est, "_predictors"):
        return None
    flat = flat_trees(est)
    if flat is None:
        return None
    if steps is not None:
        X = steps.transform(X)
    A = _rows(est, X)
    if A is None or A.shape[0] > COMPILED_MAX_ROWS:  # the model's own method (on the transformed rows: a Pipeline's
        # call, not transformed twice); beyond COMPILED_MAX_ROWS its threads are faster
        return getattr(est, method)(X) if steps is not None else None
    from .tree_shap._hybrid_kernel import forest_margins

    raw = np.empty((A.shape[0], len(flat.base)), order="F")  # _raw_predict's own layout
    raw[...] = flat.base
    forest_margins(flat.feature, flat.threshold, flat.left, flat.right, flat.missing_left, flat.value, flat.roots, A,
                   raw)
    return margin_outputs(est, raw, method)
