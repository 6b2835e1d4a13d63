"""A scikit-learn gradient boosting model's outputs without its per-call validation: the same trees, the same sums.

``GradientBoostingClassifier.predict_proba`` and ``GradientBoostingRegressor.predict`` validate their input
(``validate_data``: the DataFrame's column names and dtypes, narwhals' type checks, a float32 C-ordered copy, a
finiteness check) before ``_raw_predict`` walks the trees. On the bundled sample (150 trees, 30 columns) that is
0.25 of a 0.5 ms call of one row and 0.7 of a 1.2 ms call of 31 rows, and the Persuasive page's what-if edit makes 17
such calls (issue 25).

:func:`boosting_outputs` does what those methods do after validation, in scikit-learn 1.9's order: the rows as a
C-ordered float32 array, ``_raw_predict`` (its init estimator's row computed once per model when it is every row's,
then ``predict_stages``), raveled when the model has one output column, then
``_loss.predict_proba`` for probabilities; its result equals the model's own method bit for bit
(``tests/explainers/test_boosting_calls.py``, per task, output and input kind). Anything else (a subclass, a model
not fitted, sparse input, a DataFrame whose column names are not ``feature_names_in_``, a width other than
``n_features_in_``, a missing or infinite value) is given to the booster's own method (after a Pipeline's steps,
which are not run twice), or gets None and the caller calls the model's own method, which raises its own error
where there is one.
"""
from __future__ import annotations

import weakref

import numpy as np

from ._pipeline_parts import numeric_rows, pipeline_parts

__all__ = ["boosting_outputs", "margin_outputs"]

_METHODS = {"GradientBoostingClassifier": ("predict_proba", "decision_function"),
            "GradientBoostingRegressor": ("predict",)}


def _plain_booster(est, method: str):
    from sklearn.ensemble import GradientBoostingClassifier, GradientBoostingRegressor

    if type(est) not in (GradientBoostingClassifier, GradientBoostingRegressor) or not hasattr(est, "estimators_"):
        return None
    return est if method in _METHODS[type(est).__name__] else None


_INIT_ROWS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
"""Per booster: its init estimator, and that estimator's raw prediction of one row when it is every row's (see
:func:`_init_row`; computed again when a refit made another init estimator)."""


def _init_row(booster) -> np.ndarray | None:
    """The raw prediction ``_raw_predict_init`` gives every row, when it is the same for all (``init="zero"``, or the
    default ``DummyClassifier``/``DummyRegressor`` with a constant strategy), computed once by scikit-learn itself on
    one row; else None. It validates the rows again (the first tree's ``_validate_X_predict``) and calls the dummy's
    own ``predict_proba``, with its own validation: 0.3-0.5 ms of a 0.5 ms call of one row."""
    from sklearn.dummy import DummyClassifier, DummyRegressor

    init = booster.init_
    seen = _INIT_ROWS.get(booster)
    if seen is not None and seen[0] is init:
        return seen[1]
    constant = (isinstance(init, str) and init == "zero") or type(init) is DummyRegressor or (
        type(init) is DummyClassifier and init.strategy in ("prior", "most_frequent", "constant"))
    row = booster._raw_predict_init(np.zeros((1, booster.n_features_in_), np.float32))[0].copy() if constant else None
    _INIT_ROWS[booster] = (init, row)
    return row


def _raw(booster, A: np.ndarray) -> np.ndarray:
    """``booster._raw_predict(A)`` for validated rows ``A``: the init row repeated, then the stages' sums, as
    scikit-learn's ``predict_stages`` makes them."""
    from sklearn.ensemble._gradient_boosting import predict_stages

    row = _init_row(booster)
    if row is None:
        return booster._raw_predict(A)
    raw = np.tile(row, (A.shape[0], 1))
    predict_stages(booster.estimators_, A, booster.learning_rate, raw)
    return raw


def margin_outputs(est, raw: np.ndarray, method: str) -> np.ndarray:
    """A scikit-learn booster's ``method`` output from its raw margins, as its own method makes it after
    ``_raw_predict`` (scikit-learn 1.9): the one reading of a margin for the calls here, the HistGradientBoosting walk
    (:mod:`explainers._hist_calls`) and the trees' expectations (:class:`explainers.tree_shap.HybridOutputs`).

    Parameters
    ----------
    est : GradientBoosting* or HistGradientBoosting* (scikit-learn's own)
    raw : ndarray of shape (n_rows, n_trees_per_iteration)
        Its raw predictions (the log-odds, the classes' scores before the softmax, a regressor's raw value).
    method : {"predict_proba", "decision_function", "predict"}

    Returns
    -------
    ndarray
        ``predict_proba``: the loss's probabilities, shape (n_rows, n_classes); else raveled when one column, and for
        HistGradientBoosting's ``predict`` through its loss's inverse link (a Poisson regressor's exp).
    """
    if method == "predict_proba":
        return est._loss.predict_proba(raw.ravel() if raw.shape[1] == 1 else raw)
    out = raw.ravel() if raw.shape[1] == 1 else raw
    if method == "predict" and type(est).__name__.startswith("HistGradientBoosting"):
        return est._loss.link.inverse(out)
    return out


def _rows(est, X) -> np.ndarray | None:
    """``X`` as the C-ordered float32 array validation would give ``est``, or None where validation might differ."""
    X = numeric_rows(est, X)
    if X is None:
        return None
    A = np.ascontiguousarray(X, dtype=np.float32)
    return A if np.isfinite(A).all() else None


def boosting_outputs(model, X, method: str):
    """``getattr(model, method)(X)`` for a plain scikit-learn gradient boosting model (or a Pipeline ending in one).

    Parameters
    ----------
    model : estimator
        The user's model.
    X : DataFrame or ndarray of shape (n_rows, n_features)
        Its input rows, as the model takes them.
    method : {"predict_proba", "decision_function", "predict"}
        ``predict_proba`` or ``decision_function`` of a ``GradientBoostingClassifier``, ``predict`` of a
        ``GradientBoostingRegressor``.

    Returns
    -------
    ndarray or None
        Float64, the shape of the model's own method, equal to it; None where the model or the rows are not such
        (see the module docstring) and the caller calls the method itself.
    """
    parts = pipeline_parts(model)
    if parts is None:
        return None
    steps, est = parts
    booster = _plain_booster(est, method)
    if booster is None:
        return None
    if steps is not None:
        X = steps.transform(X)
    A = _rows(booster, X)
    if A is None:  # the booster's own method (on the transformed rows: a Pipeline's call, not transformed twice)
        return getattr(booster, method)(X) if steps is not None else None
    return margin_outputs(booster, _raw(booster, A), method)
