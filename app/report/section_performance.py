"""The report's Model performance section: the Performance page's figures at the default threshold (0.5), or
the one line saying why a view does not apply. Every user string is escaped here."""
from __future__ import annotations

from html import escape

from app.views import figures_performance as pf


def figure_count(view) -> int:
    """How many figures :func:`performance_section` draws for ``view`` (a PerformanceView, or None)."""
    if view is None:
        return 0
    if view.regressor is not None:
        return 2
    n = 0
    if view.classifier is not None:
        n += 3 + (view.classifier.calibration_true is not None)
    return n + (view.multiclass is not None)


def performance_section(c, figs) -> str:
    """``<h2>Model performance</h2>``: ROC, precision-recall, calibration and the confusion at the default threshold
    (a classifier), every class (a multiclass model), or predicted vs actual and residuals (a regressor)."""
    view = getattr(c, "performance", None)
    if view is None:
        return ""
    out = ["<h2 id=\"performance\">Model performance</h2>"]
    why = view.not_applicable
    if view.regressor is not None:
        r = view.regressor
        out += [f"<p>{escape(pf.interval_text('R²', r.r2))}; {escape(pf.interval_text('RMSE', r.rmse))}.</p>",
                "<div class=\"pair\">", figs.add(pf.predicted_actual_figure(r)), figs.add(pf.residuals_figure(r)),
                "</div>", f"<p class=\"note\">{escape(r.source)}</p>",
                f"<p class=\"note\">Not shown: {escape(why['roc'])}.</p>"]
        return "".join(out)
    k = view.classifier
    if k is None:
        out.append(f"<p class=\"note\">Not shown: {escape(why['roc'])}.</p>")
    else:
        scores = [pf.interval_text("ROC AUC", k.roc_auc), pf.interval_text("average precision", k.average_precision)]
        scores += [pf.interval_text("Brier score", k.brier)] if k.brier is not None else []
        at = c.threshold.counts  # the circle on both curves: the default threshold
        out += [f"<p>{escape('; '.join(scores))}.</p>", "<div class=\"pair\">", figs.add(pf.roc_figure(k, at)),
                figs.add(pf.pr_figure(k, at)), "</div>", "<div class=\"pair\">"]
        out.append(figs.add(pf.calibration_figure(k)) if k.calibration_true is not None
                   else f"<p class=\"note\">Not shown: {escape(why['calibration'])}.</p>")
        t = c.threshold
        out += [figs.add(pf.confusion_figure(t)), "</div>",
                f"<p>At threshold {t.counts.threshold:.2f} (the Performance page moves it): true positive rate "
                f"{t.counts.tpr:.3f}, false positive rate {t.counts.fpr:.3f}, precision {t.counts.precision:.3f}, "
                f"accuracy {t.counts.accuracy:.3f}.</p>", f"<p class=\"note\">{escape(k.source)}</p>"]
    if view.multiclass is not None:
        out += ["<h3>Every class</h3>", figs.add(pf.multiclass_figure(view.multiclass)),
                f"<p class=\"note\">{escape(view.multiclass.source)}</p>"]
    return "".join(out)
