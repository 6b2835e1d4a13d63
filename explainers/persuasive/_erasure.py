"""Deletion and insertion curves and ERASER's AOPC: the measures that remove features in an order.

Deletion and insertion curves follow Petsiuk, Das, Saenko (2018, "RISE", arXiv 1806.07421) for
tabular data: features change one at a time to a baseline (training median) in explanation order;
their AUCs are also normalised by ``g(x) - g(baseline)`` and flagged when that difference is small.
AOPC comprehensiveness and sufficiency follow DeYoung et al. (2020, "ERASER", ACL, arXiv
1911.03429) over the ranks an explanation defines. docs/methods.md, "Persuasive measures".
"""
from __future__ import annotations

import numpy as np

from ._masking import PredictFn, masked_outputs as _masked_outputs

__all__ = ["SMALL_GAP", "MAX_CURVE_STEPS", "MAX_AOPC_RANKS", "curve_steps", "explanation_order", "importance_order", "deletion_curve", "insertion_curve", "curve_auc",
           "normalised_auc", "aopc"]

SMALL_GAP = 0.25
"""Deletion/insertion AUCs are flagged when ``|g(x) - g(baseline)|`` is below this share of the
standard deviation of ``g`` over the background rows (docs/methods.md, "Persuasive measures")."""


def explanation_order(values, tiebreak=None) -> np.ndarray:
    """Feature indices by descending signed attribution (docs/methods.md, "Persuasive layer").

    Ties (and zeros, e.g. hidden features) go by descending ``tiebreak`` (the full explanation's
    values, when given), then by column index.
    """
    v = np.asarray(values, dtype=float)
    t = np.zeros(v.size) if tiebreak is None else np.asarray(tiebreak, dtype=float)
    return np.lexsort((np.arange(v.size), -t, -v))


def importance_order(values, tiebreak=None) -> np.ndarray:
    """Feature indices by descending ``|attribution|`` (the ERASER rationale order).

    Ties go by descending ``|tiebreak|`` (the full explanation's values, when given), then by index.
    """
    v = np.abs(np.asarray(values, dtype=float))
    t = np.zeros(v.size) if tiebreak is None else np.abs(np.asarray(tiebreak, dtype=float))
    return np.lexsort((np.arange(v.size), -t, -v))


MAX_CURVE_STEPS = 200
"""Most steps of a deletion or insertion curve: past this many features they change in near-equal chunks (as RISE
deletes pixels in steps), so a curve costs ``(steps + 1) x n_features`` cells, not ``n_features²``."""
MAX_AOPC_RANKS = 200
"""Past this many ranks AOPC averages over ERASER's bins, the top 1, 5, 10, 20 and 50 % (DeYoung et al. 2020),
not over every ``k``: its masked rows stay linear in the columns."""
AOPC_BINS = (0.01, 0.05, 0.10, 0.20, 0.50)


def curve_steps(d: int) -> np.ndarray:
    """How many features have changed at each point of a curve over ``d`` features: ``0, 1, ..., d`` up to
    :data:`MAX_CURVE_STEPS` features, else :data:`MAX_CURVE_STEPS` + 1 near-evenly spaced counts from 0 to ``d``."""
    if d <= MAX_CURVE_STEPS:
        return np.arange(d + 1)
    return np.unique(np.round(np.linspace(0, d, MAX_CURVE_STEPS + 1)).astype(int))


def _path(x: np.ndarray, start: np.ndarray, end: np.ndarray, order: np.ndarray) -> np.ndarray:
    steps = curve_steps(order.size)
    grid = np.tile(start, (steps.size, 1))
    for i in range(1, steps.size):
        grid[i:, order[steps[i - 1]:steps[i]]] = end[order[steps[i - 1]:steps[i]]]
    return grid


def deletion_curve(predict_fn: PredictFn, x, order, baseline) -> np.ndarray:
    """Output as features are replaced by the baseline one at a time, in ``order``.

    Parameters
    ----------
    predict_fn : callable
        ndarray (n, n_features) -> ndarray (n,), the explained output ``g``.
    x : ndarray of shape (n_features,)
    order : ndarray of int, shape (n_features,)
        Deletion order, e.g. :func:`explanation_order`.
    baseline : ndarray of shape (n_features,)
        Reference value of each feature (training median by default in the app).

    Returns
    -------
    curve : ndarray of shape (n_features + 1,), or (:data:`MAX_CURVE_STEPS` + 1,) past that many features
        ``curve[0] = g(x)``, ``curve[-1] = g(baseline)``; one ``predict_fn`` call (:func:`curve_steps`).

    References
    ----------
    Petsiuk, Das, Saenko (2018). RISE: Randomized Input Sampling for
    Explanation of Black-box Models. BMVC. arXiv 1806.07421.
    """
    x, b = np.asarray(x, float), np.asarray(baseline, float)
    return np.asarray(predict_fn(_path(x, x, b, np.asarray(order, int))), dtype=float)


def insertion_curve(predict_fn: PredictFn, x, order, baseline) -> np.ndarray:
    """Output as features are restored from the baseline to ``x`` in ``order``; shape (n_features + 1,)."""
    x, b = np.asarray(x, float), np.asarray(baseline, float)
    return np.asarray(predict_fn(_path(x, b, x, np.asarray(order, int))), dtype=float)


def curve_auc(curve) -> float:
    """Trapezoidal area under a curve sampled at fractions ``0, 1/d, ..., 1`` of features changed.

    docs/methods.md, "Tests with exact oracles", T11: deletion ``[6, 3, 1, 0]`` gives 7/3, insertion ``[0, 3, 5, 6]`` gives 11/3.
    """
    c = np.asarray(curve, dtype=float)
    if c.size < 2:
        raise ValueError(f"a curve needs at least 2 points, got {c.size}")
    return float(np.sum((c[1:] + c[:-1]) / 2) / (c.size - 1))


def normalised_auc(curve, start: float, end: float) -> float:
    """AUC of ``(curve - end) / (start - end)``: 1 at ``g(x)``, 0 at ``g(baseline)`` (NaN when they are equal).

    For a deletion curve pass ``start = g(x)``, ``end = g(baseline)``; an insertion curve is
    normalised the same way (so both read as shares of the gap ``g(x) - g(baseline)``, insertion
    rising from 0 and deletion falling from 1). Outside ``[0, 1]`` when the path overshoots.

    Parameters
    ----------
    curve : ndarray of shape (n_features + 1,)
    start, end : float
        ``g(x)`` and ``g(baseline)``.

    Returns
    -------
    float
    """
    gap = float(start) - float(end)
    if gap == 0:
        return float("nan")
    return (curve_auc(curve) - float(end)) / gap


def aopc(predict_fn: PredictFn, x, order, background, n_ranks: int | None = None) -> tuple[float, float]:
    """ERASER AOPC comprehensiveness and sufficiency over rationales of size ``k = 1..n_ranks``.

    Parameters
    ----------
    predict_fn : callable
    x : ndarray of shape (n_features,)
    order : ndarray of int, shape (n_features,) or (n_ranks,)
        Rationale order (most important first), e.g. :func:`importance_order`; only its first
        ``n_ranks`` entries are used.
    background : ndarray of shape (n_background, n_features)
        Values removed features take (outputs averaged over its rows).
    n_ranks : int, optional
        The ranks the explanation defines (a top-k view: the number of features it shows); default
        ``len(order)``. Features beyond them are never ranked, so their column order cannot matter.

    Returns
    -------
    (aopc_comprehensiveness, aopc_sufficiency) : tuple of float
        Means over ``k = 1..n_ranks`` of ``g(x) - g(x without r_{:k})`` and ``g(x) - g(r_{:k} only)``;
        NaN for ``n_ranks = 0``. Past :data:`MAX_AOPC_RANKS` ranks, over ERASER's bins :data:`AOPC_BINS`.
        docs/methods.md, "Tests with exact oracles", T12: 14/3 and 4/3 for ``g = x1 + x2 + x3`` at ``x = (3, 2, 1)``.

    Raises
    ------
    ValueError
        If ``n_ranks`` exceeds the length of ``order``.

    References
    ----------
    DeYoung, Jain, Rajani, Lehman, Xiong, Socher, Wallace (2020). ERASER: A
    Benchmark to Evaluate Rationalized NLP Models. ACL. arXiv 1911.03429.
    """
    x = np.asarray(x, dtype=float)
    order = np.asarray(order, dtype=int)
    d = x.size
    n_ranks = order.size if n_ranks is None else int(n_ranks)
    if not 0 <= n_ranks <= order.size:
        raise ValueError(f"n_ranks must be between 0 and {order.size} (the ranks given), got {n_ranks}")
    if n_ranks == 0:
        return float("nan"), float("nan")
    sets = [np.arange(d)]
    ks = (range(1, n_ranks + 1) if n_ranks <= MAX_AOPC_RANKS
          else sorted({max(1, int(np.ceil(f * n_ranks))) for f in AOPC_BINS}))
    for k in ks:
        sets += [np.setdiff1d(np.arange(d), order[:k]), order[:k]]
    outs = _masked_outputs(predict_fn, x, sets, background)
    full = float(predict_fn(x[None, :])[0])
    return float(np.mean(full - outs[1::2])), float(np.mean(full - outs[2::2]))
