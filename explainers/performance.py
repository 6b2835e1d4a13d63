"""Model performance on held-out rows: ROC and precision-recall curves, calibration, confusion at a threshold,
a regressor's R² and RMSE, a multiclass model's confusion matrix, with bootstrap intervals.

The curves are computed here with numpy, one point per distinct score (the layout of scikit-learn's
``roc_curve(drop_intermediate=False)`` and ``precision_recall_curve``, which are the tests' oracles), because their
intervals need the same curves on a thousand resamples: a resample is a vector of row counts over the rows sorted
once, so each resample's ROC AUC and average precision are two cumulative sums (no sort, no copy of the rows).

Resampling protocol (:func:`resample_counts`): ``rng = numpy.random.default_rng(seed)``; resamples are drawn in
blocks of :func:`block_size` (``BLOCK_CELLS // n_rows``, at least 1: a block's counts hold about 250,000
numbers, 2 MB, whatever the rows); in each block, a classifier's positive rows are drawn with replacement (``rng.integers``,
shape (block, n_positive)) and then its negative rows (shape (block, n_negative)), so that every resample keeps
the class counts (a stratified bootstrap); a regressor's rows are drawn alike, all together. The interval is the
percentile interval of the resampled scores (Efron & Tibshirani 1993), as :func:`explainers.intervals.bootstrap_mean`.

References
----------
Fawcett, T. (2006). An introduction to ROC analysis. Pattern Recognition Letters 27(8), 861-874.
Davis, J., Goadrich, M. (2006). The relationship between precision-recall and ROC curves. ICML 2006, 233-240.
Niculescu-Mizil, A., Caruana, R. (2005). Predicting good probabilities with supervised learning. ICML 2005.
Efron, B., Tibshirani, R. J. (1993). An Introduction to the Bootstrap. Chapman & Hall.
"""
from __future__ import annotations

from typing import Iterator

import numpy as np

from .intervals import wilson_interval
from .permutation_importance import roc_auc
from .types._performance import (ClassifierPerformance, ConfusionCounts, MulticlassConfusion, RegressorPerformance,
                                 ScoreInterval)

__all__ = ["BLOCK_CELLS", "N_BOOT", "N_BINS", "classifier_performance", "confusion_at", "multiclass_confusion",
           "regressor_performance", "resample_counts", "curve_counts"]

N_BOOT = 1000
"""Bootstrap resamples behind each interval."""
N_BINS = 10
"""Bins of equal width on [0, 1] of the calibration curve."""
BLOCK_CELLS = 250_000
"""Resamples × rows drawn (and scored) at a time: the resampling protocol above, and a bound on memory."""


def block_size(n_rows: int) -> int:
    """Resamples drawn at a time for ``n_rows`` rows: ``BLOCK_CELLS // n_rows``, at least 1."""
    return max(1, BLOCK_CELLS // max(1, int(n_rows)))


def _check_binary(y, scores) -> tuple[np.ndarray, np.ndarray]:
    y, s = np.asarray(y), np.asarray(scores, dtype=float)
    if y.ndim != 1 or y.shape != s.shape:
        raise ValueError(f"y and scores must be 1-D of one length, got shapes {y.shape} and {s.shape}")
    if not np.all(np.isfinite(s)):
        raise ValueError("scores must be finite")
    if set(np.unique(y).tolist()) != {0, 1}:
        raise ValueError(f"y must hold both labels 0 and 1, got {sorted(set(np.unique(y).tolist()))}")
    return y.astype(int), s


def curve_counts(y, scores) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(order, ends, tps, fps)``: rows by decreasing score, the last position of each distinct score in that
    order, and the true and false positives among the rows scored at least that score."""
    order = np.argsort(-np.asarray(scores, dtype=float), kind="mergesort")
    s, yy = np.asarray(scores, dtype=float)[order], np.asarray(y)[order]
    ends = np.r_[np.flatnonzero(np.diff(s)), len(s) - 1]
    tps = np.cumsum(yy)[ends].astype(float)
    return order, ends, tps, (ends + 1) - tps


def _roc(y, s):
    order, ends, tps, fps = curve_counts(y, s)
    fpr, tpr = np.r_[0.0, fps / fps[-1]], np.r_[0.0, tps / tps[-1]]
    return fpr, tpr, np.r_[np.inf, np.asarray(s, dtype=float)[order][ends]]


def _pr(y, s):
    order, ends, tps, fps = curve_counts(y, s)
    precision, recall = tps / (tps + fps), tps / tps[-1]
    return np.r_[precision[::-1], 1.0], np.r_[recall[::-1], 0.0], np.asarray(s, dtype=float)[order][ends][::-1]


def _average_precision(tps: np.ndarray, fps: np.ndarray) -> np.ndarray:
    """Σ (Rₖ − Rₖ₋₁) Pₖ of cumulative counts ``tps``, ``fps`` of shape (..., n_thresholds)."""
    total = tps[..., -1:]
    step = np.diff(np.concatenate([np.zeros_like(total), tps], axis=-1), axis=-1) / total
    with np.errstate(invalid="ignore", divide="ignore"):
        precision = np.where(tps + fps > 0, tps / (tps + fps), 0.0)
    return np.sum(step * precision, axis=-1)


def _auc(tps: np.ndarray, fps: np.ndarray) -> np.ndarray:
    """Area under the ROC curve of cumulative counts (trapezoids, ties split in half), shape (...,)."""
    x = np.concatenate([np.zeros_like(fps[..., :1]), fps], axis=-1) / fps[..., -1:]
    t = np.concatenate([np.zeros_like(tps[..., :1]), tps], axis=-1) / tps[..., -1:]
    return np.sum(np.diff(x, axis=-1) * (t[..., 1:] + t[..., :-1]) / 2, axis=-1)


def resample_counts(groups, n_boot: int, seed: int) -> Iterator[np.ndarray]:
    """Blocks of bootstrap resamples as row counts: arrays of shape (block, n_rows), each row summing to n_rows.

    Parameters
    ----------
    groups : sequence of ndarray of int
        Row positions drawn with replacement separately, in this order (a stratified bootstrap: the positive rows,
        then the negative rows; one group: a plain bootstrap).
    n_boot, seed : int
        Resamples in all; the seed of ``numpy.random.default_rng``.
    """
    rng = np.random.default_rng(seed)
    groups = [np.asarray(g) for g in groups]
    n = int(sum(len(g) for g in groups))
    block = block_size(n)
    for start in range(0, n_boot, block):
        b = min(block, n_boot - start)
        drawn = np.concatenate([g[rng.integers(0, len(g), size=(b, len(g)))] for g in groups], axis=1)
        drawn += np.arange(b)[:, None] * n
        yield np.bincount(drawn.ravel(), minlength=b * n).reshape(b, n).astype(float)


def _cat(parts: list) -> np.ndarray:
    return np.concatenate(parts) if parts else np.empty(0)


def _interval(value: float, samples: np.ndarray, level: float, n_boot: int, seed: int) -> ScoreInterval:
    a = (1 - level) / 2
    lo, hi = np.quantile(samples, [a, 1 - a]) if len(samples) else (float("nan"), float("nan"))
    return ScoreInterval(float(value), float(lo), float(hi), float(level), int(n_boot), int(seed))


def classifier_performance(y, scores, *, output_kind: str = "probability", target: str = "1", n_boot: int = N_BOOT,
                           seed: int = 0, level: float = 0.95, n_bins: int = N_BINS,
                           rows: str = "held-out rows") -> ClassifierPerformance:
    """ROC and precision-recall curves, their areas with stratified bootstrap intervals, and the calibration curve.

    Parameters
    ----------
    y : array-like of shape (n_rows,)
        True labels, 1 for ``target`` and 0 for the rest; both must occur.
    scores : array-like of shape (n_rows,)
        The model's output for ``target``: a probability, or a margin (no calibration curve or Brier score then).
    output_kind : {"probability", "margin"}, default="probability"
    target : str, default="1"
    n_boot : int, default=1000
        Resamples behind each interval (0: no interval, its bounds NaN).
    seed : int, default=0
    level : float, default=0.95
    n_bins : int, default=10
        Calibration bins of equal width on [0, 1] (scikit-learn's ``calibration_curve(strategy="uniform")``).
    rows : str, default="held-out rows"
        What the rows are, for the source line.

    Raises
    ------
    ValueError
        If ``y`` lacks a class, the shapes differ, a score is not finite, or a probability is outside [0, 1].
    """
    y, s = _check_binary(y, scores)
    if output_kind not in ("probability", "margin"):
        raise ValueError(f"output_kind must be 'probability' or 'margin', got {output_kind!r}")
    if output_kind == "probability" and (s.min() < 0 or s.max() > 1):
        raise ValueError(f"probabilities must lie in [0, 1], got {s.min():.3g} to {s.max():.3g}")
    order, ends, _, _ = curve_counts(y, s)
    ys, sq = y[order].astype(float), ((s - y) ** 2)[order]
    rank = np.empty(len(y), dtype=np.int64)
    rank[order] = np.arange(len(y))  # each row's place in the sorted order: the resamples' counts come sorted
    boot_auc, boot_ap, boot_brier = [], [], []
    for w in resample_counts((rank[y == 1], rank[y == 0]), n_boot, seed):
        tps = np.cumsum(w * ys, axis=1)[:, ends]
        fps = np.cumsum(w, axis=1)[:, ends] - tps
        boot_auc.append(_auc(tps, fps))
        boot_ap.append(_average_precision(tps, fps))
        if output_kind == "probability":
            boot_brier.append(w @ sq / len(y))
    fpr, tpr, thresholds = _roc(y, s)
    precision, recall, pr_thresholds = _pr(y, s)
    _, _, tps, fps = curve_counts(y, s)
    calibration, brier = (None, None, None), None
    if output_kind == "probability":
        calibration = _calibration(y, s, n_bins)
        brier = _interval(np.mean((s - y) ** 2), _cat(boot_brier), level, n_boot, seed)
    source = (f"{len(y):,} {rows} ({int(y.sum()):,} {target}); ROC (Fawcett 2006) and precision-recall (Davis & "
              f"Goadrich 2006) curves; {level:.0%} percentile intervals over {n_boot:,} stratified bootstrap "
              f"resamples (seed {seed}; Efron & Tibshirani 1993)")
    if output_kind == "probability":
        source += f"; calibration in {n_bins} bins of equal width (Niculescu-Mizil & Caruana 2005)"
    return ClassifierPerformance(
        target=str(target), output_kind=output_kind, y=y, scores=s, fpr=fpr, tpr=tpr, roc_thresholds=thresholds,
        roc_auc=_interval(roc_auc(y, s), _cat(boot_auc), level, n_boot, seed), precision=precision, recall=recall,
        pr_thresholds=pr_thresholds,
        average_precision=_interval(float(_average_precision(tps, fps)), _cat(boot_ap), level, n_boot, seed),
        prevalence=float(y.mean()), calibration_true=calibration[0], calibration_predicted=calibration[1],
        calibration_counts=calibration[2], n_bins=int(n_bins), brier=brier, source=source)


def _calibration(y: np.ndarray, p: np.ndarray, n_bins: int):
    """scikit-learn's ``calibration_curve(y, p, n_bins, strategy="uniform")`` and the rows of each non-empty bin."""
    from sklearn.calibration import calibration_curve

    prob_true, prob_pred = calibration_curve(y, p, n_bins=n_bins, strategy="uniform")
    edges = np.linspace(0.0, 1.0, n_bins + 1)
    counts = np.bincount(np.searchsorted(edges[1:-1], p), minlength=n_bins)  # scikit-learn's binning
    return prob_true, prob_pred, counts[counts > 0]


def confusion_at(perf: ClassifierPerformance, threshold: float) -> ConfusionCounts:
    """The confusion counts of ``perf``'s rows when those with probability ``>= threshold`` are called positive.

    A margin is compared with ``log(threshold / (1 - threshold))`` (its logistic against ``threshold``).

    Raises
    ------
    ValueError
        If ``threshold`` is not within [0, 1].
    """
    t = float(threshold)
    if not 0.0 <= t <= 1.0:
        raise ValueError(f"threshold must lie in [0, 1], got {threshold!r}")
    cut = t
    if perf.output_kind == "margin":
        cut = -np.inf if t == 0 else np.inf if t == 1 else float(np.log(t / (1 - t)))
    called = perf.scores >= cut
    pos = perf.y == 1
    tp, fp = int(np.sum(called & pos)), int(np.sum(called & ~pos))
    return ConfusionCounts(t, tp, fp, int(np.sum(~pos)) - fp, int(np.sum(pos)) - tp)


def regressor_performance(actual, predicted, *, target: str = "target", n_boot: int = N_BOOT, seed: int = 0,
                          level: float = 0.95, rows: str = "held-out rows") -> RegressorPerformance:
    """R² and RMSE of ``predicted`` against ``actual`` with percentile bootstrap intervals over the rows.

    Raises
    ------
    ValueError
        If the shapes differ, a value is not finite, or fewer than two rows are given.
    """
    y, p = np.asarray(actual, dtype=float), np.asarray(predicted, dtype=float)
    if y.ndim != 1 or y.shape != p.shape or len(y) < 2:
        raise ValueError(f"actual and predicted must be 1-D of one length >= 2, got {y.shape} and {p.shape}")
    if not (np.all(np.isfinite(y)) and np.all(np.isfinite(p))):
        raise ValueError("actual and predicted must be finite")
    n, sq = len(y), (y - p) ** 2
    r2s, rmses = [], []
    yc = y - y.mean()  # centred once: each resample's total sum of squares is two products
    for counts in resample_counts((np.arange(n),), n_boot, seed):
        sse = counts @ sq
        mean = counts @ yc / n
        sst = counts @ yc ** 2 - n * mean ** 2
        with np.errstate(invalid="ignore", divide="ignore"):
            r2s.append(np.where(sst > 0, 1 - sse / sst, np.nan))
        rmses.append(np.sqrt(sse / n))
    sst = np.sum((y - y.mean()) ** 2)
    r2 = 1 - sq.sum() / sst if sst > 0 else float("nan")
    r2_boot = _cat(r2s)
    source = (f"{n:,} {rows}; {level:.0%} percentile intervals over {n_boot:,} bootstrap resamples of the rows "
              f"(seed {seed}; Efron & Tibshirani 1993)")
    return RegressorPerformance(str(target), y, p, _interval(r2, r2_boot[np.isfinite(r2_boot)], level, n_boot, seed),
                                _interval(np.sqrt(sq.mean()), _cat(rmses), level, n_boot, seed), source)


def multiclass_confusion(true, predicted, class_names, *, level: float = 0.95,
                         rows: str = "held-out rows") -> MulticlassConfusion:
    """The k × k confusion matrix of class indices ``true`` and ``predicted`` and the overall accuracy.

    Raises
    ------
    ValueError
        If an index is outside the classes or the shapes differ.
    """
    t, p = np.asarray(true, dtype=int), np.asarray(predicted, dtype=int)
    k = len(class_names)
    if t.shape != p.shape or t.ndim != 1 or len(t) == 0:
        raise ValueError(f"true and predicted must be 1-D of one non-zero length, got {t.shape} and {p.shape}")
    if min(t.min(), p.min()) < 0 or max(t.max(), p.max()) >= k:
        raise ValueError(f"class indices must lie in 0..{k - 1}")
    matrix = np.bincount(t * k + p, minlength=k * k).reshape(k, k)
    hits = int(np.trace(matrix))
    lo, hi = wilson_interval(hits, len(t), level)
    source = (f"{len(t):,} {rows}, each predicted as its most probable class; accuracy's {level:.0%} Wilson score "
              f"interval (Wilson 1927)")
    return MulticlassConfusion(tuple(map(str, class_names)), matrix, hits / len(t), lo, hi, level, source)
