"""Wilson score interval for an agreement rate (a binomial proportion).

Wilson, E. B. (1927). "Probable inference, the law of succession, and statistical inference",
JASA 22(158), 209-212. Used for every surrogate agreement Candor shows (held-out rows are the
trials, "the surrogate gives the model's label" the successes).
"""
from __future__ import annotations

import math
from statistics import NormalDist

__all__ = ["wilson_interval"]


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
        raise ValueError(f"successes must be in [0, n], got {successes!r} of {n!r}")
    if n == 0:
        return float("nan"), float("nan")
    z = NormalDist().inv_cdf(0.5 + confidence / 2.0)
    p = successes / n
    den = 1.0 + z * z / n
    mid = (p + z * z / (2.0 * n)) / den
    half = z * math.sqrt(p * (1.0 - p) / n + z * z / (4.0 * n * n)) / den
    return max(0.0, mid - half), min(1.0, mid + half)
