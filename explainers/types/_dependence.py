"""How the output depends on one feature: partial dependence with ICE curves, SHAP dependence, and what the
average hides (the fidelity of the PDP as a summary of its curves)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._json import _jsonable


@dataclass(frozen=True)
class CurveFidelity:
    """How far the partial dependence (the average curve) is from the ICE curves it averages.

    Parameters
    ----------
    direction : int
        +1 if the PDP rises over the grid, -1 if it falls (a numeric feature: the sign of its least-squares slope
        over the grid values; a categorical one: the PDP's highest level against its lowest, so always +1); a
        PDP whose slope is 0 to rounding is read as rising (``flat`` says so).
    flat : bool
        True when the PDP's overall change is below 1e-9 of the curves' spread (a flat average).
    opposite : int
        ICE curves whose overall change has the opposite sign (a numeric feature: least-squares slope; a
        categorical one: the curve at the PDP's highest level minus at its lowest); a curve with no change is
        not counted.
    n_curves : int
        ICE curves measured.
    opposite_share, opposite_low, opposite_high : float
        ``opposite / n_curves`` and its Wilson 95 % interval (the curves are a sample of the table's rows).
    distance, distance_low, distance_high : float
        Mean over the curves of the root-mean-square distance, over the grid, between the centred ICE curve and
        the centred PDP (each minus its own mean over the grid: differences of level removed, differences of
        shape kept), in output units, with a percentile bootstrap 95 % interval over the curves (2,000
        resamples, seed 0).
    pdp_range : float
        The PDP's range over the grid (max - min), output units: what the distance is compared with.
    """

    direction: int
    flat: bool
    opposite: int
    n_curves: int
    opposite_share: float
    opposite_low: float
    opposite_high: float
    distance: float
    distance_low: float
    distance_high: float
    pdp_range: float

    def to_dict(self) -> dict:
        return _jsonable(self)

    @classmethod
    def from_dict(cls, d: dict) -> "CurveFidelity":
        """The figure :meth:`to_dict` gave (raises KeyError, TypeError or ValueError on another object)."""
        ints = ("direction", "opposite", "n_curves")
        return cls(**{f: (int(d[f]) if f in ints else bool(d[f]) if f == "flat" else float(d[f]))
                      for f in cls.__dataclass_fields__})


@dataclass(frozen=True)
class PartialDependence:
    """Partial dependence (Friedman 2001) of the explained output on one feature, with its ICE curves (Goldstein
    et al. 2015), computed by scikit-learn's ``sklearn.inspection.partial_dependence(kind="both")``.

    Parameters
    ----------
    feature : str
        The feature (a raw column: a one-hot group is one feature).
    categorical : bool
        True for a categorical column (its grid is its levels).
    grid : ndarray of shape (g,)
        The grid's values as the model's table holds them (a categorical column's level codes).
    grid_labels : tuple of str, length g
        The grid's values as people read them (levels by name, numbers in plain notation).
    average : ndarray of shape (g,)
        The PDP: the mean of the ICE curves at each grid value.
    average_se : ndarray of shape (g,)
        Its standard error at each grid value: the ICE curves' standard deviation (ddof=1) over ``sqrt(n)``.
    individual : ndarray of shape (n, g)
        The ICE curves: the output of each sampled row with the feature set to each grid value.
    rows : ndarray of int, shape (n,)
        The sampled rows' positions in the table the caller passed.
    n_rows : int
        Rows the sample was drawn from (uniform without replacement, ``seed``); ``n == n_rows`` when all are used.
    seed : int
    grid_resolution : int
        Most grid values of a numeric feature: scikit-learn's grid, equally spaced between the
        ``percentiles`` of the sampled rows (the unique values when fewer).
    percentiles : (float, float)
    units : str
        What the output is (e.g. "margin of malignant").
    fidelity : CurveFidelity
        What the average hides (:func:`explainers.dependence.curve_fidelity`).
    source : str
        One line saying how it was computed.
    """

    feature: str
    categorical: bool
    grid: np.ndarray
    grid_labels: tuple[str, ...]
    average: np.ndarray
    average_se: np.ndarray
    individual: np.ndarray
    rows: np.ndarray
    n_rows: int
    seed: int
    grid_resolution: int
    percentiles: tuple[float, float]
    units: str
    fidelity: CurveFidelity
    source: str
    method: str = "partial_dependence"

    def __post_init__(self) -> None:
        ice = np.asarray(self.individual, dtype=float)
        g = len(self.grid)
        if ice.ndim != 2 or ice.shape[1] != g or len(self.grid_labels) != g or len(self.average) != g:
            raise ValueError(f"ICE curves of shape {ice.shape} for a grid of {g} values "
                             f"({len(self.grid_labels)} labels, {len(self.average)} averages)")
        object.__setattr__(self, "individual", ice)
        object.__setattr__(self, "grid_labels", tuple(map(str, self.grid_labels)))

    def to_dict(self) -> dict:
        return _jsonable(self)

    @classmethod
    def from_dict(cls, d: dict) -> "PartialDependence":
        """The result :meth:`to_dict` gave (raises KeyError, TypeError or ValueError on another object)."""
        arr = {k: np.array(d[k], dtype=float) for k in ("grid", "average", "average_se")}
        ice = np.array(d["individual"], dtype=float).reshape(-1, len(arr["grid"]))
        return cls(str(d["feature"]), bool(d["categorical"]), arr["grid"], tuple(d["grid_labels"]), arr["average"],
                   arr["average_se"], ice, np.array(d["rows"], dtype=int), int(d["n_rows"]), int(d["seed"]),
                   int(d["grid_resolution"]), (float(d["percentiles"][0]), float(d["percentiles"][1])),
                   str(d["units"]), CurveFidelity.from_dict(d["fidelity"]), str(d["source"]),
                   str(d.get("method", "partial_dependence")))


@dataclass(frozen=True)
class DependenceSet:
    """Partial dependence of the features with the largest mean |SHAP| (what a store keeps of the method; any
    other feature is computed when asked).

    Parameters
    ----------
    feature_names : tuple of str
        Every column of the table (the store checks them against its own).
    partials : tuple of PartialDependence
        One per feature kept, largest mean |SHAP| first.
    source : str
    """

    feature_names: tuple[str, ...]
    partials: tuple[PartialDependence, ...]
    source: str
    method: str = "partial_dependence"

    def get(self, feature: str) -> PartialDependence | None:
        """The kept result of ``feature``, or None."""
        return next((p for p in self.partials if p.feature == feature), None)

    def to_dict(self) -> dict:
        return _jsonable(self)

    @classmethod
    def from_dict(cls, d: dict) -> "DependenceSet":
        """The set :meth:`to_dict` gave (raises KeyError, TypeError or ValueError on another object)."""
        partials = tuple(PartialDependence.from_dict(p) for p in d["partials"])
        if any(p.feature not in d["feature_names"] for p in partials):
            raise ValueError("a partial dependence of a feature the table does not have")
        return cls(tuple(map(str, d["feature_names"])), partials, str(d["source"]),
                   str(d.get("method", "partial_dependence")))


@dataclass(frozen=True)
class ShapDependence:
    """One feature's SHAP values against its values (Lundberg et al. 2020), coloured by the feature it
    interacts with most.

    Parameters
    ----------
    feature : str
    values : ndarray of shape (m,)
        The feature's values in the explained rows (as the model's table holds them; category codes).
    shap_values : ndarray of shape (m,)
        Its SHAP values in those rows, output units.
    rows : ndarray of int, shape (m,)
        Positions drawn among the explained rows (every one up to the cap, else a seeded uniform sample).
    n_rows : int
        Explained rows the dependence is about (the global view's rows).
    color_feature : str or None
        The feature chosen to colour the dots (None when there is no other feature).
    color_values : ndarray of shape (m,)
        Its values in the drawn rows (empty without one).
    candidates : tuple of (str, float)
        The other features with their interaction strength, strongest first (at most 5): the share of the
        SHAP residual's variance (:func:`explainers.dependence.interaction_strength`) each explains.
    pick_share : float
        Share of bootstrap resamples of the rows (``n_boot``) that pick the same colour feature: how sure the pick is.
    n_boot : int
    method : str
        How the colour feature was chosen, in words.
    units : str
    by : {"residual", "interaction"}
        What the candidates' strengths are: shares of the SHAP residual's variance, or mean |Tree SHAP interaction
        value| (output units).
    """

    feature: str
    values: np.ndarray
    shap_values: np.ndarray
    rows: np.ndarray
    n_rows: int
    color_feature: str | None
    color_values: np.ndarray
    candidates: tuple[tuple[str, float], ...]
    pick_share: float
    n_boot: int
    method: str
    units: str
    by: str = "residual"

    def to_dict(self) -> dict:
        return _jsonable(self)
