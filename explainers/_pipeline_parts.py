"""A plain scikit-learn Pipeline read as its preprocessing and its final estimator, for the model calls that compute
the final estimator's outputs themselves (a forest tree by tree, an RBF SVC as matrices)."""
from __future__ import annotations


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
