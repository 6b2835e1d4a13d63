"""A binary RBF support vector classifier's ``decision_function`` in matrix form, checked on every call.

libsvm, as scikit-learn 1.9 calls it (``sklearn.svm._libsvm.decision_function``, dense), evaluates the kernel of
each row with each support vector one pair at a time: it allocates the difference vector, takes its dot product,
frees it, then sums ``dual_coef · K`` over the support vectors. Permutation SHAP sends an SVC thousands of rows
per explained row, and on Adult's SVC Pipeline (about 8,300 model rows a row) 94 % of a row's time was that loop
(docs/methods.md, "SHAP"; issue 23).

:func:`svc_outputs` computes the same function for a plain ``SVC`` or ``NuSVC`` (binary, ``kernel="rbf"``, fitted
on dense input), or a Pipeline ending in one (its earlier steps applied as the Pipeline applies them), as
matrices: ``‖x − v‖² = ‖x‖² + ‖v‖² − 2 x·v`` for every row and support vector at once (BLAS), then
``f(x) = −(Σ_i _dual_coef_[i] exp(−γ ‖x − v_i‖²) + _intercept_)``, the sign scikit-learn gives a binary SVC
(:meth:`sklearn.svm.SVC.decision_function`), from the attributes libsvm itself reads. The rows go in blocks of
at most :data:`BLOCK_CELLS` (row, support vector) pairs. The result is not equal bit for bit: the squared
distance is summed in another order, so outputs differ from libsvm's by rounding, about 1e-15 of their size.
So every call also computes its first :data:`CHECK_ROWS` rows with the model's own ``decision_function``; if any
differs by more than :data:`TOLERANCE` × (1 + |its value|), the whole call is the model's own (and so is a model
whose attributes were changed since it was fitted). Calls of fewer than :data:`MIN_ROWS` rows are always the
model's own (the mutation guard's fingerprint is one).
"""
from __future__ import annotations

import numpy as np

from ._lime_fits import one_blas_thread
from ._pipeline_parts import pipeline_parts

__all__ = ["svc_outputs", "BLOCK_CELLS", "CHECK_ROWS", "TOLERANCE", "MIN_ROWS"]

MIN_ROWS = 64
"""Fewest rows a call must have to be computed here (fewer: the model's own ``decision_function``)."""

BLOCK_CELLS = 2_000_000
"""Most (row, support vector) kernel values held at once (16 MB of float64)."""
CHECK_ROWS = 8
"""Rows of every call also computed by the model's own ``decision_function``."""
TOLERANCE = 1e-9
"""Largest difference allowed on the checked rows, relative to 1 + |the model's own value|."""


def _rbf_svc(est):
    """``est`` if it is a fitted, dense, binary RBF ``SVC`` or ``NuSVC`` (their own classes, no subclass), else None."""
    from sklearn.svm import SVC, NuSVC

    if type(est) not in (SVC, NuSVC) or not hasattr(est, "support_vectors_"):
        return None
    if est.kernel != "rbf" or len(est.classes_) != 2 or getattr(est, "_sparse", True):
        return None
    return est


def _kernel_sum(svc, X: np.ndarray) -> np.ndarray:
    """``−(K(X, support vectors) @ _dual_coef_[0] + _intercept_[0])`` in blocks of rows, shape (n_rows,)."""
    sv = np.asarray(svc.support_vectors_, dtype=np.float64)
    coef = np.asarray(svc._dual_coef_, dtype=np.float64)[0]
    sv_sq = np.einsum("ij,ij->i", sv, sv)
    gamma, out = float(svc._gamma), np.empty(len(X))
    step = max(1, BLOCK_CELLS // max(len(sv), 1))
    with one_blas_thread():  # the same CPU time, without a second BLAS thread spinning beside request threads
        for a in range(0, len(X), step):
            _block(X[a:a + step], sv, sv_sq, coef, gamma, out[a:a + step])
    out += float(np.asarray(svc._intercept_, dtype=np.float64)[0])
    return -out


def _block(xb: np.ndarray, sv: np.ndarray, sv_sq: np.ndarray, coef: np.ndarray, gamma: float, out: np.ndarray) -> None:
    """``out = K(xb, sv) @ coef`` for one block of rows."""
    d2 = xb @ sv.T
    d2 *= -2.0
    d2 += np.einsum("ij,ij->i", xb, xb)[:, None]
    d2 += sv_sq[None, :]
    np.maximum(d2, 0.0, out=d2)  # rounding can leave a tiny negative distance of a row to itself
    d2 *= -gamma
    np.exp(d2, out=d2)
    np.matmul(d2, coef, out=out)


def svc_outputs(model, X, method: str):
    """``model.decision_function(X)`` of a binary RBF SVC (or a Pipeline ending in one) as matrices, or None.

    Parameters
    ----------
    model : estimator
        The user's model.
    X : DataFrame or ndarray of shape (n_rows, n_features)
        Its input rows, as the model takes them.
    method : str
        Only ``"decision_function"`` is computed here.

    Returns
    -------
    ndarray of shape (n_rows,) or None
        Float64, the model's ``decision_function`` to rounding (its first :data:`CHECK_ROWS` rows compared with the
        model's own on every call; the model's own for the whole call if they differ); None if ``model`` is not
        such an SVC, the call has fewer than :data:`MIN_ROWS` rows, or metadata routing is on, and the caller calls
        the model itself.
    """
    if method != "decision_function" or len(X) < MIN_ROWS or (parts := pipeline_parts(model)) is None:
        return None
    steps, est = parts
    svc = _rbf_svc(est)
    if svc is None:
        return None
    if steps is not None:
        X = steps.transform(X)
    Xv = svc._validate_for_predict(X)  # float64, C order, the feature checks of decision_function (as it calls it)
    own = svc.decision_function(X[:CHECK_ROWS] if not hasattr(X, "iloc") else X.iloc[:CHECK_ROWS])
    ours = _kernel_sum(svc, np.asarray(Xv))
    if not np.all(np.abs(ours[:CHECK_ROWS] - own) <= TOLERANCE * (1.0 + np.abs(own))):
        return svc.decision_function(X)
    return ours
