"""Weight of advice: how far a participant's numeric estimate moves towards the model's number.

Per trial ``(final - initial) / (advice - initial)`` (Harvey & Fischer 1997), capped to [0, 1] as
in Logg, Minson & Moore (2019): 0 keeps the own estimate, 1 adopts the advice, 0.5 averages. A
trial whose advice equals the first estimate has no defined weight and is excluded (and counted).
By condition (:func:`study.analysis.woa_by_condition`): the mean over participants of each one's
mean weight, with a percentile bootstrap interval over participants. Re-exported by :mod:`study.analysis`.

References
----------
.. [1] Harvey, N., Fischer, I. (1997). Taking advice: accepting help, improving judgment, and
   sharing responsibility. OBHDP 70(2), 117-133.
.. [2] Logg, J. M., Minson, J. A., Moore, D. A. (2019). Algorithm appreciation. OBHDP 151, 90-103.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

__all__ = ["weight_of_advice", "woa_per_trial"]


def weight_of_advice(initial: Sequence[float], advice: Sequence[float], final: Sequence[float]) -> tuple[float, int]:
    """Mean weight of advice over numeric trials (Harvey & Fischer 1997).

    Parameters
    ----------
    initial, advice, final : sequence of float, each of length n_trials
        The participant's estimate before advice, the advice, the estimate after.

    Returns
    -------
    woa : float
        Mean over trials with ``advice != initial`` of ``(final - initial) / (advice - initial)``,
        each capped to [0, 1] (Logg, Minson & Moore 2019): 0 keeps the own estimate, 1 adopts
        the advice, 0.5 averages. NaN when no trial has ``advice != initial``.
    n : int
        Trials used.

    Raises
    ------
    ValueError
        On unequal lengths or a value that is not finite.
    """
    w = woa_per_trial(initial, advice, final)
    use = ~np.isnan(w)
    if not use.any():
        return float("nan"), 0
    return float(w[use].mean()), int(use.sum())


def woa_per_trial(initial: Sequence[float], advice: Sequence[float], final: Sequence[float]) -> np.ndarray:
    """Each trial's weight of advice ``(final - initial) / (advice - initial)``, capped to [0, 1].

    Returns
    -------
    ndarray of shape (n_trials,)
        NaN where ``advice == initial`` (undefined: the standard exclusion, Harvey & Fischer 1997).

    Raises
    ------
    ValueError
        On unequal lengths or a value that is not finite.
    """
    i, a, f = (np.asarray(x, dtype=float) for x in (initial, advice, final))
    if not len(i) == len(a) == len(f):
        raise ValueError(f"expected equal lengths, got {len(i)}, {len(a)}, {len(f)}")
    if not (np.isfinite(i).all() and np.isfinite(a).all() and np.isfinite(f).all()):
        raise ValueError("weight of advice needs finite numbers")
    out = np.full(len(i), np.nan)
    use = a != i
    out[use] = np.clip((f[use] - i[use]) / (a[use] - i[use]), 0.0, 1.0)
    return out
