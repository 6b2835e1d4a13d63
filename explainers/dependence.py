"""Partial dependence with ICE curves of one feature, and what the average hides.

Partial dependence (Friedman 2001) is the model's output averaged over the rows with one feature set to each
grid value; the ICE curves (Goldstein et al. 2015) are the rows themselves, before averaging. Both come from
scikit-learn's ``sklearn.inspection.partial_dependence(kind="both", method="brute")``, run on the *explained
output* (the same number SHAP explains: a probability, a margin or a regressor's prediction) through a thin
regressor around the output function, so that the PDP's units are SHAP's.

A PDP is itself a simplification: one curve standing for many. :func:`curve_fidelity` says how much it hides:
the share of ICE curves that run the other way (with its Wilson interval) and the mean distance of the centred
curves from the centred PDP (with a bootstrap interval).
"""
from __future__ import annotations

from typing import Callable, Sequence

import numpy as np
import pandas as pd

from .intervals import bootstrap_mean, wilson
from .numbers import plain
from .types._dependence import CurveFidelity, PartialDependence

__all__ = ["PartialDependenceExplainer", "curve_fidelity"]

ICE_ROWS = 500
"""Rows sampled for the ICE curves (and so for their average, the PDP) when the table has more: 500 x 20 grid
values is 10,000 model rows (about 0.2 s of one core for Adult's HistGradientBoosting pipeline), and the share of
curves against the PDP is then known to within about ±4.4 percentage points (Wilson 95 %, worst case)."""
GRID_RESOLUTION = 20
"""Most grid values of a numeric feature."""
PERCENTILES = (0.05, 0.95)
"""The numeric grid spans these percentiles of the sampled rows (scikit-learn's default)."""
FLAT = 1e-9
"""A PDP whose overall change is below this share of the curves' spread is flat."""


def _changes(grid: np.ndarray, curves: np.ndarray, categorical: bool, top: int, bottom: int) -> np.ndarray:
    """Each curve's overall change: least-squares slope over the grid values, or its value at level ``top``
    minus at level ``bottom``."""
    if categorical:
        return curves[:, top] - curves[:, bottom]
    x = np.asarray(grid, dtype=float) - np.mean(grid)
    den = float(x @ x)
    return curves @ x / den if den > 0 else np.zeros(len(curves))


def curve_fidelity(grid: Sequence[float], individual: np.ndarray, categorical: bool = False) -> CurveFidelity:
    """How far the PDP (the mean of ``individual``) is from the ICE curves it averages.

    Parameters
    ----------
    grid : sequence of float, length g
        The grid values (a categorical feature's level codes; only their order of PDP values is used).
    individual : ndarray of shape (n, g)
        The ICE curves, output units.
    categorical : bool, default=False
        Compare levels (the PDP's highest against its lowest) instead of slopes.

    Returns
    -------
    CurveFidelity
        The share of curves running the other way (Wilson 95 %) and the mean centred distance (bootstrap 95 %).

    Raises
    ------
    ValueError
        If there are no curves or fewer than two grid values.
    """
    ice = np.asarray(individual, dtype=float)
    if ice.ndim != 2 or len(ice) == 0 or ice.shape[1] < 2:
        raise ValueError(f"expected ICE curves of shape (n >= 1, g >= 2), got {ice.shape}")
    pdp = ice.mean(axis=0)
    top, bottom = int(np.argmax(pdp)), int(np.argmin(pdp))
    per_curve = _changes(np.asarray(grid, dtype=float), ice, categorical, top, bottom)
    overall = float(per_curve.mean())  # linear in the curves: the PDP's own change
    spread = float(np.max(np.abs(per_curve), initial=0.0))
    flat = abs(overall) <= FLAT * spread or spread == 0.0
    direction = 1 if flat or overall > 0 else -1
    opposite = int(np.sum(np.sign(per_curve) == -direction))
    share, lo, hi = wilson(opposite, len(ice))
    centred = (ice - ice.mean(axis=1, keepdims=True)) - (pdp - pdp.mean())
    dist = np.sqrt(np.mean(centred ** 2, axis=1))
    mean, dlo, dhi, _ = bootstrap_mean(dist)
    if len(dist) < 2:
        dlo = dhi = mean
    return CurveFidelity(direction, bool(flat), opposite, len(ice), float(share), float(lo), float(hi),
                         float(mean), float(dlo), float(dhi), float(pdp.max() - pdp.min()))


class PartialDependenceExplainer:
    """Partial dependence and ICE curves of the explained output on one feature at a time.

    Source: Friedman (2001), "Greedy function approximation: a gradient boosting machine", Annals of Statistics
    29(5), doi:10.1214/aos/1013203451 (partial dependence); Goldstein et al. (2015), "Peeking inside the black
    box", JCGS 24(1), doi:10.1080/10618600.2014.907095 (ICE). Computed by scikit-learn's
    ``sklearn.inspection.partial_dependence(kind="both", method="brute")``.

    Parameters
    ----------
    output : callable
        The explained output of a table of rows (DataFrame with the model's columns) as an array of shape (n,).
    X : DataFrame of shape (n_rows, n_features)
        The rows to average over (Candor passes the held-out rows), as the model takes them.
    categorical : sequence of str, default=()
        Columns whose values are levels (their grid is every level present in the sample).
    labels : callable, optional
        ``labels(feature, value) -> str``: a grid value as people read it (default: plain numbers).
    units : str, default="output"
    n_ice : int, default=:data:`ICE_ROWS`
        Rows sampled (uniform, without replacement, ``seed``) when ``X`` has more.
    grid_resolution : int, default=:data:`GRID_RESOLUTION`
    percentiles : (float, float), default=:data:`PERCENTILES`
    seed : int, default=0
    """

    def __init__(self, output: Callable, X: pd.DataFrame, *, categorical: Sequence[str] = (),
                 labels: Callable[[str, float], str] | None = None, units: str = "output", n_ice: int = ICE_ROWS,
                 grid_resolution: int = GRID_RESOLUTION, percentiles: tuple[float, float] = PERCENTILES,
                 seed: int = 0) -> None:
        if n_ice < 2 or grid_resolution < 2:
            raise ValueError(f"n_ice and grid_resolution must be at least 2, got {n_ice}, {grid_resolution}")
        self.output, self.X, self.categorical = output, X, frozenset(map(str, categorical))
        self.labels = labels or (lambda _f, v: plain(v, trim=True))
        self.units, self.n_ice, self.grid_resolution = units, int(n_ice), int(grid_resolution)
        self.percentiles, self.seed = (float(percentiles[0]), float(percentiles[1])), int(seed)
        n = len(X)
        self.rows = (np.arange(n) if n <= self.n_ice
                     else np.sort(np.random.default_rng(self.seed).choice(n, size=self.n_ice, replace=False)))

    def explain(self, feature: str) -> PartialDependence:
        """The PDP and ICE curves of ``feature``, with :func:`curve_fidelity`.

        Raises
        ------
        ValueError
            If ``feature`` is not a column, or takes fewer than two values among the sampled rows.
        """
        names = [str(c) for c in self.X.columns]
        if feature not in names:
            raise ValueError(f"no feature {feature!r}; the table's columns are {', '.join(names[:8])}"
                             + (" ..." if len(names) > 8 else ""))
        j, cat = names.index(feature), feature in self.categorical
        sample = self.X.iloc[self.rows]
        col = sample.iloc[:, j]
        if col.dropna().nunique() < 2:
            raise ValueError(f"{feature} takes one value in the {len(sample):,} sampled rows: no dependence to show")
        from sklearn.inspection import partial_dependence as _sk_partial_dependence  # at first use (issue 23)

        from ._output_regressor import OutputRegressor

        r = _sk_partial_dependence(OutputRegressor(self.output), sample, [j], categorical_features=[j] if cat else None,
                                   grid_resolution=self.grid_resolution, percentiles=self.percentiles,
                                   kind="both", method="brute")
        grid = np.asarray(r["grid_values"][0], dtype=float)
        ice, avg = np.asarray(r["individual"][0], dtype=float), np.asarray(r["average"][0], dtype=float)
        se = ice.std(axis=0, ddof=1) / np.sqrt(len(ice)) if len(ice) > 1 else np.zeros(len(grid))
        fid = curve_fidelity(grid, ice, cat)
        sampled = (f"all {len(self.X):,} rows" if len(self.rows) == len(self.X)
                   else f"{len(self.rows):,} of {len(self.X):,} rows (uniform random sample, seed {self.seed})")
        grid_words = (f"{len(grid)} levels" if cat else
                      f"{len(grid)} values between the {self.percentiles[0] * 100:g}th and "
                      f"{self.percentiles[1] * 100:g}th percentiles")
        source = (f"scikit-learn partial_dependence (kind='both', brute) over {sampled}; grid of {grid_words}; "
                  f"output: {self.units}")
        return PartialDependence(feature, cat, grid, tuple(self.labels(feature, v) for v in grid), avg, se, ice,
                                 self.rows.copy(), len(self.X), self.seed, self.grid_resolution, self.percentiles,
                                 self.units, fid, source)


def hidden_text(pd_: PartialDependence) -> str:
    """One sentence on how much the average hides, with its intervals (what the page and the report print)."""
    f = pd_.fidelity
    how = ("its highest level above its lowest" if pd_.categorical
           else "a flat average" if f.flat else "rising" if f.direction > 0 else "falling")
    against = ("rank those two levels the other way" if pd_.categorical
               else "fall" if f.flat else "run the other way")
    dist = (f"{plain(f.distance, 3, trim=True)} (95 % CI {plain(f.distance_low, 3, trim=True)}–"
            f"{plain(f.distance_high, 3, trim=True)})")
    ratio = f", {plain(100 * f.distance / f.pdp_range, 2, trim=True)} % of the PDP's range" if f.pdp_range > 0 else ""
    return (f"The PDP of {pd_.feature} ({how}) hides its curves: {plain(100 * f.opposite_share, 1, trim=True)} % "
            f"of the {f.n_curves:,} ICE curves {against} (95 % CI {plain(100 * f.opposite_low, 1, trim=True)}–"
            f"{plain(100 * f.opposite_high, 1, trim=True)} %), and the centred curves lie on average {dist} "
            f"{pd_.units} from the centred PDP{ratio}.")
