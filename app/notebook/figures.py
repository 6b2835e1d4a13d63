"""The figures a notebook can ask for by name: each is the dashboard's own figure, drawn by the page's own view.

Every entry calls the ``draw_*`` function (or figure builder) the page's callback calls, with the page's defaults,
so a notebook's figure is the figure the page shows for the same row, feature or threshold: nothing here computes
or draws anything of its own. :func:`draw` runs inside the notebook's installed workspace
(:meth:`app.notebook.Candor.figure`).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import plotly.graph_objects as go

from app import services
from app.views import dependence, descriptive, figures_performance, figures_persuasive, persuasive, surrogate
from app.views import methods as method_views
from workspace.errors import CandorError


@dataclass(frozen=True)
class Entry:
    """One figure: what it needs (``"row"``, ``"feature"``, ``"threshold"`` or None), its page and what it shows."""

    needs: str | None
    page: str
    shows: str
    draw: Callable[..., go.Figure]


def _story(row, k: int, part: int) -> go.Figure:
    return persuasive.draw_row(row, k, "exact", False, ())[part]


def _classifier_curves():
    view = services.performance.performance()
    if view.classifier is None:
        raise CandorError(f"not shown: {view.not_applicable['roc']}")
    return view


def _calibration(_row, _k, _feature, _threshold) -> go.Figure:
    view = _classifier_curves()
    if view.classifier.calibration_true is None:
        raise CandorError(f"not shown: {view.not_applicable['calibration']}")
    return figures_performance.calibration_figure(view.classifier)


def _multiclass(_row, _k, _feature, _threshold) -> go.Figure:
    view = services.performance.performance()
    if view.multiclass is None:
        raise CandorError(f"not shown: {view.not_applicable['multiclass']}")
    return figures_performance.multiclass_figure(view.multiclass)


def _regressor(which: str):
    def draw(_row, _k, _feature, _threshold) -> go.Figure:
        view = services.performance.performance()
        if view.regressor is None:
            raise CandorError(f"not shown: {view.not_applicable['regression']}")
        return getattr(figures_performance, f"{which}_figure")(view.regressor)
    return draw


def _permutation_importance(_row, _k, _feature, _threshold) -> go.Figure:
    for v in services.methods.global_method_views():
        if v.name == "permutation_importance":
            if v.result is None:
                raise CandorError(f"not shown: {v.why_not}")
            return method_views.figure(v)
    raise CandorError("permutation importance is not in this version's table of methods")


def _surrogate(_row, _k, _feature, _threshold) -> go.Figure:
    why = services.why_not("surrogate")
    if why is not None:
        raise CandorError(f"not shown: {why}")
    return surrogate.draw_surrogate(services.default_muse_key())[2]


FIGURES: dict[str, Entry] = {
    "importance": Entry(None, "Descriptive", "mean |SHAP| of every feature (global importance)",
                        lambda *_: descriptive.draw_global()[0]),
    "beeswarm": Entry(None, "Descriptive", "every row's SHAP value of each feature, coloured by its value",
                      lambda *_: descriptive.draw_global()[1]),
    "permutation_importance": Entry(None, "Descriptive", "permutation importance on the held-out rows beside mean "
                                    "|SHAP|", _permutation_importance),
    "waterfall": Entry("row", "Descriptive", "the row's SHAP waterfall from base_value to its prediction",
                       lambda row, *_: descriptive.draw_local(row)[0]),
    "lime": Entry("row", "Descriptive", "the row's LIME attributions with their local R²",
                  lambda row, *_: descriptive.draw_local(row)[1]),
    "descriptive": Entry("row", "Persuasive", "every SHAP attribution of the row (what the story simplifies)",
                         lambda row, k, *_: _story(row, k, 5)),
    "story": Entry("row", "Persuasive", "the k items the persuasive story shows", lambda row, k, *_: _story(row, k, 6)),
    "tradeoff": Entry("row", "Persuasive", "what the story costs at each k for the row (sufficiency, "
                      "comprehensiveness, share of |attribution| shown)", lambda row, k, *_: _story(row, k, 7)),
    "global_tradeoff": Entry(None, "Persuasive", "the story's costs at each k over the held-out rows",
                             lambda _row, k, *_: figures_persuasive.global_tradeoff(services.persuasive_global(), k)),
    "surrogate": Entry(None, "Surrogate", "the default MUSE surrogate against the model on the held-out rows",
                       _surrogate),
    "roc": Entry(None, "Performance", "ROC curve with ROC AUC and its interval",
                 lambda *_: figures_performance.roc_figure(_classifier_curves().classifier)),
    "pr": Entry(None, "Performance", "precision-recall curve with average precision and its interval",
                lambda *_: figures_performance.pr_figure(_classifier_curves().classifier)),
    "calibration": Entry(None, "Performance", "calibration curve with the Brier score", _calibration),
    "confusion": Entry("threshold", "Performance", "the confusion matrix at a threshold (default 0.5)",
                       lambda _r, _k, _f, t: figures_performance.confusion_figure(services.performance.confusion(t))),
    "multiclass": Entry(None, "Performance", "a multiclass model's confusion matrix and overall accuracy", _multiclass),
    "predicted_actual": Entry(None, "Performance", "a regressor's predictions against the truth",
                              _regressor("predicted_actual")),
    "residuals": Entry(None, "Performance", "a regressor's residuals", _regressor("residuals")),
    "dependence": Entry("feature", "Dependence", "the feature's SHAP values against its values",
                        lambda _r, _k, feature, _t: dependence.draw(feature)[0]),
    "pdp": Entry("feature", "Dependence", "the feature's partial dependence with ICE curves",
                 lambda _r, _k, feature, _t: dependence.draw(feature)[1]),
}
"""Every figure :meth:`app.notebook.Candor.figure` draws, by name."""


def draw(name: str, row, k: int, feature, threshold) -> go.Figure:
    """The figure ``name`` (a key of :data:`FIGURES`) for the installed workspace.

    Raises
    ------
    CandorError
        For an unknown name (the names are listed), and as the page's own view raises (a row that does not exist,
        a view that does not apply to this model).
    """
    entry = FIGURES.get(name)
    if entry is None:
        raise CandorError(f"no figure named {name!r}; the figures are {', '.join(FIGURES)}")
    if entry.needs == "feature" and feature is None:
        raise CandorError(f"figure {name!r} needs a feature: figure({name!r}, feature=...)")
    return entry.draw(row, k, feature, threshold)
