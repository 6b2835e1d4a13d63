"""LIME attributions for tabular classifiers (Ribeiro, Singh, Guestrin 2016, arXiv 1602.04938).

Wraps ``lime.lime_tabular.LimeTabularExplainer`` with the reference settings of
``shared/METHODS.md`` §1.2 (quartile discretisation, kernel width 0.75·√d,
ridge surrogate) and adds the product's held-out local R² on a fresh
neighborhood drawn with ``seed + 1``.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
from lime.lime_tabular import LimeTabularExplainer

from .types import Explanation, Fidelity

__all__ = ["LimeExplainer", "weighted_r2"]


def weighted_r2(y: np.ndarray, y_hat: np.ndarray, weights: np.ndarray) -> float:
    """Weighted coefficient of determination (METHODS §1.2).

    ``1 - Σ w (y - ŷ)² / Σ w (y - ȳ_w)²`` with ``ȳ_w`` the weighted mean.

    Parameters
    ----------
    y, y_hat, weights : ndarray of shape (n_samples,)

    Returns
    -------
    r2 : float, at most 1; ``nan`` if ``y`` is constant under the weights.
    """
    y, y_hat, w = (np.asarray(a, dtype=float) for a in (y, y_hat, weights))
    mean = np.sum(w * y) / np.sum(w)
    denom = np.sum(w * (y - mean) ** 2)
    if denom == 0:
        return float("nan")
    return float(1 - np.sum(w * (y - y_hat) ** 2) / denom)


class LimeExplainer:
    """LIME tabular attributions of one class's probability.

    Parameters
    ----------
    predict_proba : callable
        Maps an ndarray of shape (n, n_features) to probabilities (n, n_classes).
    training_data : DataFrame of shape (n_rows, n_features)
        Background for LIME's sampling statistics and quartile bins.
    class_names : sequence of str
    target_index : int, default=1
    num_samples : int, default=1000
        Neighborhood size ("interactive" profile; the reference profile uses 5000).
    kernel_width : float or None, default=None
        ``None`` means LIME's default ``0.75 * sqrt(n_features)``.
    seed : int, default=0

    Notes
    -----
    ``values`` are the ridge coefficients on LIME's interpretable (binary,
    standardised) features, one per feature: LIME's "weights". The fidelity
    is LIME's own ``score``, the weighted *in-sample* R² of the surrogate;
    ``params["heldout_r2"]`` is the same R² on a fresh neighborhood.
    """

    def __init__(self, predict_proba, *, training_data: pd.DataFrame, class_names, target_index: int = 1,
                 num_samples: int = 1000, kernel_width: float | None = None, seed: int = 0) -> None:
        self.predict_proba = predict_proba
        self.feature_names = tuple(str(c) for c in training_data.columns)
        self.class_names = tuple(class_names)
        self.target_index, self.num_samples, self.seed = target_index, num_samples, seed
        self.kernel_width = kernel_width if kernel_width is not None else 0.75 * np.sqrt(len(self.feature_names))
        self._train = training_data.to_numpy(dtype=float)
        self.source = (f"LIME 0.2.0.1 LimeTabularExplainer, quartile bins, kernel width "
                       f"{self.kernel_width:.2f}, {num_samples} samples (seed {seed})")

    def _explainer(self, seed: int) -> LimeTabularExplainer:
        return LimeTabularExplainer(
            self._train, feature_names=list(self.feature_names), class_names=list(self.class_names),
            discretize_continuous=True, discretizer="quartile", kernel_width=self.kernel_width,
            random_state=seed, mode="classification",
        )

    def explain(self, x) -> Explanation:
        """Explain one row.

        Parameters
        ----------
        x : array-like of shape (n_features,) or one-row DataFrame

        Returns
        -------
        Explanation
            ``method="lime"``, ``values`` of shape (n_features,), ``fidelity`` the
            in-sample weighted R², ``params`` with ``heldout_r2`` and ``local_pred``.

        Raises
        ------
        ValueError
            If ``x`` has the wrong number of features or contains NaN.
        """
        row = np.asarray(x.to_numpy() if isinstance(x, pd.DataFrame) else x, dtype=float).ravel()
        d = len(self.feature_names)
        if row.size != d:
            raise ValueError(f"row has {row.size} values, expected {d} features")
        if np.isnan(row).any():
            raise ValueError("LIME tabular cannot explain a row with missing values")
        explainer = self._explainer(self.seed)
        exp = explainer.explain_instance(row, self.predict_proba, labels=(self.target_index,),
                                         num_features=d, num_samples=self.num_samples)
        values = np.zeros(d)
        for j, w in exp.local_exp[self.target_index]:
            values[j] = w
        intercept = float(exp.intercept[self.target_index])
        heldout = self._heldout_r2(row, values, intercept)
        prediction = float(self.predict_proba(row[None, :])[0, self.target_index])
        return Explanation(
            method="lime", feature_names=self.feature_names, values=values, base_value=intercept,
            prediction=prediction, feature_values=row, output_space="probability",
            target=self.class_names[self.target_index], source=self.source,
            fidelity=Fidelity("r2", float(exp.score), self.num_samples, "neighborhood"),
            params={"num_samples": self.num_samples, "seed": self.seed, "kernel_width": self.kernel_width,
                    "heldout_r2": heldout, "local_pred": float(np.ravel(exp.local_pred)[0])},
        )

    def _heldout_r2(self, row: np.ndarray, coef: np.ndarray, intercept: float) -> float:
        """Weighted R² of the fitted surrogate on a fresh neighborhood (seed + 1)."""
        explainer = self._explainer(self.seed + 1)
        data, inverse = explainer._LimeTabularExplainer__data_inverse(row, self.num_samples)
        scaled = (data - explainer.scaler.mean_) / explainer.scaler.scale_
        distances = np.sqrt(((scaled - scaled[0]) ** 2).sum(axis=1))
        weights = explainer.base.kernel_fn(distances)
        y = self.predict_proba(inverse)[:, self.target_index]
        return weighted_r2(y, intercept + scaled @ coef, weights)
