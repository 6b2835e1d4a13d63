"""Cohorts page services: a cohort of held-out rows, the error tree, each cohort's figures, fairness rates.

One call, :func:`cohorts_view`, returns what the page shows for a cohort's filters and the sensitive
features named: the cohort's and every error-tree leaf's accuracy, the default MUSE surrogate's
agreement and the Persuasive page's opening story's sufficiency and share of ``|attribution|`` shown
(each with its 95 % interval), the cohorts ranked by where the story misleads most, and fairlearn's rates
per group of each sensitive feature, with how often the story hides that feature (the Persuasive page's
guardrail rule). What it is computed from (held-out rows, the error tree, the rows the story was measured on)
is computed once per workspace.
"""
from __future__ import annotations

import logging
import math
import time
from dataclasses import dataclass

import numpy as np
import pandas as pd

from explainers.cohorts import (CohortFigures, ErrorTree, cohort_figures, cohort_mask, error_tree, filters_text,
                                misleads_most, parse_filters)
from explainers.fairness import FairnessReport, fairness_report
from explainers.numbers import plain
from workspace.errors import CandorError
from . import surrogates
from .applicable import require, why_not
from ._core import built_store, lazy, row_cache, workspace
from .persuasive import SENSITIVE_SHARE, STORY_K, story_point
from .tabular import display_codec, model_labels

STORY_ROWS = 200
STORY_MIN_ROWS = 10
STORY_BUDGET_S = 20.0
"""The story is measured on the first :data:`STORY_ROWS` held-out rows, or as many as are measured within
``STORY_BUDGET_S`` seconds (at least ``STORY_MIN_ROWS``; model-agnostic SHAP takes seconds a row), stated."""
STORY_MEASURES = ("sufficiency", "mass_retained")
STORED_STORY = "cohort_story.json"
"""A store's story measures (``python -m app build`` measures all :data:`STORY_ROWS` rows, no clock budget)."""

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class _Base:
    X: pd.DataFrame
    y: np.ndarray
    pred: np.ndarray
    labels: np.ndarray


@dataclass(frozen=True)
class _Story:
    """The story measures of the first ``n_measured`` held-out rows: ``measures`` (name -> one value a held-out row,
    NaN past them), ``hidden`` (held-out rows x features, False past them), ``shares`` of ``|attribution|`` of the
    measured rows only (``n_measured`` x features: a (held-out rows x features) array of NaN past 200 rows held 7 MB
    of a server on Adult's 8,141)."""

    measures: dict
    shares: np.ndarray
    hidden: np.ndarray
    n_measured: int
    note: str


@dataclass(frozen=True)
class FairnessView:
    """fairlearn's rates over one sensitive feature on the cohort, and what the story hides of it.

    ``hidden``: measured rows of the cohort whose story hides the feature while it carries more than
    ``SENSITIVE_SHARE`` of the row's ``|attribution|`` (the guardrail's rule), of ``measured``.
    ``problem``: why no rates could be computed ("" when they were).
    """

    feature: str
    report: FairnessReport | None
    hidden: int
    measured: int
    problem: str = ""


@dataclass(frozen=True)
class CohortsView:
    """What the Cohorts page shows: the user's cohort, the error tree's leaves, the ranking and fairness."""

    filters: str
    cohort: CohortFigures
    tree: ErrorTree
    leaf_texts: tuple[str, ...]
    leaves: tuple[CohortFigures, ...]
    ranked: tuple[CohortFigures, ...]
    fairness: tuple[FairnessView, ...]
    notes: tuple[str, ...]
    story_k: int


def _make_base() -> _Base:
    require("cohorts")
    ws = workspace()
    rows = np.asarray(ws.test_idx)
    classes = list(ws.model.classes_)
    pred = np.array([classes.index(v) for v in model_labels()[rows]])
    return _Base(ws.X.iloc[rows], np.asarray(ws.y)[rows].astype(int), pred,
                 np.asarray([ws.classes[i] for i in pred], dtype=object))


def story_to_json(story: _Story) -> dict:
    """The story measures of the first ``n_measured`` held-out rows as a JSON object (a store's
    :data:`STORED_STORY`; a non-finite measure is ``null``)."""
    k = story.n_measured

    def num(v) -> float | None:
        return float(v) if math.isfinite(v) else None
    return {"n_measured": k, "note": story.note, "n_rows": int(len(story.hidden)),
            "measures": {m: [num(v) for v in story.measures[m][:k]] for m in STORY_MEASURES},
            "shares": [[num(v) for v in row] for row in story.shares[:k]],
            "hidden": [[bool(v) for v in row] for row in story.hidden[:k]]}


def _story_from_json(d: dict, n: int, dim: int) -> _Story:
    """The :class:`_Story` of :func:`story_to_json` for ``n`` held-out rows of ``dim`` features.

    Raises
    ------
    ValueError, TypeError, KeyError
        If ``d`` is not such a story of this many rows and features.
    """
    k = int(d["n_measured"])
    if int(d["n_rows"]) != n or not 0 <= k <= n:
        raise ValueError(f"a story of {d['n_rows']} held-out rows, {k} measured; this table holds out {n}")
    measures = {m: np.full(n, np.nan) for m in STORY_MEASURES}
    for m in STORY_MEASURES:
        measures[m][:k] = np.asarray([np.nan if v is None else v for v in d["measures"][m]], dtype=float)
    shares, hidden = np.full((k, dim), np.nan), np.zeros((n, dim), dtype=bool)
    if k:
        shares[:] = np.asarray([[np.nan if v is None else v for v in row] for row in d["shares"]], dtype=float)
        hidden[:k] = np.asarray(d["hidden"], dtype=bool)
    return _Story(measures, shares, hidden, k, str(d["note"]))


def _make_story() -> _Story:
    base, ws = _base(), workspace()
    n, d = len(base.X), ws.X.shape[1]
    stored = built_store() and built_store().json(STORED_STORY)
    if stored:
        try:
            return _story_from_json(stored, n, d)
        except (ValueError, TypeError, KeyError, IndexError) as err:  # measured live instead, and said in the log
            log.warning("the store's %s is not this table's story (%s): measured live", STORED_STORY, err)
    measures = {m: np.full(n, np.nan) for m in STORY_MEASURES}
    shares, hidden = np.full((min(n, STORY_ROWS), d), np.nan), np.zeros((n, d), dtype=bool)
    if why_not("persuasive") is not None:
        return _Story(measures, shares[:0], hidden, 0, f"No story measures: {why_not('persuasive')}")
    started, done = time.perf_counter(), 0
    for i, row in enumerate(ws.test_idx[:STORY_ROWS]):
        point = story_point(int(row))
        for m in STORY_MEASURES:
            measures[m][i] = point.fidelity_after[m]
        phi = np.abs(np.asarray(_shap_values(int(row)), float))
        shares[i] = phi / (phi.sum() or 1.0)
        shown = np.zeros(d, dtype=bool)
        shown[[j for it in point.items for j in it.members]] = True
        hidden[i] = ~shown & (shares[i] > SENSITIVE_SHARE)
        done = i + 1
        if done >= STORY_MIN_ROWS and time.perf_counter() - started > STORY_BUDGET_S:
            break
    why = "" if done == min(n, STORY_ROWS) else f", those measured within {STORY_BUDGET_S:.0f} s"
    note = (f"Story measures: the Persuasive page's opening story (top {STORY_K} of SHAP, exact values) on the "
            f"first {done} of {n} held-out rows{why}; dropped features take the background rows' values.")
    return _Story(measures, shares[:done].copy(), hidden, done, note)


def _shap_values(row: int) -> np.ndarray:
    from .tabular import shap_row

    return shap_row(row).values


def _make_tree() -> ErrorTree:
    base, codec = _base(), display_codec()
    categorical = () if codec is None else tuple(codec.names[j] for j in codec.categorical)
    return error_tree(base.X, base.pred != base.y, categorical=categorical)


def _make_surrogate():
    """The default MUSE rule set and its note, or (None, why not)."""
    if (why := why_not("surrogate")) is not None:
        return None, f"No surrogate agreement: {why}"
    view = surrogates.muse_view(surrogates.default_muse_key())
    return view.rule_set, f"Surrogate agreement: the default MUSE rule set ({len(view.rule_set.rules)} rules) " \
                          "against the model's labels on the cohort's rows, Wilson 95 % interval."


_base = lazy("cohort_base", _make_base)
_story = lazy("cohort_story", _make_story, warm="late")
"""Warmed late (after the pages' own warm values, before the surrogate frontier's minutes): the story of up to 200
rows is seconds (3.0 s of CPU on breast cancer), a callback's budget is not, and before the Descriptive page's
stored rows were drawn it held their first clicks behind the interpreter lock."""
_tree = lazy("error_tree", _make_tree)
_surrogate = lazy("cohort_surrogate", _make_surrogate)


def _figures(name: str, mask: np.ndarray) -> CohortFigures:
    base, story, (rule_set, _) = _base(), _story(), _surrogate()
    return cohort_figures(name, mask, base.pred == base.y, rule_set=rule_set, X=base.X, y_model=base.labels,
                          story=story.measures)


def _groups(feature: str, rows: pd.DataFrame) -> np.ndarray:
    col = display_codec().column(feature)
    values = rows[feature].to_numpy(dtype=float)
    if col is not None:
        return np.asarray([col.label(v) for v in values], dtype=object)
    return np.asarray([plain(v, 6, trim=True) for v in values], dtype=object)


def _fairness(feature: str, mask: np.ndarray) -> FairnessView:
    base, story = _base(), _story()
    j = list(map(str, workspace().X.columns)).index(feature)
    measured = mask.copy()
    measured[story.n_measured:] = False
    hidden = int(story.hidden[measured, j].sum())
    try:
        report = fairness_report(base.y[mask], base.pred[mask], _groups(feature, base.X[mask]), feature=feature)
    except ValueError as err:
        return FairnessView(feature, None, hidden, int(measured.sum()), str(err))
    return FairnessView(feature, report, hidden, int(measured.sum()))


def _checked(sensitive) -> tuple[str, ...]:
    names = set(map(str, workspace().X.columns))
    sens = tuple(dict.fromkeys(str(f) for f in (sensitive or ())))
    unknown = [f for f in sens if f not in names]
    if unknown:
        raise CandorError(f"sensitive features must be columns of the data; unknown: {', '.join(unknown)}")
    return sens


@row_cache(maxsize=64)
def _view(text: str, sensitive: tuple[str, ...]) -> CohortsView:
    base, tree, codec = _base(), _tree(), display_codec()
    mask = _mask(text)
    filters = parse_filters(text, base.X.columns, codec)
    shown = filters_text(filters, codec)
    cohort = _figures(f"Your cohort: {shown}" if filters else "All held-out rows", mask)
    leaves = tuple(_figures(f"Leaf {i + 1}", cohort_mask(base.X, leaf.filters)) for i, leaf in enumerate(tree.leaves))
    ranked = misleads_most(leaves + ((cohort,) if filters else ()))
    notes = (f"Error tree: depth at most {tree.max_depth}, at least {tree.min_leaf} rows a leaf, fitted to the "
             f"{tree.n_errors} of {tree.n_rows} held-out rows the model labels wrongly (scikit-learn CART, seed 0).",
             _surrogate()[1], _story().note)
    return CohortsView(shown, cohort, tree, tuple(filters_text(leaf.filters, codec) or "every row"
                                                  for leaf in tree.leaves),
                       leaves, ranked, tuple(_fairness(f, mask) for f in sensitive), notes, STORY_K)


def cohorts_view(filters: str = "", sensitive=()) -> CohortsView:
    """The Cohorts page for the cohort ``filters`` (``"feature op value; ..."``, empty: every held-out row).

    Parameters
    ----------
    filters : str
        Conditions ANDed (:func:`explainers.cohorts.parse_filters`; category columns by level name).
    sensitive : sequence of str
        Features whose fairness rates are shown (the Persuasive page's ``sensitive`` setting).

    Raises
    ------
    CandorError
        On a filter that cannot be read, a sensitive name that is no column, or a regressor.
    """
    return _view(str(filters or "").strip(), _checked(sensitive))


def _mask(text: str) -> np.ndarray:
    try:
        return cohort_mask(_base().X, parse_filters(text, _base().X.columns, display_codec()))
    except ValueError as err:
        raise CandorError(f"cohort filter: {err}") from None


def fairness_views(filters: str = "", sensitive=()) -> tuple[FairnessView, ...]:
    """Only the fairness part of :func:`cohorts_view` (no surrogate, no error tree): the report's section and
    tests on tables whose surrogate takes long to fit."""
    mask = _mask(str(filters or "").strip())
    return tuple(_fairness(f, mask) for f in _checked(sensitive))
