"""Shapley values by brute force, an oracle independent of shap and of Candor's explainers.

Every coalition of raw columns is enumerated with :mod:`itertools` and weighted by Shapley's formula
(L. S. Shapley, "A value for n-person games", 1953); a coalition's value is the model's mean output over the
background with the coalition's columns set to the row's (interventional, as Janzing et al. 2020 and shap's
interventional explainers define it).
"""
from itertools import combinations
from math import factorial

import numpy as np
import pandas as pd


def brute_force_shapley(g, x: pd.DataFrame, background: pd.DataFrame) -> np.ndarray:
    """Interventional Shapley values with raw columns as players: every coalition, Shapley's formula."""
    cols = list(x.columns)
    d = len(cols)

    memo = {}

    def v(S):
        key = frozenset(S)
        if key not in memo:
            rows = background.copy()
            for c in S:
                rows[c] = x[c].iloc[0]
            memo[key] = float(np.mean(g(rows)))
        return memo[key]

    phi = np.zeros(d)
    for j, c in enumerate(cols):
        others = [o for o in cols if o != c]
        for size in range(d):
            w = factorial(size) * factorial(d - size - 1) / factorial(d)
            for S in combinations(others, size):
                phi[j] += w * (v(S + (c,)) - v(S))
    return phi
