"""SHAP dependence of one feature, coloured by the feature it interacts with most.

Which feature to colour by. For a scikit-learn tree model of a checked family (:data:`TREE_FAMILIES`, on numeric
columns) Lundberg et al. (2020)'s way: the largest mean |Tree SHAP interaction value| (shap's
``TreeExplainer.shap_interaction_values``), which equals a brute-force Shapley interaction index of the
*path-dependent* game to 1e-15 for those families (``tests/explainers/test_dependence.py``). The values drawn are
Candor's *interventional* Tree SHAP, a different game, so the interaction values only choose the colour; they are
not drawn. For every other model (a Pipeline, boosting libraries, model-agnostic SHAP) a stated heuristic in the
spirit of ``shap.utils.approximate_interactions``: the feature whose value best explains what is left of the
feature's SHAP value once its own value is accounted for (:func:`interaction_strength`).
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from .types._dependence import ShapDependence

__all__ = ["interaction_strength", "shap_dependence", "tree_interactions", "TREE_FAMILIES"]

TREE_FAMILIES = ("DecisionTreeRegressor", "DecisionTreeClassifier", "RandomForestRegressor", "RandomForestClassifier",
                 "GradientBoostingRegressor", "GradientBoostingClassifier")
"""scikit-learn tree families whose shap interaction values were checked against a brute-force Shapley interaction
index (the path-dependent game; a single tree, a forest and a boosted ensemble in the tests)."""
TREE_METHOD = ("colour: the feature with the largest mean |Tree SHAP interaction value| with it over the drawn rows "
               "(shap TreeExplainer, path-dependent; Lundberg et al. 2020), which only chooses the colour")

N_BINS = 10
"""Bins of the feature's own values (quantiles; a categorical feature's levels) within which the residual is read."""
N_BOOT = 50
"""Bootstrap resamples of the rows that say how often the same colour feature is picked."""
METHOD = ("colour: the feature whose value best explains what is left of the SHAP value once the feature's own "
          "effect is removed (a line in its value within each of 10 quantile bins, a level's mean for a categorical "
          "feature): the bias-corrected share of that residual variance, as shap.utils.approximate_interactions "
          "reads it")


def _bins(x: np.ndarray, categorical: bool, n_bins: int = N_BINS) -> np.ndarray:
    """Bin index of each value: its level (categorical), else its quantile bin; NaN in a bin of its own."""
    x = np.asarray(x, dtype=float)
    out = np.full(len(x), -1, dtype=int)
    ok = ~np.isnan(x)
    if categorical:
        _, out[ok] = np.unique(x[ok], return_inverse=True)
    elif ok.any():
        edges = np.unique(np.quantile(x[ok], np.linspace(0, 1, n_bins + 1)[1:-1]))
        out[ok] = np.searchsorted(edges, x[ok], side="right")
    out[~ok] = out.max(initial=-1) + 1
    return out


def _strengths(own: np.ndarray, residual: np.ndarray, others: np.ndarray, cat: np.ndarray) -> np.ndarray:
    """Bias-corrected share of ``residual``'s variance that each column of ``others`` explains within ``own``'s
    bins: (SS explained - df x residual mean square) / total SS, floored at 0."""
    total = float(residual @ residual)
    n, d = others.shape
    if total <= 0 or n < 3:
        return np.zeros(d)
    num = np.flatnonzero(~cat)
    Z = others[:, num]
    fill = np.where(np.isfinite(Z).any(axis=0), np.nanmean(np.where(np.isfinite(Z), Z, np.nan), axis=0), 0.0) \
        if len(num) else np.zeros(0)
    Z = np.where(np.isnan(Z), fill, Z)
    codes = {j: np.unique(np.nan_to_num(others[:, j], nan=-1.0), return_inverse=True)[1] for j in np.flatnonzero(cat)}
    explained, dof = np.zeros(d), np.zeros(d)
    for b in np.unique(own):
        at = own == b
        r = residual[at]
        if len(r) < 3:
            continue
        rc = r - r.mean()
        zc = Z[at] - Z[at].mean(axis=0)
        den = np.einsum("ij,ij->j", zc, zc)
        ok = den > 0
        explained[num[ok]] += (zc[:, ok].T @ rc) ** 2 / den[ok]
        dof[num[ok]] += 1
        for j, inv in codes.items():
            sums, counts = np.bincount(inv[at], r), np.bincount(inv[at])
            present = counts > 0
            explained[j] += float(np.sum(sums[present] ** 2 / counts[present]) - r.sum() ** 2 / len(r))
            dof[j] += int(present.sum()) - 1
    mse = np.maximum(total - explained, 0.0) / np.maximum(n - 2 * len(np.unique(own)) - dof, 1.0)
    return np.maximum((explained - dof * mse) / total, 0.0)


def interaction_strength(x: np.ndarray, phi: np.ndarray, others: np.ndarray, *, categorical: bool = False,
                         others_categorical: Sequence[bool] | None = None, n_bins: int = N_BINS) -> np.ndarray:
    """How strongly each other feature interacts with one feature, read from its SHAP values.

    Within bins of the feature's own value ``x``, its SHAP value ``phi`` is what it is because of ``x`` (the main
    effect, removed as each bin's mean) and of the other features it interacts with (the residual). Each other
    feature's strength is the share of that residual's variance its value explains, corrected for the degrees
    of freedom it uses (a feature unrelated to the residual scores about 0, not its chance fit). For a numeric
    feature the main effect removed is a line in ``x`` within each bin, so that a near copy of the feature (which
    only tracks ``x`` within the bin) is not mistaken for an interaction.

    Parameters
    ----------
    x : ndarray of shape (n,)
        The feature's values.
    phi : ndarray of shape (n,)
        Its SHAP values.
    others : ndarray of shape (n, d)
        The other features' values.
    categorical : bool, default=False
        Bin ``x`` by level rather than by quantile.
    others_categorical : sequence of bool, length d, optional
        Which other features are categorical (read by level; the others linearly within each bin).
    n_bins : int, default=:data:`N_BINS`

    Returns
    -------
    ndarray of shape (d,)
        In [0, 1].
    """
    x, phi, others = np.asarray(x, float), np.asarray(phi, float), np.asarray(others, float).reshape(len(x), -1)
    cat = np.zeros(others.shape[1], bool) if others_categorical is None else np.asarray(others_categorical, bool)
    own = _bins(x, categorical, n_bins)
    return _strengths(own, _main_effect_removed(x, phi, own, categorical), others, cat)


def _main_effect_removed(x: np.ndarray, phi: np.ndarray, own: np.ndarray, categorical: bool) -> np.ndarray:
    """``phi`` less its main effect: each bin's mean (a level), or each bin's least-squares line in ``x``."""
    residual = np.empty_like(phi)
    for b in np.unique(own):
        at = own == b
        r = phi[at] - phi[at].mean()
        xc = x[at] - np.mean(x[at]) if not categorical and np.isfinite(x[at]).all() else None
        if xc is not None and float(xc @ xc) > 0:
            r = r - xc * float(xc @ r) / float(xc @ xc)
        residual[at] = r
    return residual


def tree_interactions(model, X: np.ndarray, target_index: int = -1) -> np.ndarray | None:
    """Tree SHAP interaction values of ``X``'s rows, shape (n, d, d), or None when ``model`` is not of a checked
    family (:data:`TREE_FAMILIES`).

    Parameters
    ----------
    model : fitted scikit-learn tree model, taking ``X`` as it is
    X : ndarray of shape (n, d)
    target_index : int, default=-1
        The class whose interaction values a forest classifier gives (a boosted classifier has one margin).
    """
    if type(model).__name__ not in TREE_FAMILIES:
        return None
    import shap

    iv = shap.TreeExplainer(model).shap_interaction_values(np.asarray(X, dtype=float))
    iv = np.asarray(iv[target_index] if isinstance(iv, list) else iv, dtype=float)
    return iv[..., target_index] if iv.ndim == 4 else iv


def _tree_pick(j: int, rest: list, inter: np.ndarray, n_boot: int, seed: int):
    """Strength of each other feature (mean |interaction value| with feature ``j``) and the bootstrap share."""
    a = np.abs(inter[:, j, :][:, rest])
    score = a.mean(axis=0)
    pick, rng = int(np.argmax(score)), np.random.default_rng(seed)
    same = sum(int(np.argmax(a[rng.integers(0, len(a), len(a))].mean(axis=0)) == pick) for _ in range(n_boot))
    return score, pick, same


def shap_dependence(feature: str, feature_names: Sequence[str], values: np.ndarray, shap_values: np.ndarray,
                    rows: np.ndarray, *, categorical: Sequence[bool] = (), units: str = "output",
                    n_boot: int = N_BOOT, seed: int = 0, interactions: np.ndarray | None = None) -> ShapDependence:
    """The SHAP dependence of ``feature`` over the drawn ``rows``, coloured by its strongest interaction.

    Parameters
    ----------
    feature : str
    feature_names : sequence of str, length d
    values : ndarray of shape (n, d)
        Every explained row's feature values (the model's table: category codes).
    shap_values : ndarray of shape (n, d)
        Their SHAP values.
    rows : ndarray of int, shape (m,)
        The rows drawn (and over which the colour feature is chosen).
    categorical : sequence of bool, length d, optional
    units : str, default="output"
    n_boot : int, default=:data:`N_BOOT`
        Bootstrap resamples of the drawn rows for :attr:`ShapDependence.pick_share`.
    seed : int, default=0
    interactions : ndarray of shape (m, d, d), optional
        Tree SHAP interaction values of the drawn rows (:func:`tree_interactions`): the colour is then the largest
        mean |interaction value|, and the candidates' strengths are those means (output units).

    Raises
    ------
    ValueError
        If ``feature`` is not among ``feature_names``.
    """
    names = list(map(str, feature_names))
    if feature not in names:
        raise ValueError(f"no feature {feature!r}; the explained features are {', '.join(names[:8])}"
                         + (" ..." if len(names) > 8 else ""))
    j, d = names.index(feature), len(names)
    cat = np.zeros(d, bool) if len(categorical) == 0 else np.asarray(categorical, bool)
    rows = np.asarray(rows, dtype=int)
    X = np.asarray(values[rows], dtype=float)
    x, phi = X[:, j], np.asarray(shap_values[rows], dtype=float)[:, j]
    rest = [k for k in range(d) if k != j]
    if not rest:
        return ShapDependence(feature, x, phi, rows, len(values), None, np.empty(0), (), 1.0, 0, METHOD, units)
    if interactions is not None:
        score, pick, same = _tree_pick(j, rest, np.asarray(interactions, dtype=float), n_boot, seed)
        method, by = TREE_METHOD, "interaction"
    else:
        score = interaction_strength(x, phi, X[:, rest], categorical=bool(cat[j]), others_categorical=cat[rest])
        pick, method, by = int(np.argmax(score)), METHOD, "residual"
        rng, same = np.random.default_rng(seed), 0
        for _ in range(n_boot):
            at = rng.integers(0, len(x), len(x))
            s = interaction_strength(x[at], phi[at], X[at][:, rest], categorical=bool(cat[j]),
                                     others_categorical=cat[rest])
            same += int(np.argmax(s) == pick)
    order = np.argsort(-score, kind="stable")[:5]
    best = names[rest[pick]]
    return ShapDependence(feature, x, phi, rows, len(values), best, X[:, rest[pick]],
                          tuple((names[rest[k]], float(score[k])) for k in order), same / n_boot if n_boot else 1.0,
                          int(n_boot), method, units, by)
