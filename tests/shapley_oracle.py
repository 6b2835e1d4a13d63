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


def brute_force_shapley(g, x: pd.DataFrame, background: pd.DataFrame, max_rows: int = 250_000) -> np.ndarray:
    """Interventional Shapley values with raw columns as players: every coalition, Shapley's formula.

    ``g`` maps rows to one output a row (or a row of outputs, averaged alike), each row scored on its own, as a
    model's ``predict`` does. Every coalition's hybrid rows (the background with the coalition's columns set to
    the row's) are stacked and scored in calls of at most ``max_rows`` rows, not one call a coalition: the same
    rows and the same mean per coalition, without thousands of small calls.
    """
    cols = list(x.columns)
    d = len(cols)
    n = len(background)
    coalitions = [S for size in range(d + 1) for S in combinations(range(d), size)]
    per_call = max(1, max_rows // max(n, 1))
    memo = {}
    for start in range(0, len(coalitions), per_call):
        block = coalitions[start:start + per_call]
        rows = background.iloc[np.tile(np.arange(n), len(block))].reset_index(drop=True)
        member = np.zeros((len(block), d), dtype=bool)
        for i, S in enumerate(block):
            member[i, list(S)] = True
        for j, c in enumerate(cols):
            rows[c] = rows[c].mask(np.repeat(member[:, j], n), x[c].iloc[0])
        out = np.asarray(g(rows), dtype=float).reshape(len(block), -1).mean(axis=1)
        memo.update((frozenset(cols[k] for k in S), float(v)) for S, v in zip(block, out))

    def v(S):
        return memo[frozenset(S)]

    phi = np.zeros(d)
    for j, c in enumerate(cols):
        others = [o for o in cols if o != c]
        for size in range(d):
            w = factorial(size) * factorial(d - size - 1) / factorial(d)
            for S in combinations(others, size):
                phi[j] += w * (v(S + (c,)) - v(S))
    return phi


def brute_force_boosted_shapley(model, x, background) -> np.ndarray:
    """Interventional Shapley values of a GradientBoosting model's margin, by brute force tree by tree.

    The margin is ``init + learning_rate * sum of trees`` and Shapley values are linear in the game, so each
    tree is its own game whose only players are the columns it splits on (at most 2^depth - 1 of them): every
    coalition of those is enumerated, and each hybrid row is scored by scikit-learn's own ``tree.predict``. Exact
    for any number of columns, independent of shap and of Candor's tree code. Binary or regression models
    (one tree per stage).

    Parameters
    ----------
    model : fitted GradientBoostingClassifier (two classes) or GradientBoostingRegressor
    x : array of shape (n_features,)
    background : array of shape (n_background, n_features)
    """
    x = np.asarray(x, dtype=float)
    B = np.asarray(background, dtype=float)
    phi = np.zeros(x.size)
    for est in np.asarray(model.estimators_, dtype=object)[:, 0]:
        t = est.tree_
        feats = sorted(set(int(f) for f in t.feature[t.children_left >= 0]))
        P = len(feats)
        coalitions = [S for s in range(P + 1) for S in combinations(feats, s)]
        rows = np.repeat(B[None], len(coalitions), axis=0)
        for i, S in enumerate(coalitions):
            rows[i][:, list(S)] = x[list(S)]
        v = est.predict(rows.reshape(-1, x.size)).reshape(len(coalitions), len(B)).mean(axis=1)
        value = dict(zip(map(frozenset, coalitions), v * model.learning_rate))
        for j in feats:
            others = [o for o in feats if o != j]
            for s in range(P):
                w = factorial(s) * factorial(P - s - 1) / factorial(P)
                for S in combinations(others, s):
                    phi[j] += w * (value[frozenset(S + (j,))] - value[frozenset(S)])
    return phi


def additive_output(model):
    """What an exact tree path decomposes, as a function of rows -> (n_rows, n_outputs): a boosted classifier's
    margin (``decision_function``), a forest's class probabilities, a regressor's prediction."""
    if hasattr(model, "decision_function"):
        return lambda Z: np.asarray(model.decision_function(Z), float).reshape(len(Z), -1)
    if hasattr(model, "predict_proba"):
        return lambda Z: model.predict_proba(Z)
    return lambda Z: np.asarray(model.predict(Z), float).reshape(len(Z), -1)
