"""Which features O3 merges: one-hot blocks and Spearman-correlated clusters (docs/methods.md, "Persuasive layer", O3)."""
from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np
import pandas as pd
from scipy.cluster.hierarchy import fcluster, linkage
from scipy.spatial.distance import squareform

from .._grouping import group_signed_sum

__all__ = ["correlated_groups", "one_hot_groups", "group_attributions"]


def correlated_groups(X: pd.DataFrame, threshold: float = 0.8) -> dict[str, list[str]]:
    """Average-linkage clusters on ``1 - |Spearman ρ|``, cut so members have ``|ρ| >= threshold``.

    Parameters
    ----------
    X : DataFrame of shape (n_rows, n_features)
        Training rows (numeric).
    threshold : float, default=0.8
        ``τ``: clusters are cut at distance ``1 - τ``.

    Returns
    -------
    dict of str to list of str
        Only clusters of two or more features, named ``"<first member> & related"``
        (first in column order); the operator may rename them.

    Raises
    ------
    ValueError
        If ``threshold`` is not in (0, 1].
    """
    if not 0 < threshold <= 1:
        raise ValueError(f"threshold must be in (0, 1], got {threshold}")
    cols = list(X.columns)
    if len(cols) < 2:
        return {}
    rho = X.rank().corr().to_numpy()
    rho = np.nan_to_num(rho, nan=0.0)
    dist = 1 - np.abs(rho)
    np.fill_diagonal(dist, 0.0)
    dist = np.clip((dist + dist.T) / 2, 0, None)
    labels = fcluster(linkage(squareform(dist, checks=False), method="average"), t=1 - threshold + 1e-12,
                      criterion="distance")
    groups = {}
    for lab in dict.fromkeys(labels):
        members = [c for c, l in zip(cols, labels) if l == lab]
        if len(members) > 1:
            groups[f"{members[0]} & related"] = members
    return groups


def one_hot_groups(X: pd.DataFrame, sep: str = "_") -> dict[str, list[str]]:
    """Blocks of 0/1 columns sharing the prefix before the last ``sep`` (``race_Caucasian`` → ``race``).

    Returns
    -------
    dict of str to list of str
        Prefix -> its columns, for blocks of two or more.
    """
    blocks: dict[str, list[str]] = {}
    for c in X.columns:
        name = str(c)
        vals = pd.unique(X[c].dropna())
        if sep in name and set(np.asarray(vals, dtype=float).tolist()) <= {0.0, 1.0}:
            blocks.setdefault(name.rsplit(sep, 1)[0], []).append(name)
    return {k: v for k, v in blocks.items() if len(v) > 1}


def group_attributions(values, feature_names: Sequence[str], groups: Mapping[str, Sequence[str]]):
    """Signed sum per row of each group's attributions (then aggregate, e.g. mean ``|.|``).

    Parameters
    ----------
    values : ndarray of shape (n_rows, n_features)
    feature_names : sequence of str, length n_features
    groups : mapping of str to sequence of str

    Groups must be disjoint (as :func:`correlated_groups` and :func:`one_hot_groups` make them).

    Returns
    -------
    names : list of str
        Group names, then the ungrouped features.
    grouped : ndarray of shape (n_rows, n_items)
        Row sums equal the rows of ``values`` summed (completeness kept).
    """
    values = np.atleast_2d(np.asarray(values, float))
    index = {n: j for j, n in enumerate(feature_names)}
    item = np.full(len(feature_names), -1)
    names = list(groups)
    for i, feats in enumerate(groups.values()):
        item[[index[f] for f in feats]] = i
    for j, n in enumerate(feature_names):
        if item[j] < 0:
            item[j] = len(names)
            names.append(n)
    return names, group_signed_sum(values, item, len(names))
