"""A plain scikit-learn Pipeline read as its preprocessing and its final estimator, for the model calls that compute
the final estimator's outputs themselves (a forest tree by tree, an RBF SVC as matrices), and the rows such a call may
hand its estimator directly (:func:`numeric_rows`)."""
from __future__ import annotations

import numpy as np


def pipeline_parts(model):
    """``(preprocessing, final estimator)`` of a plain scikit-learn ``Pipeline`` (``model[:-1]`` and its last step),
    ``(None, model)`` for any other model, or None while scikit-learn's metadata routing is on (the Pipeline's own
    call may then route what its parts called one by one would not). The one reading of a Pipeline for
    :func:`explainers._forest_calls.forest_outputs`, :func:`explainers._boosting_calls.boosting_outputs` and
    :func:`explainers._kernel_calls.svc_outputs`."""
    from sklearn.pipeline import Pipeline

    if type(model) is not Pipeline:
        return None, model
    import sklearn

    if sklearn.get_config().get("enable_metadata_routing"):
        return None
    return model[:-1], model.steps[-1][1]


def numeric_rows(est, X, *, arrays_when_named: bool = True):
    """``X`` as the 2-D integer or float ndarray a plain estimator's validation reads column for column, or None where
    it might read it otherwise. The one check of :func:`explainers._boosting_calls.boosting_outputs` and
    :func:`explainers._hist_calls.hist_outputs` before they call the trees themselves.

    Parameters
    ----------
    est : fitted scikit-learn estimator
    X : DataFrame or ndarray
        Its input rows.
    arrays_when_named : bool, default=True
        False: an ndarray given to an estimator fitted on named columns gets None (scikit-learn warns there).

    Returns
    -------
    ndarray of shape (n_rows, est.n_features_in_) or None
        None for a DataFrame whose columns are not ``est.feature_names_in_`` in order or not of one integer or float
        dtype, for anything but a 2-D integer or float array, or for another width.
    """
    names = getattr(est, "feature_names_in_", None)
    if hasattr(X, "columns"):
        if names is None or list(map(str, X.columns)) != list(map(str, names)) or len(set(X.dtypes)) != 1 \
                or X.dtypes.iloc[0].kind not in "fiu":
            return None
        X = X.to_numpy()
    elif names is not None and not arrays_when_named:
        return None
    if not isinstance(X, np.ndarray) or X.dtype.kind not in "fiu" or X.ndim != 2 or X.shape[1] != est.n_features_in_:
        return None
    return X
