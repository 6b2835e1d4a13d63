"""A scikit-learn forest's outputs without joblib: the same sums, in the same order, at a fifth of the cost.

``RandomForestClassifier.predict_proba`` (and the regressors' ``predict``) hands each tree to joblib through
scikit-learn's ``delayed`` wrapper, which copies the configuration and warning filters for every tree: on a
200-tree forest that is about 20 ms of every call whatever its rows (breast cancer RF(200): 24 ms for one
row, 5 ms tree by tree). Candor calls the model several times a row (LIME's rounds, its held-out
neighbourhood, SHAP's prediction, the mutation guard), so a row the store lacks paid mostly for that wrapper.

:func:`forest_outputs` adds the trees' outputs in estimator order into a float64 accumulator and divides by
their number, exactly as ``sklearn.ensemble._forest._accumulate_prediction`` does with the sequential backend
(scikit-learn 1.9), so the result is equal bit for bit (``tests/explainers/test_forest_calls.py`` checks it per
forest type, task and pipeline). Anything else, a subclass or a multi-output forest included, gets None and is
called as the model's own method.
"""
from __future__ import annotations

import numpy as np

from ._pipeline_parts import pipeline_parts

__all__ = ["forest_outputs", "model_call"]


def _plain_forest(est, method: str):
    from sklearn.ensemble import (ExtraTreesClassifier, ExtraTreesRegressor, RandomForestClassifier,
                                  RandomForestRegressor)

    if not hasattr(est, "estimators_"):  # not fitted: its own method says so
        return None
    if method == "predict_proba" and type(est) in (RandomForestClassifier, ExtraTreesClassifier):
        return est if np.ndim(est.n_classes_) == 0 else None  # one output: n_classes_ is an int
    if method == "predict" and type(est) in (RandomForestRegressor, ExtraTreesRegressor):
        return est if est.n_outputs_ == 1 else None
    return None


def forest_outputs(model, X, method: str):
    """``getattr(model, method)(X)`` for a plain scikit-learn forest (or a Pipeline ending in one), tree by tree.

    Parameters
    ----------
    model : estimator
        The user's model.
    X : DataFrame or ndarray of shape (n_rows, n_features)
        Its input rows, as the model takes them.
    method : {"predict_proba", "predict"}
        ``predict_proba`` of a single-output Random Forest or Extra Trees classifier, ``predict`` of a
        single-output regressor.

    Returns
    -------
    ndarray or None
        Float64, shape (n_rows, n_classes) or (n_rows,), equal to the model's own method; None if ``model`` is not
        such a forest (or a Pipeline whose last step is one, with metadata routing off), and the caller calls it.
    """
    parts = pipeline_parts(model)
    if parts is None:
        return None
    steps, model = parts
    forest = _plain_forest(model, method)
    if forest is None:
        return None
    if steps is not None:
        X = steps.transform(X)
    X = forest._validate_X_predict(X)  # float32, C order (CSR if sparse), the feature checks of predict_proba
    n = X.shape[0]
    out = np.zeros((n, forest.n_classes_) if method == "predict_proba" else n, dtype=np.float64)
    for tree in forest.estimators_:  # each tree's own method of the same name, as the forest's calls it
        out += getattr(tree, method)(X, check_input=False)
    out /= len(forest.estimators_)
    return out


def model_call(model, X, method: str):
    """``getattr(model, method)(X)``, through :func:`forest_outputs` when the model is a plain forest,
    :func:`explainers._boosting_calls.boosting_outputs` when it is a plain gradient boosting model,
    :func:`explainers._hist_calls.hist_outputs` when it is a plain HistGradientBoosting model (numba loaded) and
    :func:`explainers._kernel_calls.svc_outputs` when it is a binary RBF SVC (each ``None`` elsewhere)."""
    from ._boosting_calls import boosting_outputs
    from ._hist_calls import hist_outputs
    from ._kernel_calls import svc_outputs

    out = forest_outputs(model, X, method)
    if out is None:
        out = boosting_outputs(model, X, method)
    if out is None:
        out = hist_outputs(model, X, method)
    if out is None:
        out = svc_outputs(model, X, method)
    return getattr(model, method)(X) if out is None else out
