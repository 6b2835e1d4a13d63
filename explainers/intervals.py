"""Confidence intervals that respect the range of what they estimate: one home for every interval Candor shows.

- A proportion ``k/n`` (a surrogate's agreement over held-out rows, a reliance rate over trials) gets
  the Wilson score interval (Wilson 1927), which stays inside [0, 1] and keeps close to its nominal
  coverage at small ``n``, where the Wald interval runs outside [0, 1] (Brown, Cai & DasGupta 2001).
- A mean gets a percentile bootstrap interval over the units given (participants), seeded, so it stays
  within the range of the values and is reproducible (Efron & Tibshirani 1993), expanded for small samples
  (Hesterberg 2015): the plain percentile interval is too narrow there (95 % intervals of the mean of 5
  exponential values covered it 78 % of the time, of 12 values 87 %; expanded 87 % and 91 %).

References
----------
.. [1] Wilson, E. B. (1927). Probable inference, the law of succession, and statistical inference.
   JASA 22(158), 209-212.
.. [2] Brown, L. D., Cai, T. T., DasGupta, A. (2001). Interval estimation for a binomial proportion.
   Statistical Science 16(2), 101-133.
.. [3] Efron, B., Tibshirani, R. J. (1993). An Introduction to the Bootstrap. Chapman & Hall.
.. [4] Hesterberg, T. C. (2015). What teachers should know about the bootstrap: resampling in the undergraduate
   statistics curriculum. The American Statistician 69(4), 371-386.
"""
from __future__ import annotations

import math
from statistics import NormalDist
from typing import Sequence

import numpy as np

__all__ = ["wilson_interval", "wilson", "bootstrap_mean", "N_BOOT"]

#: Bootstrap resamples for :func:`bootstrap_mean`.
N_BOOT = 2000


def wilson_interval(successes: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval of ``successes / n``.

    ``(p + z²/2n ± z·sqrt(p(1-p)/n + z²/4n²)) / (1 + z²/n)`` with ``z`` the two-sided normal
    quantile of ``confidence``. Unlike the Wald interval it stays in [0, 1] and is not empty at
    ``p = 0`` or ``p = 1``.

    Parameters
    ----------
    successes : int
        Rows where the surrogate agrees with the model, ``0 <= successes <= n``.
    n : int
        Rows measured.
    confidence : float, default=0.95
        In (0, 1).

    Returns
    -------
    (low, high) : tuple of float
        In [0, 1]; ``(nan, nan)`` when ``n == 0``.

    Raises
    ------
    ValueError
        If ``successes`` is outside ``[0, n]`` or ``confidence`` outside (0, 1).
    """
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")
    if n < 0 or not 0 <= successes <= n:
        raise ValueError(f"expected 0 <= k <= n successes, got k={successes!r}, n={n!r}")
    if n == 0:
        return float("nan"), float("nan")
    z = NormalDist().inv_cdf(0.5 + confidence / 2.0)
    p = successes / n
    den = 1.0 + z * z / n
    mid = (p + z * z / (2.0 * n)) / den
    half = z * math.sqrt(p * (1.0 - p) / n + z * z / (4.0 * n * n)) / den
    low = 0.0 if successes == 0 else max(0.0, mid - half)  # exactly 0 and 1 at the ends, not 1e-17 off
    high = 1.0 if successes == n else min(1.0, mid + half)
    return low, high


def wilson(k: int, n: int, level: float = 0.95) -> tuple[float, float, float]:
    """``k / n`` with its :func:`wilson_interval`: ``(estimate, low, high)``, all NaN when ``n == 0``.

    Raises
    ------
    ValueError
        If ``k`` or ``n`` is negative or ``k > n``.
    """
    low, high = wilson_interval(k, n, level)
    return (k / n if n else float("nan")), low, high


def bootstrap_mean(values: Sequence[float], level: float = 0.95, *, n_boot: int = N_BOOT,
                   seed: int = 0) -> tuple[float, float, float, int]:
    """Mean of the finite ``values`` with an expanded percentile bootstrap interval (Hesterberg 2015).

    The percentiles taken are those of a wider level: the tail share ``a'`` with
    ``z_{a'} = sqrt(n / (n - 1)) t_{(1 - level)/2, n - 1}`` (Student's t with n - 1 degrees of freedom), which
    corrects the percentile interval's too-narrow width for small ``n`` (``n`` 5: the 2.5 and 97.5 percentiles
    become the 0.1 and 99.9; ``n`` 12: the 1.1 and 98.9; ``n`` 30: the 1.9 and 98.1) and tends to the plain
    percentile interval as ``n`` grows. Still too narrow for 2 or 3 values (their interval cannot leave the values'
    range).

    Parameters
    ----------
    values : sequence of float
        One value per unit (participant); None and NaN are dropped.
    level : float, default=0.95
    n_boot : int, default=2000
        Resamples (with replacement, of the same size).
    seed : int, default=0
        Seeds the resampling (``numpy.random.default_rng``), so the interval is reproducible.

    Returns
    -------
    mean, low, high : float
        NaN bounds when fewer than two values.
    n : int
        Number of finite values used.
    """
    x = np.asarray([v for v in values if v is not None and np.isfinite(v)], dtype=float)
    n = len(x)
    if n == 0:
        return float("nan"), float("nan"), float("nan"), 0
    mean = float(x.mean())
    if n < 2:
        return mean, float("nan"), float("nan"), n
    from scipy.stats import t as student_t  # imported with scikit-learn already wherever a model is loaded

    rng = np.random.default_rng(seed)
    means = x[rng.integers(0, n, size=(n_boot, n))].mean(axis=1)
    a = NormalDist().cdf(-math.sqrt(n / (n - 1)) * float(student_t.ppf(1 - (1 - level) / 2, n - 1)))
    lo, hi = np.quantile(means, [a, 1 - a])
    return mean, float(lo), float(hi), n
