"""Plots that draw one mark per row, at any size: which rows they draw and what they say about it (issue 14).

A per-row plot (the Descriptive page's beeswarm) draws every row up to :data:`MAX_DOTS` rows, and beyond that a
uniform random sample of :data:`MAX_DOTS` rows without replacement (``numpy.random.default_rng(SEED)``), the same
rows for every feature, and says so on the plot (:meth:`RowSample.statement`). What the plot summarises always
comes from every row: mean |SHAP| (the order of the features and the Global importance bars), its standard
error, and each dot's colour (the feature value's percentile among every row). Below the cap nothing is sampled
and nothing is said.

Why 2,000: at 4-pixel dots on a plot about 800 pixels wide, a feature's strip is saturated well before 2,000
dots, and the share of dots in any region of it is within about ±2.2 percentage points of every row's (95 %,
binomial, worst case p = 0.5); 12 features draw 24,000 points (WebGL past
:data:`app.views.figures.SVG_MAX_POINTS`), about 0.6 MB of figure JSON, whatever the table's size
(``python -m benchmarks.big_plots``).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

import explainers as ex
from explainers.metrics import top_k
from explainers.numbers import plain

from ._core import lazy
from .tabular import global_importance

MAX_DOTS = 2_000
"""Most rows a per-row plot draws; beyond it a seeded uniform sample of this many rows."""
SEED = 0
"""Seed of that sample (``numpy.random.default_rng``)."""
BEESWARM_FEATURES = 12
"""Features the beeswarm draws (the most important by mean |SHAP| of every row)."""


@dataclass(frozen=True)
class RowSample:
    """Which of ``n_rows`` rows a plot draws.

    Parameters
    ----------
    rows : ndarray of int, shape (m,)
        Positions drawn, increasing: ``arange(n_rows)`` when ``n_rows <= cap``, else ``m = cap`` of them.
    n_rows : int
        Rows the plot is about.
    seed : int
        Seed of the sample (``numpy.random.default_rng``), stated on the plot when sampled.
    """

    rows: np.ndarray
    n_rows: int
    seed: int

    @property
    def sampled(self) -> bool:
        """True when fewer rows are drawn than the plot is about."""
        return len(self.rows) < self.n_rows

    def statement(self, summary: str = "mean |SHAP| from all rows") -> str:
        """What the plot shows, e.g. ``"2,000 of 1,000,000 rows shown (uniform random sample, seed 0); mean |SHAP|
        from all rows"``; ``""`` when every row is drawn."""
        if not self.sampled:
            return ""
        return (f"{plain(len(self.rows))} of {plain(self.n_rows)} rows shown (uniform random sample, seed "
                f"{self.seed})" + (f"; {summary}" if summary else ""))


def shown_rows(n_rows: int, cap: int = MAX_DOTS, seed: int = SEED) -> RowSample:
    """Every row, or a uniform random sample of ``cap`` of them without replacement, sorted.

    Parameters
    ----------
    n_rows : int
    cap : int, default :data:`MAX_DOTS`
    seed : int, default :data:`SEED`

    Returns
    -------
    RowSample
    """
    n_rows = int(n_rows)
    if n_rows <= cap:
        return RowSample(np.arange(n_rows), n_rows, seed)
    rows = np.sort(np.random.default_rng(seed).choice(n_rows, size=int(cap), replace=False))
    return RowSample(rows, n_rows, seed)


@dataclass(frozen=True)
class Beeswarm:
    """What the beeswarm draws: the shown rows' SHAP values of the most important features.

    Parameters
    ----------
    feature_names : tuple of str, length k
        The features drawn, least important first (bottom to top of the plot).
    values : ndarray of shape (m, k)
        SHAP values of the drawn rows (``sample.rows`` of the global view), output units.
    percentiles : ndarray of shape (m, k)
        Each drawn value's percentile among **every** row of the global view, in [0, 1]: its mid-rank (ties share
        the mean of their ranks, NaN ranked last as ``numpy.sort`` puts it) over ``n_rows - 1``.
    importance : ndarray of shape (k,)
        Mean |SHAP| of every row (:attr:`explainers.GlobalImportance.importance`).
    sample : RowSample
    output_space : str
    median_standard_error : float or None
        Median standard error of the drawn rows' sampled SHAP values (every feature); None when exact or absent.
    """

    feature_names: tuple[str, ...]
    values: np.ndarray
    percentiles: np.ndarray
    importance: np.ndarray
    sample: RowSample
    output_space: str
    median_standard_error: float | None = None


def _percentiles(column: np.ndarray, at: np.ndarray) -> np.ndarray:
    """Mid-rank percentile of ``column[at]`` among every value of ``column``, shape (len(at),)."""
    col = np.asarray(column, dtype=float)
    ordered = np.sort(col)
    shown = col[at]
    lo, hi = np.searchsorted(ordered, shown, "left"), np.searchsorted(ordered, shown, "right")
    return (lo + hi - 1) / 2 / max(len(col) - 1, 1)


def beeswarm_of(g: ex.GlobalImportance, max_display: int = BEESWARM_FEATURES, cap: int = MAX_DOTS,
                seed: int = SEED) -> Beeswarm:
    """The :class:`Beeswarm` of a global view: every row up to ``cap``, else a seeded sample (:func:`shown_rows`).

    Reads only the drawn rows of ``g.values`` and one feature column at a time (a memory-mapped store is not
    copied whole). Raises nothing beyond numpy's errors on malformed arrays.
    """
    order = top_k(g.importance, max_display)[::-1]
    sample = shown_rows(len(g.values), cap, seed)
    rows = sample.rows
    drawn = np.asarray(g.values[rows], dtype=float)[:, order]
    fv = g.feature_values
    pct = np.column_stack([_percentiles(fv[:, j], rows) for j in order]) if len(order) else np.empty((len(rows), 0))
    median = None
    if g.standard_error is not None:
        se = np.asarray(g.standard_error[rows], dtype=float)
        if np.nanmax(se, initial=0) > 0:
            median = float(np.nanmedian(se))
    return Beeswarm(tuple(g.feature_names[j] for j in order), drawn, pct, np.asarray(g.importance)[order], sample,
                    g.output_space, median)


@dataclass(frozen=True)
class GlobalView:
    """The Descriptive page's global panel: the global SHAP view (every row) and its beeswarm's drawn rows."""

    importance: ex.GlobalImportance
    beeswarm: Beeswarm


def _global_view() -> GlobalView:
    g = global_importance()
    return GlobalView(g, beeswarm_of(g))


_global_view_once = lazy("global_view", _global_view)


def global_view() -> GlobalView:
    """The global SHAP view and its beeswarm (:func:`beeswarm_of`), built once per workspace.

    Raises
    ------
    workspace.errors.CandorError
        As :func:`app.services.global_importance` (asked again on the next call).
    """
    return _global_view_once()
