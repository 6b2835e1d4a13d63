"""How well the model does on its held-out rows: curves, scores with intervals, confusion counts."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._json import _jsonable


def _floats(obj, *names: str) -> None:
    for name in names:
        value = getattr(obj, name)
        if value is not None:
            object.__setattr__(obj, name, np.asarray(value, dtype=float))


@dataclass(frozen=True)
class ScoreInterval:
    """A score and its percentile bootstrap interval (Efron & Tibshirani 1993).

    Parameters
    ----------
    value : float
        The score on the rows as they are.
    low, high : float
        The ``(1 - level) / 2`` and ``(1 + level) / 2`` quantiles of the score over the resamples.
    level : float
        Nominal coverage, e.g. 0.95.
    n_boot, seed : int
        Resamples and the seed of ``numpy.random.default_rng`` that drew them.
    """

    value: float
    low: float
    high: float
    level: float
    n_boot: int
    seed: int

    def to_dict(self) -> dict:
        return _jsonable(self)

    def text(self, name: str) -> str:
        """``"ROC AUC 0.991 (95% interval 0.972–1.000)"``: the words every view prints it in (without an interval
        when there were no resamples)."""
        if self.n_boot and np.isfinite(self.low):
            return f"{name} {self.value:.3f} ({self.level:.0%} interval {self.low:.3f}–{self.high:.3f})"
        return f"{name} {self.value:.3f}"


@dataclass(frozen=True)
class ConfusionCounts:
    """A binary confusion matrix at one threshold, with its rates.

    Parameters
    ----------
    threshold : float
        Rows whose probability (a margin's logistic, ``1 / (1 + exp(-margin))``) is at least this are predicted
        positive.
    tp, fp, tn, fn : int
        True positives, false positives, true negatives, false negatives.
    """

    threshold: float
    tp: int
    fp: int
    tn: int
    fn: int

    @property
    def n(self) -> int:
        return self.tp + self.fp + self.tn + self.fn

    def _ratio(self, a: int, b: int) -> float:
        return a / b if b else float("nan")

    @property
    def tpr(self) -> float:
        """True positive rate (recall, sensitivity): tp / (tp + fn)."""
        return self._ratio(self.tp, self.tp + self.fn)

    @property
    def fpr(self) -> float:
        """False positive rate: fp / (fp + tn)."""
        return self._ratio(self.fp, self.fp + self.tn)

    @property
    def tnr(self) -> float:
        """True negative rate (specificity): tn / (tn + fp)."""
        return self._ratio(self.tn, self.tn + self.fp)

    @property
    def precision(self) -> float:
        """tp / (tp + fp); NaN when no row is predicted positive."""
        return self._ratio(self.tp, self.tp + self.fp)

    @property
    def accuracy(self) -> float:
        return self._ratio(self.tp + self.tn, self.n)


@dataclass(frozen=True)
class ClassifierPerformance:
    """ROC, precision-recall and calibration of a binary output on held-out rows.

    Parameters
    ----------
    target : str
        The positive class (the explained class; a multiclass model's against the rest).
    output_kind : {"probability", "margin"}
        What ``scores`` are.
    y : ndarray of shape (n_rows,)
        True labels, 1 for ``target``.
    scores : ndarray of shape (n_rows,)
        The explained output of each row.
    fpr, tpr, roc_thresholds : ndarray of shape (n_points,)
        The ROC curve (Fawcett 2006) from (0, 0) at threshold +inf, one point per distinct score, as scikit-learn's
        ``roc_curve(drop_intermediate=False)``.
    roc_auc : ScoreInterval
        Area under it (the Mann-Whitney statistic) with its stratified bootstrap interval.
    precision, recall, pr_thresholds : ndarray
        The precision-recall curve (Davis & Goadrich 2006) as scikit-learn's ``precision_recall_curve``:
        thresholds increasing, ``precision``/``recall`` one longer, ending at (recall 0, precision 1).
    average_precision : ScoreInterval
        Σ (Rₖ − Rₖ₋₁) Pₖ over the thresholds (scikit-learn's ``average_precision_score``), with its interval.
    prevalence : float
        Share of positive rows (a chance-level classifier's precision).
    calibration_true, calibration_predicted, calibration_counts : ndarray or None
        Per non-empty bin of equal width on [0, 1]: observed share of positives, mean predicted probability, rows
        (scikit-learn's ``calibration_curve(strategy="uniform")``). None for a margin.
    n_bins : int
        Bins of the calibration curve.
    brier : ScoreInterval or None
        Mean of (probability − label)² with its interval; None for a margin.
    source : str
        One line saying how it was computed.
    """

    target: str
    output_kind: str
    y: np.ndarray
    scores: np.ndarray
    fpr: np.ndarray
    tpr: np.ndarray
    roc_thresholds: np.ndarray
    roc_auc: ScoreInterval
    precision: np.ndarray
    recall: np.ndarray
    pr_thresholds: np.ndarray
    average_precision: ScoreInterval
    prevalence: float
    calibration_true: np.ndarray | None
    calibration_predicted: np.ndarray | None
    calibration_counts: np.ndarray | None
    n_bins: int
    brier: ScoreInterval | None
    source: str
    method: str = "performance"

    def __post_init__(self) -> None:
        object.__setattr__(self, "y", np.asarray(self.y, dtype=int))
        _floats(self, "scores", "fpr", "tpr", "roc_thresholds", "precision", "recall", "pr_thresholds",
                "calibration_true", "calibration_predicted", "calibration_counts")
        if self.y.shape != self.scores.shape:
            raise ValueError(f"y has shape {self.y.shape}, scores {self.scores.shape}; expected the same")
        if not (self.fpr.shape == self.tpr.shape == self.roc_thresholds.shape):
            raise ValueError("fpr, tpr and roc_thresholds must have the same shape")

    @property
    def n_rows(self) -> int:
        return len(self.y)

    def to_dict(self) -> dict:
        return _jsonable(self)


@dataclass(frozen=True)
class RegressorPerformance:
    """Predicted against actual values of a regressor on held-out rows.

    Parameters
    ----------
    target : str
    actual, predicted : ndarray of shape (n_rows,)
    r2, rmse : ScoreInterval
        Coefficient of determination and root mean squared error, each with its bootstrap interval.
    source : str
    """

    target: str
    actual: np.ndarray
    predicted: np.ndarray
    r2: ScoreInterval
    rmse: ScoreInterval
    source: str
    method: str = "performance"

    def __post_init__(self) -> None:
        _floats(self, "actual", "predicted")
        if self.actual.shape != self.predicted.shape:
            raise ValueError(f"actual has shape {self.actual.shape}, predicted {self.predicted.shape}")

    @property
    def residuals(self) -> np.ndarray:
        """actual − predicted, per row."""
        return self.actual - self.predicted

    @property
    def n_rows(self) -> int:
        return len(self.actual)

    def to_dict(self) -> dict:
        return _jsonable(self)


@dataclass(frozen=True)
class MulticlassConfusion:
    """Every class against every other: a multiclass model's confusion matrix and overall accuracy.

    Parameters
    ----------
    class_names : tuple of str, length k
    matrix : ndarray of int, shape (k, k)
        ``matrix[i, j]``: rows of true class i the model predicts as class j.
    accuracy : float
        Share of rows on the diagonal.
    accuracy_low, accuracy_high : float
        Its Wilson score interval (Wilson 1927) at ``level``.
    level : float
    source : str
    """

    class_names: tuple[str, ...]
    matrix: np.ndarray
    accuracy: float
    accuracy_low: float
    accuracy_high: float
    level: float
    source: str

    def __post_init__(self) -> None:
        k = len(self.class_names)
        m = np.asarray(self.matrix, dtype=int)
        if m.shape != (k, k):
            raise ValueError(f"matrix has shape {m.shape}, expected ({k}, {k}) for {k} classes")
        object.__setattr__(self, "class_names", tuple(map(str, self.class_names)))
        object.__setattr__(self, "matrix", m)

    @property
    def n_rows(self) -> int:
        return int(self.matrix.sum())

    def to_dict(self) -> dict:
        return _jsonable(self)
