"""The explained output as a fitted scikit-learn regressor, for scikit-learn's inspection tools (partial dependence).

Its own module so that :mod:`explainers.dependence` imports scikit-learn only when a curve is computed, not when a
server imports it for its constants (issue 23: a server's first page before scikit-learn has loaded).
"""
from __future__ import annotations

from typing import Callable

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin


class OutputRegressor(RegressorMixin, BaseEstimator):
    """The explained output as a fitted scikit-learn regressor (what ``partial_dependence`` calls)."""

    def __init__(self, output: Callable | None = None):
        self.output = output

    def fit(self, X=None, y=None):  # never fitted by Candor: the model is the user's
        return self

    def __sklearn_is_fitted__(self) -> bool:
        return True

    def predict(self, X) -> np.ndarray:
        return np.asarray(self.output(X), dtype=float).reshape(-1)
