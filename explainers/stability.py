"""Stability of a local explanation's ranks over reruns (background resamples, seeds).

An attribution method that samples (a SHAP background, LIME's neighborhoods, permutation orderings)
gives a different vector on every rerun. This module reruns one row's explanation ``R`` times and
reports how much of its *ranking* survives: the mean pairwise top-k overlap and Jaccard@k, the mean
pairwise Spearman ρ and Kendall τ-b of ``|value|`` (all from :func:`explainers.metrics.compare_ranks`,
the one home of rank metrics), and for every feature how often it is in the top k, with the spread
of its rank and value. In the spirit of the robustness metrics of Quantus (Hedström et al. 2023,
"Quantus: An Explainable AI Toolkit for Responsible Evaluation of Neural Network Explanations",
JMLR 24(34)) and shapash's stability metrics (consistency of contributions), but over reruns of
the same method on the same row rather than over perturbed inputs (docs/methods.md, "Rank stability").

Pure computation: numpy in, a frozen dataclass out.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from itertools import combinations
from typing import Callable, Sequence

import numpy as np

from .metrics import compare_ranks, default_k, top_k
from .types import Explanation

__all__ = ["RankStability", "rank_stability", "rerun_stability", "STABLE_OVERLAP"]

STABLE_OVERLAP = 0.8
"""Mean pairwise top-k overlap below which the top-k set is called unstable (on average more than
one feature in five of the top k changes between two reruns)."""


@dataclass(frozen=True)
class RankStability:
    """How stable one row's attribution ranks are over ``n_reruns`` reruns.

    Parameters
    ----------
    method : str
        What was rerun, e.g. ``"shap"`` or ``"lime"``.
    varied : str
        What changed between reruns, for display (e.g. "background sample seed 0..9").
    feature_names : tuple of str, length n_features
    k : int
        Top-k size (clipped to n_features).
    seeds : tuple of int, length n_reruns
    values : ndarray of shape (n_reruns, n_features)
        Every rerun's attributions, in the explanation's units.
    topk_overlap, topk_overlap_min : float in [0, 1]
        Mean and smallest pairwise ``|Top_k(a) ∩ Top_k(b)| / k`` over the ``R(R-1)/2`` pairs.
    jaccard : float in [0, 1]
        Mean pairwise Jaccard@k.
    spearman, kendall_tau_b : float in [-1, 1]
        Mean pairwise rank correlation of ``|value|`` over the pairs where it is defined
        (``nan`` if none is: every rerun constant).
    topk_frequency : ndarray of shape (n_features,)
        Share of reruns in which each feature is in the top k.
    rank_min, rank_max : ndarray of int, shape (n_features,)
        Best and worst rank (1 = largest ``|value|``, ties by lower index) over the reruns.
    value_mean, value_sd : ndarray of shape (n_features,)
        Mean and sample standard deviation (``ddof=1``) of each feature's value over the reruns.
    modal_set_share : float in [0, 1]
        Share of reruns whose top-k set is the most common one.
    """

    method: str
    varied: str
    feature_names: tuple[str, ...]
    k: int
    seeds: tuple[int, ...]
    values: np.ndarray
    topk_overlap: float
    topk_overlap_min: float
    jaccard: float
    spearman: float
    kendall_tau_b: float
    topk_frequency: np.ndarray
    rank_min: np.ndarray
    rank_max: np.ndarray
    value_mean: np.ndarray
    value_sd: np.ndarray
    modal_set_share: float

    @property
    def n_reruns(self) -> int:
        return len(self.seeds)

    @property
    def identical_sets(self) -> bool:
        """Whether every rerun has the same top-k set."""
        return self.modal_set_share == 1.0

    @property
    def stable(self) -> bool:
        """Mean pairwise top-k overlap at least :data:`STABLE_OVERLAP`."""
        return self.topk_overlap >= STABLE_OVERLAP

    @property
    def moving(self) -> tuple[int, ...]:
        """Features in the top k in some reruns but not all, most frequent first (ties by index)."""
        f = self.topk_frequency
        idx = np.flatnonzero((f > 0) & (f < 1))
        return tuple(int(j) for j in idx[np.lexsort((idx, -f[idx]))])

    def verdict(self) -> str:
        """One plain sentence: identical, stable or unstable top-k set, and over what."""
        n, k = self.n_reruns, self.k
        over = f" ({self.varied})" if self.varied else ""
        changed = int(round((1 - self.modal_set_share) * n))
        if self.identical_sets:
            return f"Stable: the top-{k} set is the same in all {n} reruns{over}."
        moving = ", ".join(self.feature_names[j] for j in self.moving[:4])
        head = "Mostly stable" if self.stable else "Unstable"
        return (f"{head}: the top-{k} set differs from the most common one in {changed} of {n} reruns"
                f"{over}; mean overlap {self.topk_overlap:.2f}; moving in and out: {moving}.")


def _nanmean(xs) -> float:
    a = np.asarray(xs, dtype=float)
    return float(np.nanmean(a)) if a.size and not np.isnan(a).all() else float("nan")


def rank_stability(values, k: int | None = None, *, method: str = "", varied: str = "",
                   feature_names: Sequence[str] | None = None, seeds: Sequence[int] | None = None) -> RankStability:
    """Rank stability of ``R`` reruns of one row's attributions.

    Parameters
    ----------
    values : array-like of shape (n_reruns, n_features)
        One attribution vector per rerun; only ``|value|`` is ranked.
    k : int, optional
        Top-k size; default :func:`explainers.metrics.default_k` ``(n_features)``; clipped to n_features.
    method, varied : str
        What was rerun and what changed between reruns (display only).
    feature_names : sequence of str, optional
        Default ``x0, x1, ...``.
    seeds : sequence of int, optional
        The reruns' seeds; default ``0 .. R-1``.

    Returns
    -------
    RankStability

    Raises
    ------
    ValueError
        If there are fewer than 2 reruns or 2 features, a non-finite value, ``k < 1``, or names or
        seeds of the wrong length.
    """
    V = np.asarray(values, dtype=float)
    if V.ndim != 2 or V.shape[0] < 2 or V.shape[1] < 2:
        raise ValueError(f"need values of shape (reruns >= 2, features >= 2), got {V.shape}")
    if not np.isfinite(V).all():
        raise ValueError("attributions contain NaN or infinite values; rank stability needs finite values")
    R, d = V.shape
    k = default_k(d) if k is None else int(k)
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    k = min(k, d)
    names = tuple(str(n) for n in feature_names) if feature_names is not None else tuple(f"x{j}" for j in range(d))
    seeds = tuple(int(s) for s in seeds) if seeds is not None else tuple(range(R))
    if len(names) != d or len(seeds) != R:
        raise ValueError(f"{len(names)} feature names and {len(seeds)} seeds for values of shape {V.shape}")
    pairs = [compare_ranks(V[a], V[b], k) for a, b in combinations(range(R), 2)]
    overlaps = [p.top_k_overlap for p in pairs]
    sets = [frozenset(top_k(v, k).tolist()) for v in V]
    freq = np.zeros(d)
    for s in sets:
        freq[list(s)] += 1
    ranks = np.empty((R, d), dtype=int)
    for i, v in enumerate(V):
        ranks[i, top_k(v, d)] = np.arange(1, d + 1)
    return RankStability(
        method=method, varied=varied, feature_names=names, k=k, seeds=seeds, values=V,
        topk_overlap=float(np.mean(overlaps)), topk_overlap_min=float(np.min(overlaps)),
        jaccard=float(np.mean([p.jaccard_at_k for p in pairs])),
        spearman=_nanmean([p.spearman for p in pairs]), kendall_tau_b=_nanmean([p.kendall_tau_b for p in pairs]),
        topk_frequency=freq / R, rank_min=ranks.min(axis=0), rank_max=ranks.max(axis=0),
        value_mean=V.mean(axis=0), value_sd=V.std(axis=0, ddof=1),
        modal_set_share=Counter(sets).most_common(1)[0][1] / R,
    )


def rerun_stability(explain: Callable[[int], Explanation | np.ndarray], seeds: Sequence[int], k: int | None = None, *,
                    method: str = "", varied: str = "",
                    progress: Callable[[int, int], None] | None = None) -> RankStability:
    """Rerun ``explain(seed)`` for every seed and report the stability of the ranks (:func:`rank_stability`).

    Parameters
    ----------
    explain : callable
        ``seed -> Explanation`` (or an attribution vector of shape (n_features,)) of one fixed row.
        For SHAP, a new explainer whose background sample is drawn with ``seed``; for LIME, seeds
        whose neighborhoods do not overlap (:meth:`explainers.LimeExplainer.independent_seeds`).
    seeds : sequence of int
        At least 2.
    k : int, optional
    method, varied : str
    progress : callable, optional
        Called as ``progress(done, total)`` after each rerun.

    Returns
    -------
    RankStability

    Raises
    ------
    ValueError
        If fewer than 2 seeds, or the reruns differ in features.
    """
    seeds = [int(s) for s in seeds]
    if len(seeds) < 2:
        raise ValueError(f"rank stability needs at least 2 reruns, got {len(seeds)}")
    rows, names = [], None
    for i, s in enumerate(seeds):
        out = explain(s)
        if isinstance(out, Explanation):
            if names is not None and out.feature_names != names:
                raise ValueError("reruns explain different features")
            names, out = out.feature_names, out.values
        rows.append(np.asarray(out, dtype=float).ravel())
        if progress is not None:
            progress(i + 1, len(seeds))
    return rank_stability(np.array(rows), k, method=method, varied=varied, feature_names=names, seeds=seeds)
