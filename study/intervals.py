"""Confidence intervals that respect the range of what they estimate.

- A proportion ``k/n`` gets the Wilson score interval (Wilson 1927), which stays
  inside [0, 1] and keeps close to its nominal coverage at small ``n``, where the
  Wald or t interval on 0/1 values runs outside [0, 1] (Brown, Cai & DasGupta 2001).
- A mean gets a percentile bootstrap interval over the units given (participants),
  seeded, so it stays within the range of the values and is reproducible
  (Efron & Tibshirani 1993).

References
----------
.. [1] Wilson, E. B. (1927). Probable inference, the law of succession, and statistical
   inference. JASA 22(158), 209-212.
.. [2] Brown, L. D., Cai, T. T., DasGupta, A. (2001). Interval estimation for a binomial
   proportion. Statistical Science 16(2), 101-133.
.. [3] Efron, B., Tibshirani, R. J. (1993). An Introduction to the Bootstrap. Chapman & Hall.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np
from scipy import stats

__all__ = ["wilson", "bootstrap_mean", "N_BOOT"]

#: Bootstrap resamples for :func:`bootstrap_mean`.
N_BOOT = 2000


def wilson(k: int, n: int, level: float = 0.95) -> tuple[float, float, float]:
    """Proportion ``k/n`` with its Wilson score interval.

    Parameters
    ----------
    k : int
        Successes, ``0 <= k <= n``.
    n : int
        Trials.
    level : float, default=0.95
        Two-sided confidence level.

    Returns
    -------
    estimate, low, high : float
        ``k/n`` and ``(p + z²/2n ± z·sqrt(p(1-p)/n + z²/4n²)) / (1 + z²/n)``,
        ``z`` the normal quantile; all NaN when ``n == 0``. ``0 <= low <= high <= 1``.

    Raises
    ------
    ValueError
        If ``k`` or ``n`` is negative or ``k > n``.
    """
    if n < 0 or k < 0 or k > n:
        raise ValueError(f"expected 0 <= k <= n, got k={k}, n={n}")
    if n == 0:
        return float("nan"), float("nan"), float("nan")
    z = float(stats.norm.ppf(0.5 + level / 2))
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return p, max(0.0, centre - half), min(1.0, centre + half)


def bootstrap_mean(values: Sequence[float], level: float = 0.95, *, n_boot: int = N_BOOT,
                   seed: int = 0) -> tuple[float, float, float, int]:
    """Mean of the finite ``values`` with a percentile bootstrap interval.

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
    rng = np.random.default_rng(seed)
    means = x[rng.integers(0, n, size=(n_boot, n))].mean(axis=1)
    a = (1 - level) / 2
    lo, hi = np.quantile(means, [a, 1 - a])
    return mean, float(lo), float(hi), n
