"""Figures of model performance (the Performance page, the report): ROC, precision-recall, calibration, the
confusion at a threshold, a multiclass confusion matrix, predicted against actual and residuals.

Each takes the frozen results of :mod:`explainers.performance` (through :mod:`app.services.performance`) and
returns a ``go.Figure`` with its text alternative; nothing is computed here beyond what is drawn.
"""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from app.views.figures import CATEGORICAL, GREY, _layout, esc, points_trace
from explainers.numbers import plain


def interval_text(name: str, s) -> str:
    """``"ROC AUC 0.991 (95% interval 0.972–1.000)"`` of a :class:`~explainers.types.ScoreInterval` (its ``text``)."""
    return s.text(name)


def _output_words(c) -> str:
    return f"P({c.target})" if c.output_kind == "probability" else f"margin of {c.target}"


THRESHOLD_TRACE = 2
"""Index of the chosen threshold's marker in :func:`roc_figure` and :func:`pr_figure` (the page moves it)."""


def threshold_marker(x, y, colour: str) -> go.Scatter:
    """The point of the chosen threshold on a curve (empty until the page or the report places it)."""
    return go.Scatter(x=x, y=y, mode="markers", name="chosen threshold",
                      marker=dict(size=12, color="white", line=dict(color=colour, width=3), symbol="circle"),
                      hovertemplate="the chosen threshold: %{x:.3f}, %{y:.3f}<extra></extra>")


def marker_xy(value) -> list:
    """``[value]``, or ``[None]`` where a rate is undefined (precision with no row called positive)."""
    return [None if value is None or value != value else float(value)]


def roc_figure(c, at=None) -> go.Figure:
    """The ROC curve with the chance diagonal and, with ``at`` (:class:`~explainers.types.ConfusionCounts`), the
    point of that threshold; the title gives ROC AUC and its interval."""
    fig = go.Figure([
        go.Scatter(x=[0, 1], y=[0, 1], mode="lines", line=dict(color=GREY, dash="dot"), name="chance",
                   hoverinfo="skip"),
        go.Scatter(x=c.fpr, y=c.tpr, mode="lines", line=dict(color=CATEGORICAL[0], width=2, shape="linear"),
                   name="ROC", customdata=c.roc_thresholds,
                   hovertemplate="threshold %{customdata:.3f}: FPR %{x:.3f}, TPR %{y:.3f}<extra></extra>"),
        threshold_marker(marker_xy(at.fpr) if at else [], marker_xy(at.tpr) if at else [], CATEGORICAL[0])])
    auc = interval_text("ROC AUC", c.roc_auc)
    return _layout(fig, f"ROC curve of {esc(_output_words(c))}: {auc}",
                   alt=f"ROC curve over {c.n_rows:,} held-out rows; {auc}; the diagonal is a classifier by chance",
                   xaxis=dict(title="false positive rate", range=[0, 1]),
                   yaxis=dict(title="true positive rate", range=[0, 1.02]), showlegend=False, height=380)


def pr_figure(c, at=None) -> go.Figure:
    """The precision-recall curve (a step curve, as average precision sums it) with the prevalence line and, with
    ``at``, the point of that threshold."""
    fig = go.Figure([
        go.Scatter(x=[0, 1], y=[c.prevalence] * 2, mode="lines", line=dict(color=GREY, dash="dot"),
                   name="prevalence", hoverinfo="skip"),
        go.Scatter(x=c.recall, y=c.precision, mode="lines", line=dict(color=CATEGORICAL[1], width=2, shape="vh"),
                   name="precision-recall",
                   hovertemplate="recall %{x:.3f}, precision %{y:.3f}<extra></extra>"),
        threshold_marker(marker_xy(at.tpr) if at else [], marker_xy(at.precision) if at else [], CATEGORICAL[1])])
    ap = interval_text("average precision", c.average_precision)
    return _layout(fig, f"Precision-recall of {esc(_output_words(c))}: {ap}",
                   alt=f"precision-recall curve over {c.n_rows:,} held-out rows; {ap}; the dotted line is the "
                       f"share of {c.target} ({c.prevalence:.3f}), a classifier by chance",
                   xaxis=dict(title="recall (true positive rate)", range=[0, 1]),
                   yaxis=dict(title="precision", range=[0, 1.02]), showlegend=False, height=380)


def calibration_figure(c) -> go.Figure:
    """Observed share of positives against mean predicted probability per bin, with the diagonal."""
    counts = np.asarray(c.calibration_counts, dtype=int)
    fig = go.Figure([
        go.Scatter(x=[0, 1], y=[0, 1], mode="lines", line=dict(color=GREY, dash="dot"), name="perfectly calibrated",
                   hoverinfo="skip"),
        go.Scatter(x=c.calibration_predicted, y=c.calibration_true, mode="lines+markers",
                   marker=dict(size=np.clip(4 + 2 * np.sqrt(counts), 6, 22), color=CATEGORICAL[2]),
                   line=dict(color=CATEGORICAL[2]), customdata=counts, name="model",
                   hovertemplate="mean predicted %{x:.3f}, observed %{y:.3f} (%{customdata} rows)<extra></extra>")])
    brier = interval_text("Brier score", c.brier)
    worst = int(np.argmax(np.abs(c.calibration_true - c.calibration_predicted)))
    alt = (f"calibration over {c.n_bins} bins of equal width, {len(counts)} of them holding rows; {brier}; the "
           f"largest gap: mean predicted {c.calibration_predicted[worst]:.3f}, observed "
           f"{c.calibration_true[worst]:.3f} ({counts[worst]} rows)")
    return _layout(fig, f"Calibration of P({esc(c.target)}) in {c.n_bins} bins: {brier}", alt=alt,
                   xaxis=dict(title=f"mean predicted P({esc(c.target)})", range=[0, 1]),
                   yaxis=dict(title=f"observed share of {esc(c.target)}", range=[0, 1.02]), showlegend=False,
                   height=380)


def _matrix(z, x_labels, y_labels, title: str, alt: str, height: int) -> go.Figure:
    z = np.asarray(z)
    fig = go.Figure(go.Heatmap(z=z, x=x_labels, y=y_labels, colorscale="Blues", showscale=False, text=z,
                               texttemplate="%{text}", hovertemplate="%{y}, %{x}: %{z} rows<extra></extra>"))
    fig.update_yaxes(autorange="reversed")
    return _layout(fig, title, alt=alt, height=height, xaxis=dict(title="predicted", side="bottom"),
                   yaxis=dict(title="true"))


def confusion_figure(v) -> go.Figure:
    """The 2 × 2 confusion matrix at the chosen threshold (:class:`app.services.performance.ThresholdView`)."""
    k, pos, neg = v.counts, esc(v.target), esc(v.rest)
    alt = (f"at threshold {k.threshold:.2f}: {k.tp} {v.target} rows called {v.target}, {k.fn} missed; {k.fp} "
           f"{v.rest} rows called {v.target}, {k.tn} not")
    return _matrix([[k.tp, k.fn], [k.fp, k.tn]], [pos, neg], [pos, neg],
                   f"Confusion at threshold {k.threshold:.2f} on {k.n:,} held-out rows", alt, 320)


def multiclass_figure(m) -> go.Figure:
    """The full k × k confusion matrix of a multiclass model (each row predicted as its most probable class)."""
    names = [esc(c) for c in m.class_names]
    off = m.matrix - np.diag(np.diag(m.matrix))
    i, j = np.unravel_index(int(np.argmax(off)), off.shape)
    alt = (f"{len(names)} classes over {m.n_rows:,} held-out rows, accuracy {m.accuracy:.3f}; the most frequent "
           f"confusion: {off[i, j]} {m.class_names[i]} rows predicted {m.class_names[j]}")
    title = (f"Every class: accuracy {m.accuracy:.3f} ({m.level:.0%} interval {m.accuracy_low:.3f}–"
             f"{m.accuracy_high:.3f})")
    return _matrix(m.matrix, names, names, title, alt, max(320, 40 * len(names) + 160))


def predicted_actual_figure(r) -> go.Figure:
    """Each held-out row's prediction against its true value, with the identity line."""
    lo = float(min(r.actual.min(), r.predicted.min()))
    hi = float(max(r.actual.max(), r.predicted.max()))
    r2, rmse = interval_text("R²", r.r2), interval_text("RMSE", r.rmse)
    fig = go.Figure([
        go.Scatter(x=[lo, hi], y=[lo, hi], mode="lines", line=dict(color=GREY, dash="dot"), hoverinfo="skip",
                   name="predicted = actual"),
        points_trace(r.n_rows)(x=r.actual, y=r.predicted, mode="markers", name="rows",
                               marker=dict(color=CATEGORICAL[0], size=5, opacity=0.6),
                               hovertemplate="actual %{x:.4g}, predicted %{y:.4g}<extra></extra>")])
    return _layout(fig, f"Predicted vs actual {esc(r.target)}: {r2}; {rmse}",
                   alt=f"{r.n_rows:,} held-out rows, predicted against actual {r.target}; {r2}; {rmse}",
                   xaxis=dict(title=f"actual {esc(r.target)}"), yaxis=dict(title=f"predicted {esc(r.target)}"),
                   showlegend=False, height=380)


def residuals_figure(r) -> go.Figure:
    """Each held-out row's residual (actual − predicted) against its prediction, with the zero line."""
    res = r.residuals
    fig = go.Figure([
        points_trace(r.n_rows)(x=r.predicted, y=res, mode="markers", name="rows",
                               marker=dict(color=CATEGORICAL[5], size=5, opacity=0.6),
                               hovertemplate="predicted %{x:.4g}, residual %{y:.4g}<extra></extra>")])
    fig.add_hline(y=0, line=dict(color=GREY, dash="dot"))
    alt = (f"residuals of {r.n_rows:,} held-out rows: mean {plain(float(res.mean()), 4, trim=True)}, "
           f"largest under-prediction {plain(float(res.max()), 4, trim=True)}, largest over-prediction "
           f"{plain(float(res.min()), 4, trim=True)}")
    return _layout(fig, f"Residuals (actual − predicted {esc(r.target)})", alt=alt,
                   xaxis=dict(title=f"predicted {esc(r.target)}"), yaxis=dict(title="residual"), showlegend=False,
                   height=380)
