"""Fidelity measures and complexity proxies of the persuasive layer (docs/methods.md, "Persuasive layer" and "Persuasive measures").

Deletion/insertion curves and AOPC live in :mod:`._erasure` (re-exported here). ERASER
comprehensiveness and sufficiency follow DeYoung et al. (2020, arXiv 1911.03429); removed
features take each background row's value and outputs are averaged. AOPC is taken over the
``k = 1..|S|`` ranks the shown view defines (``k = 1..d`` for a full explanation); where a view
leaves an order open (ties, and hidden features on the curves' full path), the full explanation
decides, then the column index. Complexity proxies count
items, predicates, words, numbers and cognitive chunks (Lage et al. 2019,
arXiv 1902.00006).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable, Sequence

import numpy as np

from .._lime_fits import one_blas_thread
from ..metrics import kendall_tau_b, spearman, top_k_overlap
from ._erasure import (SMALL_GAP, aopc, curve_auc, deletion_curve, explanation_order, importance_order,
                       insertion_curve, normalised_auc)
from ._masking import PredictFn, masked_outputs as _masked_outputs

__all__ = ["PredictFn", "Neighborhood", "explanation_order", "importance_order", "deletion_curve",
           "insertion_curve", "curve_auc", "normalised_auc", "aopc", "make_neighborhood", "restricted_r2", "nested_r2",
           "attribution_fidelity", "attribution_fidelity_many", "CHEAP_MEASURES", "complexity", "NUMBER",
           "SMALL_GAP"]

NUMBER = re.compile(r"[-+]?\d+(?:[.,]\d+)?(?:e-?\d+)?%?")


@dataclass(frozen=True)
class Neighborhood:
    """A seeded perturbation sample around one row, for restricted local R².

    Parameters
    ----------
    Z : ndarray of shape (n_samples, n_features)
        Standardised offsets from the row (interpretable representation).
    y : ndarray of shape (n_samples,)
        Explained output at each perturbed row.
    w : ndarray of shape (n_samples,)
        LIME's exponential kernel weights ``sqrt(exp(-D^2 / kernel_width^2))``.
    """

    Z: np.ndarray
    y: np.ndarray
    w: np.ndarray



def _gap_small(gap: float, spread: float, deletion: np.ndarray, insertion: np.ndarray) -> bool:
    """Whether ``g(x) - g(baseline)`` is too small to normalise the curves by (see ``curve_gap_small``)."""
    travel = max(float(np.ptp(deletion)), float(np.ptp(insertion)))
    return bool(abs(gap) < SMALL_GAP * spread if spread > 0 else gap == 0) or abs(gap) < SMALL_GAP * travel

def make_neighborhood(predict_fn: PredictFn, x, scale, *, num_samples: int = 1000, seed: int = 0,
                      kernel_width: float | None = None, categorical=None) -> Neighborhood:
    """Gaussian neighborhood ``x + z * scale`` (``z ~ N(0, I)``), weighted as LIME does.

    Parameters
    ----------
    x, scale : ndarray of shape (n_features,)
        The row and per-feature standard deviations (training data); zero or
        missing scales are set to 1.
    num_samples : int, default=1000
    seed : int, default=0
    kernel_width : float, default=0.75 * sqrt(n_features)
    categorical : mapping of int to ndarray, optional
        For categorical columns (codes), the training values to draw from; their
        column of ``Z`` is 1 where the draw differs from ``x`` (LIME's binary
        representation), 0 where it is the same.
    """
    x = np.asarray(x, float)
    scale = np.asarray(scale, float)
    scale = np.where(np.isfinite(scale) & (scale > 0), scale, 1.0)
    rng = np.random.default_rng(seed)
    Z = rng.normal(size=(num_samples, x.size))
    Z[0] = 0.0
    samples = x + Z * scale
    for j, pool in (categorical or {}).items():
        draw = rng.choice(np.asarray(pool, float), size=num_samples)
        draw[0] = x[j]
        samples[:, j] = draw
        Z[:, j] = (draw != x[j]).astype(float)
    width = kernel_width or 0.75 * np.sqrt(x.size)
    dist = np.sqrt((Z ** 2).sum(axis=1))
    return Neighborhood(Z, np.asarray(predict_fn(samples), float), np.sqrt(np.exp(-dist ** 2 / width ** 2)))


def restricted_r2(nb: Neighborhood, features) -> float:
    """Weighted R² of a linear fit (with intercept) of ``nb.y`` on the columns ``features`` of ``nb.Z``.

    Solved as weighted least squares (minimum norm, so collinear columns are
    fine; memory linear in the columns). 0 for an empty set; the full-feature value minus this is
    ΔR² of docs/methods.md, "Persuasive measures".
    """
    features = np.asarray(list(features), dtype=int)
    d = nb.Z.shape[1]
    if features.size == d and np.array_equal(np.unique(features), np.arange(d)):
        return _full_r2(nb)  # every column (a parent explanation shows them all): one fit per neighbourhood
    return _fit_r2(nb, features)


def _fit_r2(nb: Neighborhood, features: np.ndarray) -> float:
    """:func:`restricted_r2` computed."""
    w = nb.w
    mean = np.average(nb.y, weights=w)
    tss = float(np.sum(w * (nb.y - mean) ** 2))
    if features.size == 0 or tss == 0:
        return 0.0
    A = np.column_stack([np.ones(len(nb.y)), nb.Z[:, features]])
    root = np.sqrt(w)
    # least squares on the weighted rows (minimum-norm, so collinear columns are fine): memory n x p, never the
    # p x p normal equations (a 10,001 x 10,001 matrix and its SVD on a 10,000-column table); on one BLAS thread:
    # two threads' spinning made one 500 x 31 fit 30-120 ms instead of 2-3 on a loaded 2-core machine
    with one_blas_thread():
        coef = np.linalg.lstsq(A * root[:, None], nb.y * root, rcond=None)[0]
    rss = float(np.sum(w * (nb.y - A @ coef) ** 2))
    return 1.0 - rss / tss


def _full_r2(nb: Neighborhood) -> float:
    """:func:`restricted_r2` on every column, computed once per neighborhood (the same for every view of the row;
    on 10,000 columns one fit takes seconds)."""
    if "_r2_full" not in nb.__dict__:
        object.__setattr__(nb, "_r2_full", _fit_r2(nb, np.arange(nb.Z.shape[1])))
    return nb.__dict__["_r2_full"]


def nested_r2(nb: Neighborhood, sets) -> list[float] | None:
    """:func:`restricted_r2` of each of ``sets`` when each holds the one before it (a top-k curve's), from one QR.

    The weighted design's columns are taken in the order the sets add them, after the intercept, and factored once
    (Householder QR, no pivoting): the least-squares fit on the first ``p`` columns is the projection on the first
    ``p`` columns of ``Q``, so its residual sum of squares is ``‖r‖² + Σ_{i ≥ p} (Qᵀy)_i²`` (``r`` the residual of
    every column), a sum of squares with no cancellation. The same R² as :func:`restricted_r2` (to rounding:
    ``tests/explainers/test_persuasive_measures.py`` checks 1e-12 on real rows) for one factorisation instead of one
    least-squares fit a set: on the bundled sample a curve's 31 fits were a tenth of a Persuasive what-if edit.

    Returns None when the sets are not nested or a column adds nothing new to those before it (collinear, or
    constant within the neighbourhood): :func:`restricted_r2` then fits each set as before (minimum norm).
    """
    d = nb.Z.shape[1]
    sets = [np.asarray(sorted(set(int(j) for j in S)), dtype=int) for S in sets]
    order, seen, sizes = [], set(), []
    for S in sets:
        if not seen <= set(S.tolist()):
            return None
        order += [j for j in S.tolist() if j not in seen]
        seen |= set(S.tolist())
        sizes.append(len(seen))
    w = nb.w
    mean = np.average(nb.y, weights=w)
    tss = float(np.sum(w * (nb.y - mean) ** 2))
    if tss == 0 or len(order) + 1 > len(nb.y):
        return None
    root = np.sqrt(w)
    A = np.column_stack([root, nb.Z[:, order] * root[:, None]])
    yw = nb.y * root
    with one_blas_thread():
        q, r = np.linalg.qr(A)
    diag = np.abs(np.diag(r))
    if diag.size and not np.all(diag > 1e-9 * max(float(diag.max()), 1e-300) * len(nb.y)):
        return None
    c = q.T @ yw
    tail = float(np.sum((yw - q @ c) ** 2))  # what no column explains
    after = np.concatenate([np.cumsum((c ** 2)[::-1])[::-1], [0.0]])  # after[p] = Σ_{i ≥ p} c_i²
    out = []
    for S, size in zip(sets, sizes):
        if S.size == 0:
            out.append(0.0)
        elif S.size == d:
            out.append(_full_r2(nb))  # every column: the one fit every view of the row shares
        else:
            out.append(1.0 - (tail + float(after[1 + size])) / tss)
    return out


CHEAP_MEASURES = ("mass_retained", "additivity_gap", "spearman", "kendall_tau_b", "top_k_overlap", "sufficiency",
                  "comprehensiveness", "r2_restricted")
"""What :func:`attribution_fidelity_many` can compute (everything of ``full=False`` but ``r2_full``)."""


def _rank_measures(phi: np.ndarray, shown: np.ndarray, S: np.ndarray, prediction: float, base_value: float,
                   want) -> dict:
    """The model-free measures of one shown vector (only the keys in ``want``), in the documented order."""
    d = phi.size
    total = float(np.abs(phi).sum())
    k = max(S.size, 1)
    calc = {
        "mass_retained": lambda: float(np.abs(phi[S]).sum()) / total if total else 1.0,
        "additivity_gap": lambda: (float(abs(prediction - base_value - shown.sum())) if np.isfinite(shown).all()
                                   else float("nan")),
        "spearman": lambda: spearman(np.abs(phi), np.abs(shown)) if d > 1 else float("nan"),
        "kendall_tau_b": lambda: kendall_tau_b(np.abs(phi), np.abs(shown)) if d > 1 else float("nan"),
        "top_k_overlap": lambda: top_k_overlap(np.abs(phi), np.abs(shown), k) if d > 1 and S.size else float("nan"),
    }
    return {key: f() for key, f in calc.items() if key in want}


def attribution_fidelity_many(parent_values, shown_values, shown_features, *, prediction: float, base_value: float,
                              predict_fn: PredictFn, x, background, neighborhood: Neighborhood | None = None,
                              measures=CHEAP_MEASURES) -> list[dict]:
    """The cheap measures (docs/methods.md, "Persuasive measures") of many displayed vectors of one parent, with one call of ``predict_fn``.

    What a sweep (e.g. every k of a top-k tradeoff curve) needs: the masked
    inputs of every vector are stacked into a single batch
    (:func:`~explainers.persuasive.masked_outputs`). Each value is
    computed by the same code as :func:`attribution_fidelity` (which calls this
    function for its one vector), so the two agree exactly wherever
    ``predict_fn`` scores each row independently of the rest of its batch
    (tree ensembles do; BLAS-backed models agree to rounding).

    Parameters
    ----------
    parent_values : ndarray of shape (n_features,)
        The descriptive attributions φ (output units, predicted class).
    shown_values : sequence of ndarray of shape (n_features,)
        One displayed vector per simplification.
    shown_features : sequence of sequence of int
        The rationale S of each simplification (same length as ``shown_values``).
    prediction, base_value, predict_fn, x, background, neighborhood
        As in :func:`attribution_fidelity`.
    measures : iterable of str, default=CHEAP_MEASURES
        Keys to compute (a subset of :data:`CHEAP_MEASURES`); the model is
        called only if ``sufficiency`` or ``comprehensiveness`` is asked for,
        ``r2_restricted`` only with a ``neighborhood``.

    Returns
    -------
    list of dict of str to float
        One dict per shown vector, keys in :data:`CHEAP_MEASURES` order.

    Raises
    ------
    ValueError
        On an unknown measure or a length mismatch.

    References
    ----------
    DeYoung et al. (2020). ERASER. ACL. arXiv 1911.03429 (sufficiency,
    comprehensiveness).
    """
    want = set(measures)
    unknown = sorted(want - set(CHEAP_MEASURES))
    if unknown:
        raise ValueError(f"unknown measures {unknown}; expected some of {CHEAP_MEASURES}")
    if len(shown_values) != len(shown_features):
        raise ValueError(f"{len(shown_values)} shown vectors but {len(shown_features)} feature sets")
    phi, x = np.asarray(parent_values, float), np.asarray(x, float)
    d = phi.size
    sets = [np.asarray(sorted(set(int(j) for j in f)), dtype=int) for f in shown_features]
    outs = None
    if want & {"sufficiency", "comprehensiveness"}:
        keep = [np.arange(d)]
        for S in sets:
            keep += [S, np.setdiff1d(np.arange(d), S)]
        outs = _masked_outputs(predict_fn, x, keep, background)
    r2s = None  # a sweep's nested sets (every k of a curve): one factorisation for all of them
    if neighborhood is not None and "r2_restricted" in want and len(sets) > 1:
        r2s = nested_r2(neighborhood, sets)
    results = []
    for i, (shown, S) in enumerate(zip(shown_values, sets)):
        out = _rank_measures(phi, np.asarray(shown, float), S, prediction, base_value, want)
        if "sufficiency" in want:
            out["sufficiency"] = float(outs[0] - outs[1 + 2 * i])
        if "comprehensiveness" in want:
            out["comprehensiveness"] = float(outs[0] - outs[2 + 2 * i]) if S.size else 0.0
        if neighborhood is not None and "r2_restricted" in want:
            out["r2_restricted"] = r2s[i] if r2s is not None else restricted_r2(neighborhood, S)
        results.append(out)
    return results


def attribution_fidelity(parent_values, shown_values, shown_features, *, prediction: float, base_value: float,
                         predict_fn: PredictFn, x, background, baseline, neighborhood: Neighborhood | None = None,
                         full: bool = True) -> dict:
    """Every fidelity measure (docs/methods.md, "Persuasive measures") of a displayed attribution vector against its descriptive parent.

    ERASER measures and the deletion/insertion curves are defined for the
    predicted class: pass that class's output and attributions (for a binary
    model predicting the negative class, ``1 - P(pos)`` and ``-φ``; the
    operators in :mod:`explainers.persuasive` do this).

    Parameters
    ----------
    parent_values : ndarray of shape (n_features,)
        The descriptive attributions φ (output units).
    shown_values : ndarray of shape (n_features,)
        What the reader is shown, per feature (0 for hidden features; a merged
        group's value split evenly over its members).
    shown_features : sequence of int
        Features the reader sees (the rationale S).
    prediction, base_value : float
        ``g(x)`` and ``φ_0`` of the parent.
    predict_fn, x, background, baseline
        As in :func:`aopc` and :func:`deletion_curve`.
    neighborhood : Neighborhood, optional
        If given, ``r2_restricted`` (features S) and ``r2_full`` are reported.
    full : bool, default=True
        ``False`` skips AOPC and the curves (for sweeps over many rows).

    Returns
    -------
    dict of str to float
        ``mass_retained``, ``additivity_gap``, ``spearman``, ``kendall_tau_b``,
        ``top_k_overlap``, ``sufficiency``, ``comprehensiveness`` and, with
        ``full``, ``aopc_comprehensiveness``, ``aopc_sufficiency`` (over the
        ``k = 1..|S|`` ranks the view defines, ties by ``|φ|``; NaN for an empty S),
        ``deletion_auc``, ``insertion_auc`` (raw, and ``_norm``: the AUC of
        ``(curve - g(baseline)) / (g(x) - g(baseline))``), ``curve_gap``
        (``g(x) - g(baseline)``), ``curve_gap_small`` (1.0 when ``|curve_gap|`` is below
        :data:`SMALL_GAP` times the standard deviation of ``g`` over the background rows, or
        below :data:`SMALL_GAP` times the range either curve travels: the normalised AUCs then
        divide by almost nothing, or by less than the curves' own swings),
        and ``r2_restricted``/``r2_full``. NaN where a measure is undefined.
        The curves' path puts the features in the shown order, hidden ones (value 0) ordered
        by ``φ``, then by column index.
    """
    shown = np.asarray(shown_values, float)
    phi = np.asarray(parent_values, float)
    x = np.asarray(x, float)
    out = attribution_fidelity_many(parent_values, [shown], [shown_features], prediction=prediction,
                                    base_value=base_value, predict_fn=predict_fn, x=x, background=background,
                                    measures=[m for m in CHEAP_MEASURES if m != "r2_restricted"])[0]
    if full:
        S = np.asarray(sorted(set(int(j) for j in shown_features)), dtype=int)
        ranked = S[importance_order(shown[S], phi[S])]  # the view's ranks; ties by |φ|, then index
        out["aopc_comprehensiveness"], out["aopc_sufficiency"] = aopc(predict_fn, x, ranked, background)
        path = explanation_order(shown, phi)
        dele = deletion_curve(predict_fn, x, path, baseline)
        ins = insertion_curve(predict_fn, x, path, baseline)
        g_x, g_b = float(dele[0]), float(dele[-1])
        spread = float(np.std(np.asarray(predict_fn(np.asarray(background, float)), float)))
        gap = g_x - g_b
        out.update(deletion_auc=curve_auc(dele), insertion_auc=curve_auc(ins),
                   deletion_auc_norm=normalised_auc(dele, g_x, g_b), insertion_auc_norm=normalised_auc(ins, g_x, g_b),
                   curve_gap=gap, curve_gap_small=float(_gap_small(gap, spread, dele, ins)))
    if neighborhood is not None:
        out["r2_restricted"] = restricted_r2(neighborhood, sorted(set(int(j) for j in shown_features)))
        out["r2_full"] = _full_r2(neighborhood)
    return out


def complexity(lines: Sequence[str], chunks: Iterable[str], *, n_items: int, n_predicates: int = 0) -> dict:
    """The complexity proxies (docs/methods.md, "Persuasive measures") of a rendered explanation.

    Parameters
    ----------
    lines : sequence of str
        Rendered text and labels the reader sees (titles excluded).
    chunks : iterable of str
        Concepts named (feature names, group names, neighborhoods); repeats count once.
    n_items : int
        Displayed entries (a merged group counts 1; rules: displayed rules).
    n_predicates : int, default=0

    Returns
    -------
    dict with ``n_items``, ``n_predicates``, ``n_words``, ``n_numbers``, ``n_chunks`` (all int).

    References
    ----------
    Lage, Chen, He, Narayanan, Kim, Gershman, Doshi-Velez (2019). An
    Evaluation of the Human-Interpretability of Explanation. arXiv 1902.00006
    (new cognitive chunks versus repeated terms).
    """
    text = " ".join(lines)
    return {"n_items": int(n_items), "n_predicates": int(n_predicates), "n_words": len(text.split()),
            "n_numbers": len(NUMBER.findall(text)), "n_chunks": len(set(chunks))}
