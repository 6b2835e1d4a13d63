"""Model performance on the held-out rows (the Performance page, the report): ROC, precision-recall and
calibration curves with intervals and the confusion at a threshold for a classifier; predicted against actual for
a regressor; a multiclass model's full confusion matrix beside its one-vs-rest view.

The same rows and output as the model card (:func:`~.tabular.model_summary`: the explained output on
``test_idx``, read from the warm-up's outputs); computed once per workspace in the warm-up (about 0.5 s of CPU
on Adult's 8,141 held-out rows, ``python -m benchmarks.tablestakes``), not stored by a build: every number comes
from the outputs, which a served store's workspace computes anyway.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

import explainers.performance as perf
from explainers.types import ClassifierPerformance, ConfusionCounts, MulticlassConfusion, RegressorPerformance
from workspace.errors import CandorError

from ._core import lazy, workspace
from .tabular import _outputs_of, guarded

N_BOOT, SEED, LEVEL = perf.N_BOOT, 0, 0.95
MAX_CELLS = 100_000_000
"""Held-out rows × resamples at most: past 100,000 held-out rows the intervals use fewer resamples (at least
:data:`MIN_BOOT`; the method line names how many): 200,000 rows × 500 resamples took 6.9 s of CPU."""
MIN_BOOT = 100


def resamples(n_rows: int) -> int:
    """Bootstrap resamples for ``n_rows`` held-out rows: :data:`N_BOOT`, fewer past :data:`MAX_CELLS` cells."""
    return int(max(MIN_BOOT, min(N_BOOT, MAX_CELLS // max(1, n_rows))))
DEFAULT_THRESHOLD = 0.5


@dataclass(frozen=True)
class PerformanceView:
    """What the Performance page shows for the installed model.

    ``classifier`` (binary or one-vs-rest), ``regressor`` and ``multiclass`` are None where they do not apply;
    ``not_applicable`` maps each view that does not apply (``"roc"``, ``"pr"``, ``"calibration"``,
    ``"confusion"``, ``"regression"``, ``"multiclass"``) to one line saying why.
    """

    classifier: ClassifierPerformance | None
    regressor: RegressorPerformance | None
    multiclass: MulticlassConfusion | None
    not_applicable: dict

    @property
    def threshold_applies(self) -> bool:
        return self.classifier is not None


def _classifier(ws, why: dict) -> ClassifierPerformance | None:
    y = ws.y[ws.test_idx]
    if ws.output_kind not in ("probability", "margin"):
        why.update(dict.fromkeys(("roc", "pr", "calibration", "confusion"),
                                 "this model gives labels only: ROC, precision-recall and calibration need scores"))
        return None
    if len(np.unique(y)) < 2:
        why.update(dict.fromkeys(("roc", "pr", "calibration", "confusion"),
                                 f"the held-out rows hold one class only ({ws.classes[int(y[0])]}): no ROC or "
                                 "precision-recall curve"))
        return None
    if ws.output_kind == "margin":
        why["calibration"] = "a margin is not a probability: no calibration curve or Brier score"
    out = _outputs_of(ws.test_idx)
    return guarded("the performance curves", lambda: perf.classifier_performance(
        y, out, output_kind=ws.output_kind, target=ws.positive_class, n_boot=resamples(len(y)), seed=SEED,
        level=LEVEL))


def _multiclass(ws) -> MulticlassConfusion:
    pair = ws.pair
    names = tuple(pair.adapter.class_names)
    X = pair.X.iloc[pair.test_idx]
    # predict gives the model's own classes (classes_), which a features file may show under other names
    index = {str(c): i for i, c in enumerate(pair.adapter.classes_)}
    predicted = [index[str(c)] for c in np.asarray(pair.adapter.predict(X))]
    return perf.multiclass_confusion(pair.y[pair.test_idx], predicted, names, level=LEVEL)


def _compute() -> PerformanceView:
    ws = workspace()
    why: dict = {}
    if not ws.is_classifier:
        why.update(dict.fromkeys(("roc", "pr", "calibration", "confusion"),
                                 "a regressor has no ROC, precision-recall or calibration curve and no threshold"))
        why["multiclass"] = "a regressor has no classes"
        y, out = ws.y[ws.test_idx], _outputs_of(ws.test_idx)
        reg = guarded("the regression performance", lambda: perf.regressor_performance(
            y, out, target=ws.target, n_boot=resamples(len(y)), seed=SEED, level=LEVEL))
        return PerformanceView(None, reg, None, why)
    why["regression"] = "a classifier has no predicted-vs-actual or residual plot"
    clf = _classifier(ws, why)
    multi = None
    if ws.task == "multiclass" and ws.pair is not None:
        multi = guarded("the multiclass confusion matrix", _multiclass, ws)
    else:
        why["multiclass"] = "a binary model: its confusion matrix is the one above"
    return PerformanceView(clf, None, multi, why)


@dataclass(frozen=True)
class ThresholdView:
    """The confusion counts at one threshold and the names of the two classes (``target`` against ``rest``)."""

    counts: ConfusionCounts
    target: str
    rest: str


performance = lazy("performance", _compute, warm=True)
"""The installed model's :class:`PerformanceView` (computed once per workspace)."""


def confusion(threshold) -> ThresholdView:
    """The held-out confusion counts when rows with probability ``>= threshold`` are called the explained class.

    Raises
    ------
    CandorError
        If the model has no scores to threshold, or ``threshold`` is not a number within [0, 1] (one line).
    """
    view = performance()
    if view.classifier is None:
        raise CandorError(view.not_applicable["confusion"])
    try:
        t = float(threshold)
    except (TypeError, ValueError):
        raise CandorError(f"the threshold must be a number between 0 and 1, got {threshold!r}") from None
    if not 0.0 <= t <= 1.0:
        raise CandorError(f"the threshold must be a number between 0 and 1, got {t:g}")
    ws = workspace()
    rest = ws.classes[0] if len(ws.classes) > 1 else "rest"
    return ThresholdView(perf.confusion_at(view.classifier, t), view.classifier.target, rest)


def lines(_row: int | None = None) -> tuple[str, ...]:
    """What ``python -m app check`` prints of the Performance page: its scores with their intervals, and the
    confusion at the default threshold (or why the curves do not apply)."""
    view = performance()
    if view.regressor is not None:
        r = view.regressor
        return (f"perf    {r.n_rows:,} held-out rows: {r.r2.text('R2')}; {r.rmse.text('RMSE')}",)
    c = view.classifier
    if c is None:
        return (f"perf    not applicable: {view.not_applicable['roc']}",)
    k = confusion(DEFAULT_THRESHOLD).counts
    brier = f"; {c.brier.text('Brier')}" if c.brier is not None else ""
    line = (f"perf    {c.n_rows:,} held-out rows: {c.roc_auc.text('ROC AUC')}; "
            f"{c.average_precision.text('average precision')}{brier}; at {k.threshold:.2f}: {k.tp} TP, {k.fp} FP, "
            f"{k.tn} TN, {k.fn} FN")
    if view.multiclass is not None:
        m = view.multiclass
        line += f"; every class: accuracy {m.accuracy:.3f} ({m.level:.0%} interval {m.accuracy_low:.3f}–{m.accuracy_high:.3f})"
    return (line,)
