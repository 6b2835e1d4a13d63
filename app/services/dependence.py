"""The Dependence page's service: one feature's SHAP dependence beside its partial dependence and ICE curves.

SHAP dependence reads the global view's SHAP values (:func:`~.tabular.global_importance`: every row, or its seeded
sample of big tables), drawn over the rows a per-row plot draws (:func:`~.row_plots.shown_rows`: all up to 2,000,
else a seeded uniform sample, stated), coloured by the feature :func:`explainers.shap_dependence` picks. Partial
dependence and ICE are computed live on the held-out rows (:class:`explainers.PartialDependenceExplainer`: a seeded
sample of at most 500, a 20-value grid), once per feature per workspace. Both are in the explained output's units
(what SHAP explains).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

import explainers as ex
from explainers.dependence import GRID_RESOLUTION, ICE_ROWS, PERCENTILES, hidden_text
from explainers.numbers import plain
from workspace.errors import CandorError

from . import row_plots
from ._core import built_store, lazy, row_cache, workspace
from .tabular import display_codec, global_importance, guarded

ICE_SHOWN = 100
"""ICE curves drawn (a seeded sample of the computed ones; the fidelity figure is over all of them)."""
TOP_FEATURES = 3
"""Features the report shows (the largest mean |SHAP|)."""


@dataclass(frozen=True)
class DependenceView:
    """What the Dependence page shows for one feature.

    Parameters
    ----------
    feature : str
    shap : explainers.ShapDependence
        The scatter's rows, values, SHAP values and colour feature.
    partial : explainers.PartialDependence
        The PDP, every computed ICE curve and what the average hides.
    shown_curves : ndarray of int
        Which ICE curves are drawn (indices into ``partial.individual``).
    rows_statement : str
        Which rows the scatter draws and how sure their SHAP values are (exact, or the median and largest standard
        error of a sampled backend), in words.
    shap_source : str
        How the SHAP values were computed (the global view's source).
    hidden : str
        :func:`explainers.dependence.hidden_text`: how much the PDP hides, with its intervals.
    feature_levels, color_levels : dict of float to str
        A categorical feature's (and colour feature's) codes present in the drawn rows and their names; empty
        for a numeric one.
    """

    feature: str
    shap: ex.ShapDependence
    partial: ex.PartialDependence
    shown_curves: np.ndarray
    rows_statement: str
    shap_source: str
    hidden: str
    feature_levels: dict
    color_levels: dict


def value_text(feature: str, value: float) -> str:
    """A value of ``feature`` as people read it: its level for a categorical column, else a plain number."""
    codec = display_codec()
    code = codec.column(feature) if codec is not None else None
    if code is not None:
        return code.text(value)
    return plain(value, trim=True)


def categorical_features() -> tuple[str, ...]:
    """The columns whose values are levels (a one-hot group's raw column is one of them)."""
    codec = display_codec()
    return tuple(codec.names[j] for j in codec.categorical) if codec is not None else ()


def features() -> tuple[str, ...]:
    """Every feature, the largest mean |SHAP| first (the picker's order)."""
    g = global_importance()
    order = np.argsort(-np.asarray(g.importance, dtype=float), kind="stable")
    return tuple(g.feature_names[j] for j in order)


def default_feature() -> str:
    """The feature the page opens on: the largest mean |SHAP|."""
    return features()[0]


def _make() -> ex.PartialDependenceExplainer:
    ws = workspace()
    return ex.PartialDependenceExplainer(ws.output, ws.X.iloc[ws.test_idx], categorical=categorical_features(),
                                         labels=value_text, units=ws.output_label, n_ice=ICE_ROWS, seed=0)


_explainer = lazy("partial_dependence_explainer", _make)


def why_not() -> str | None:
    """Why partial dependence does not apply to the installed model: never (every tabular model has an output)."""
    return None


def settings() -> dict:
    """What the stored partial dependences depend on (the store's manifest ``explainers``)."""
    return {"n_ice": ICE_ROWS, "grid_resolution": GRID_RESOLUTION, "percentiles": list(PERCENTILES), "seed": 0,
            "rows": "held-out", "features": f"the {TOP_FEATURES} largest mean |SHAP|"}


def _stored() -> ex.DependenceSet | None:
    st = built_store()
    return st.result("partial_dependence") if st is not None else None


@row_cache(maxsize=64)
def _partial(feature: str) -> ex.PartialDependence:
    """The store's partial dependence of ``feature`` (built for the top features), else computed live (once per
    feature: the page's view and the table of methods' result share it)."""
    kept = _stored()
    found = kept.get(feature) if kept is not None else None
    if found is not None:  # built by python -m app build: no recomputation
        return found
    return guarded("partial dependence", _explainer().explain, feature)


def _top_set() -> ex.DependenceSet:
    st = _stored()
    if st is not None:
        return st
    ws, names = workspace(), []
    for name in features():  # the top features that can be shown (a one-valued feature is skipped)
        if len(names) == TOP_FEATURES:
            break
        if ws.X.iloc[ws.test_idx][name].dropna().nunique() > 1:
            names.append(name)
    partials = tuple(_partial(n) for n in names)  # not the page's whole view: its colour search is 50 bootstraps
    return ex.DependenceSet(tuple(map(str, ws.X.columns)), partials,
                            f"partial dependence of the {len(partials)} features with the largest mean |SHAP|; "
                            + (partials[0].source if partials else "no feature with two values"))


partial_dependences = lazy("partial_dependence", _top_set)
"""The table of methods' result (:class:`explainers.DependenceSet` of the top features): the store's, else live."""


def lines(_row: int) -> tuple[str, ...]:
    """What ``python -m app check`` prints: how much the top feature's PDP hides."""
    top_set = partial_dependences()
    if not top_set.partials:
        return ("pdp     no feature takes two values among the held-out rows",)
    p = top_set.partials[0]
    f = p.fidelity
    return (f"pdp     {p.feature}: {plain(100 * f.opposite_share, 2, trim=True)} % of {f.n_curves:,} ICE curves "
            f"against the PDP (95 % CI {plain(100 * f.opposite_low, 2, trim=True)}–"
            f"{plain(100 * f.opposite_high, 2, trim=True)} %), centred distance {plain(f.distance, 3, trim=True)} "
            f"{p.units}, {len(p.grid)} grid values",)


def _interactions():
    """Tree SHAP interaction values of the drawn rows, for a scikit-learn tree model of a checked family on numeric
    columns (:func:`explainers.interactions.tree_interactions`); None otherwise (the heuristic chooses)."""
    from explainers.interactions import tree_interactions

    ws, g = workspace(), global_importance()
    if categorical_features() or ws.adapter.model is None:
        return None
    rows = row_plots.shown_rows(len(g.values)).rows
    X = np.asarray(g.feature_values[rows], dtype=float)
    return guarded("Tree SHAP interaction values", tree_interactions, ws.adapter.model, X,
                   int(getattr(ws.model, "index", -1)))


_interaction_values = lazy("tree_interaction_values", _interactions)


def _shap(feature: str) -> ex.ShapDependence:
    g = global_importance()
    sample = row_plots.shown_rows(len(g.values))
    cats = set(categorical_features())
    return ex.shap_dependence(feature, g.feature_names, g.feature_values, g.values, sample.rows,
                              categorical=[n in cats for n in g.feature_names],
                              units=g.output_space.replace("_", "-"), seed=0, interactions=_interaction_values())


@row_cache(maxsize=64)
def _dependence(feature: str) -> DependenceView:
    partial = _partial(feature)
    shap = _shap(feature)
    g = global_importance()
    n = len(partial.individual)
    shown = (np.arange(n) if n <= ICE_SHOWN
             else np.sort(np.random.default_rng(0).choice(n, size=ICE_SHOWN, replace=False)))
    sample = row_plots.RowSample(shap.rows, shap.n_rows, row_plots.SEED)
    rows = sample.statement("") or f"all {shap.n_rows:,} explained rows"
    rows += _shap_error(g, feature, shap.rows)
    return DependenceView(feature, shap, partial, shown, rows, g.source, hidden_text(partial),
                          _levels(feature, shap.values), _levels(shap.color_feature, shap.color_values))


def _shap_error(g, feature: str, rows: np.ndarray) -> str:
    """How sure the drawn SHAP values are: exact, or the median of their standard errors (sampled backends)."""
    se = g.standard_error
    if se is None or not np.nanmax(np.asarray(se[rows], dtype=float), initial=0) > 0:
        return "; SHAP values exact (standard error 0)"
    col = np.asarray(se[rows], dtype=float)[:, list(g.feature_names).index(feature)]
    return (f"; sampled SHAP values: median standard error {plain(float(np.nanmedian(col)), 3, trim=True)}, largest "
            f"{plain(float(np.nanmax(col)), 3, trim=True)}")


def _levels(feature: str | None, values: np.ndarray) -> dict:
    """A categorical feature's codes among ``values`` and their names ({} for a numeric one or none)."""
    if feature is None or feature not in categorical_features():
        return {}
    return {float(c): value_text(feature, c) for c in np.unique(values[~np.isnan(values)])}


def dependence(feature: str | None) -> DependenceView:
    """The Dependence page's view of ``feature`` (None: :func:`default_feature`), built once per feature.

    Raises
    ------
    CandorError
        One line: an unknown feature (naming a few known ones), one taking a single value, or as global SHAP
        and the model's calls raise.
    """
    names = features()
    feature = names[0] if feature in (None, "") else str(feature)
    if feature not in names:
        raise CandorError(f"no feature {feature!r} to show; features: {', '.join(names[:6])}"
                          + (" ..." if len(names) > 6 else ""))
    try:
        return _dependence(feature)
    except ValueError as err:  # a feature with one value among the sampled rows
        raise CandorError(str(err).splitlines()[0]) from None


def top() -> tuple[DependenceView, ...]:
    """The views of the features with the largest mean |SHAP| (the report's section): those of
    :func:`partial_dependences` (the store's, when built)."""
    return tuple(dependence(p.feature) for p in partial_dependences().partials)


def colour_text(v: DependenceView) -> str:
    """Which feature colours the scatter, how strongly, and how sure the pick is."""
    s = v.shap
    if s.color_feature is None:
        return "No other feature to colour by."
    strength = dict(s.candidates).get(s.color_feature, 0.0)
    runner = next(((n, x) for n, x in s.candidates if n != s.color_feature), None)
    if s.by == "interaction":
        text = (f"Coloured by {s.color_feature}: the largest mean |Tree SHAP interaction value| with {v.feature}, "
                f"{plain(strength, 3, trim=True)} {s.units}")
        if runner is not None:
            text += f" (next: {runner[0]}, {plain(runner[1], 3, trim=True)})"
    else:
        text = (f"Coloured by {s.color_feature}: it explains {plain(100 * strength, 2, trim=True)} % of the variance "
                f"of {v.feature}'s SHAP value left once {v.feature}'s own value is accounted for")
        if runner is not None:
            text += f" (next: {runner[0]}, {plain(100 * runner[1], 2, trim=True)} %)"
    text += (f"; picked in {plain(100 * s.pick_share, 3, trim=True)} % of {s.n_boot} bootstrap resamples of the "
             f"rows.")
    if s.by == "residual" and strength < 0.02:
        text += f" No feature explains much of it: {v.feature}'s effect looks additive here."
    return text
