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
from typing import Iterable, Sequence

import numpy as np

from ..metrics import kendall_tau_b, spearman, top_k_overlap
from ._erasure import (SMALL_GAP, aopc, curve_auc, deletion_curve, explanation_order, importance_order,
                       insertion_curve, normalised_auc)
from ._masking import PredictFn, masked_outputs as _masked_outputs
from ._neighborhood import (INTERPOLATION_MARGIN, Neighborhood, _full_r2, make_neighborhood,  # noqa: F401  (re-exported)
                            nested_r2, restricted_r2)

__all__ = ["PredictFn", "Neighborhood", "explanation_order", "importance_order", "deletion_curve",
           "insertion_curve", "curve_auc", "normalised_auc", "aopc", "make_neighborhood", "restricted_r2", "nested_r2",
           "attribution_fidelity", "attribution_fidelity_many", "CHEAP_MEASURES", "complexity", "NUMBER",
           "SMALL_GAP"]

NUMBER = re.compile(r"[-+]?\d+(?:[.,]\d+)?(?:e-?\d+)?%?")


def _gap_small(gap: float, spread: float, deletion: np.ndarray, insertion: np.ndarray) -> bool:
    """Whether ``g(x) - g(baseline)`` is too small to normalise the curves by (see ``curve_gap_small``)."""
    travel = max(float(np.ptp(deletion)), float(np.ptp(insertion)))
    return bool(abs(gap) < SMALL_GAP * spread if spread > 0 else gap == 0) or abs(gap) < SMALL_GAP * travel


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
