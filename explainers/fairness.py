"""Group fairness rates over a sensitive feature: fairlearn's ``MetricFrame`` with intervals.

For each group of a sensitive feature (its levels; a number column with few values, each value), the
selection rate ``P(ŷ = 1)``, the true positive rate ``P(ŷ = 1 | y = 1)`` and the false positive rate
``P(ŷ = 1 | y = 0)`` come from fairlearn's ``MetricFrame`` (Bird et al. 2020), each with its Wilson (1927)
interval; the largest gap between groups (``difference``) and the smallest ratio (``ratio``) come from the
same frame, each with a 95 % interval from seeded draws of every group's rate from its Jeffreys posterior,
Beta(k + ½, n − k + ½) (Brown, Cai & DasGupta 2001), the groups drawn independently: the percentiles of the
drawn gaps. A plug-in bootstrap (resampling rows) cannot see the uncertainty of a rate observed at 0 or 1: a
group of 4 rows with none selected resamples to 0 every time, so a gap beside it looked certain (planted:
its interval covered the true gap in about half of the samples; the Jeffreys draws in 95 %). The
largest-minus-smallest gap is biased upward by the draws, so where groups do not differ its interval can lie
wholly above the estimate: an interval reaching near 0 means no resolved gap.

References
----------
.. [1] Bird, S., Dudík, M., Edgar, R., Horn, B., Lutz, R., Milan, V., Sameki, M., Wallach, H., Walker, K.
   (2020). Fairlearn: A toolkit for assessing and improving fairness in AI. Microsoft Tech. Rep. MSR-TR-2020-32.
.. [2] Wilson, E. B. (1927). Probable inference, the law of succession, and statistical inference. JASA 22.
.. [3] Brown, L. D., Cai, T. T., DasGupta, A. (2001). Interval estimation for a binomial proportion.
   Statistical Science 16(2), 101-133.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .intervals import wilson

__all__ = ["RATES", "GroupRate", "FairnessReport", "fairness_report", "MAX_GROUPS"]

RATES = ("selection_rate", "true_positive_rate", "false_positive_rate")
"""The rates reported per group, in fairlearn's names."""
MAX_GROUPS = 20
"""More groups than this (a number column with many values) is refused: bin the column first."""
N_DRAWS = 2000
"""Draws of every group's rates from their Jeffreys posteriors for the intervals of the gaps between groups."""


@dataclass(frozen=True)
class GroupRate:
    """One rate of one group: ``k`` of ``n`` rows, the rate and its Wilson 95 % interval."""

    group: str
    k: int
    n: int
    rate: float
    low: float
    high: float


@dataclass(frozen=True)
class FairnessReport:
    """Each rate per group of one sensitive feature, and its gap between groups.

    Parameters
    ----------
    feature : str
    groups : tuple of str
    rates : dict of str to tuple of GroupRate
        Per rate in :data:`RATES`, one entry per group (in ``groups`` order).
    difference, ratio : dict of str to (value, low, high)
        fairlearn's ``MetricFrame.difference()`` (largest minus smallest group rate) and ``ratio()``
        (smallest over largest), each with its 95 % interval (Jeffreys posterior draws).
    n_rows : int
    """

    feature: str
    groups: tuple[str, ...]
    rates: dict
    difference: dict
    ratio: dict
    n_rows: int


def _counts(y: np.ndarray, p: np.ndarray, g: np.ndarray, n_groups: int) -> np.ndarray:
    """Per group: [selected, rows, true positives, positives, false positives, negatives] (``y``, ``p`` bool)."""
    def count(w=None):
        return np.bincount(g, weights=w, minlength=n_groups)[:n_groups]
    rows, pos = count(), count(y.astype(float))
    return np.stack([count(p.astype(float)), rows, count((p & y).astype(float)), pos,
                     count((p & ~y).astype(float)), rows - pos], axis=1)


def _gap_intervals(c: np.ndarray, n_draws: int, seed: int) -> np.ndarray:
    """95 % intervals of each rate's (difference, ratio) between groups, shape (2, 3, 2): [low/high, rate, gap].

    Each group's rate k / n (counts of :func:`_counts`) is drawn ``n_draws`` times from Beta(k + ½, n − k + ½),
    the groups independently; a rate that some group has no rows for (no positives: no true positive rate) has
    NaN bounds, as its gap has no value; a ratio whose largest drawn rate is 0 is left out of its percentiles.
    """
    rng = np.random.default_rng(seed)
    out = np.full((2, 3, 2), np.nan)
    for i in range(3):
        k, n = c[:, 2 * i], c[:, 2 * i + 1]
        if n_draws == 0 or np.any(n == 0):
            continue
        rates = rng.beta(k + 0.5, n - k + 0.5, size=(n_draws, len(n)))
        hi, lo = rates.max(axis=1), rates.min(axis=1)
        out[:, i, 0] = np.percentile(hi - lo, [2.5, 97.5])
        ratio = lo[hi > 0] / hi[hi > 0]
        if ratio.size:
            out[:, i, 1] = np.percentile(ratio, [2.5, 97.5])
    return out


def fairness_report(y_true, y_pred, sensitive, *, feature: str, n_draws: int = N_DRAWS, seed: int = 0) -> FairnessReport:
    """Selection rate, true and false positive rates per group of ``sensitive``, their differences and ratios.

    Parameters
    ----------
    y_true, y_pred : array-like of {0, 1}, shape (n_rows,)
        True labels and the model's labels (1 = the positive class, "selected").
    sensitive : array-like of shape (n_rows,)
        Each row's group (shown as text).
    feature : str
        The sensitive feature's name.
    n_draws : int, default=2000
        Draws of the groups' rates for the intervals of ``difference`` and ``ratio``.
    seed : int, default=0

    Returns
    -------
    FairnessReport

    Raises
    ------
    ValueError
        On fewer than two groups, more than :data:`MAX_GROUPS`, or lengths that differ.
    """
    from fairlearn.metrics import (MetricFrame, false_positive_rate, selection_rate,  # a second or so to import
                                   true_positive_rate)

    y = np.asarray(y_true).astype(int)
    p = np.asarray(y_pred).astype(int)
    s = np.asarray([str(v) for v in np.asarray(sensitive)], dtype=object)
    if not len(y) == len(p) == len(s):
        raise ValueError(f"lengths differ: {len(y)} labels, {len(p)} predictions, {len(s)} groups")
    groups = tuple(sorted(set(s.tolist())))
    if not 2 <= len(groups) <= MAX_GROUPS:
        raise ValueError(f"{feature} has {len(groups)} groups among these rows; fairness rates compare 2 to "
                         f"{MAX_GROUPS} groups (bin a number column first)")
    frame = MetricFrame(metrics={"selection_rate": selection_rate, "true_positive_rate": true_positive_rate,
                                 "false_positive_rate": false_positive_rate},
                        y_true=y, y_pred=p, sensitive_features=s)
    g = np.searchsorted(np.asarray(groups, dtype=object), s)
    c = _counts(y.astype(bool), p.astype(bool), g, len(groups))
    rates = {}
    for i, name in enumerate(RATES):
        rates[name] = tuple(GroupRate(grp, int(c[j, 2 * i]), int(c[j, 2 * i + 1]), float(frame.by_group[name][grp]),
                                      *wilson(int(c[j, 2 * i]), int(c[j, 2 * i + 1]))[1:]) for j, grp in enumerate(groups))
    qs = _gap_intervals(c, n_draws, seed)
    diff, ratio = frame.difference(), frame.ratio()
    difference = {name: (float(diff[name]), float(qs[0, i, 0]), float(qs[1, i, 0])) for i, name in enumerate(RATES)}
    ratios = {name: (float(ratio[name]), float(qs[0, i, 1]), float(qs[1, i, 1])) for i, name in enumerate(RATES)}
    return FairnessReport(feature, groups, rates, difference, ratios, len(y))
