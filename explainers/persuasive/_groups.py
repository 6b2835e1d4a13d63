"""Which features O3 merges: one-hot blocks and Spearman-correlated clusters (docs/methods.md, "Persuasive layer", O3)."""
from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from .._grouping import group_signed_sum

__all__ = ["correlated_groups", "one_hot_groups", "group_attributions"]


DENSE_COLUMNS = 2_000
"""Up to this many columns the ``d x d`` Spearman matrix is computed at once (pairwise-complete, as before);
past it, in blocks of :data:`BLOCK` columns keeping only the pairs at ``|ρ| >= threshold`` (memory linear in the
columns: the dense matrix and its condensed distances were 1.2 GB at 10,000 columns)."""
BLOCK = 256
MAX_COMPONENT = 2_000
"""Most columns of one set of mutually linked columns clustered at once (average linkage is quadratic in it)."""


def _cluster(dist: np.ndarray, threshold: float) -> np.ndarray:
    """Average-linkage labels of a square distance matrix cut at ``1 - threshold``."""
    from scipy.cluster.hierarchy import fcluster, linkage  # at first use: not on a server's start (issue 23)
    from scipy.spatial.distance import squareform

    dist = np.clip((dist + dist.T) / 2, 0, None)
    np.fill_diagonal(dist, 0.0)
    return fcluster(linkage(squareform(dist, checks=False), method="average"), t=1 - threshold + 1e-12,
                    criterion="distance")


def _named(cols: list, members_of: list[list[int]]) -> dict[str, list[str]]:
    """Groups of two or more, each in column order, named by its first member, ordered by it."""
    out = {}
    for members in sorted((sorted(m) for m in members_of if len(m) > 1), key=lambda m: m[0]):
        out[f"{cols[members[0]]} & related"] = [cols[j] for j in members]
    return out


def _linked_pairs(X: pd.DataFrame, threshold: float) -> tuple[np.ndarray, np.ndarray]:
    """Column pairs ``(i < j)`` with ``|Spearman ρ| >= threshold``, computed by blocks of :data:`BLOCK` columns.

    Ranks are centred and scaled per column; a missing value takes its column's mean rank (the dense path's
    pairwise-complete correlation would need every pair's own rows); a constant column links to nothing.
    """
    R = X.rank().to_numpy(dtype=float)
    R = np.where(np.isnan(R), np.nanmean(R, axis=0, keepdims=True), R)
    R -= R.mean(axis=0)
    norm = np.sqrt((R ** 2).sum(axis=0))
    R = np.divide(R, norm, out=np.zeros_like(R), where=norm > 0)
    rows, cols = [], []
    for lo in range(0, R.shape[1], BLOCK):
        rho = R[:, lo:lo + BLOCK].T @ R[:, lo:]  # block x (d - lo): only pairs not yet seen
        i, j = np.nonzero(np.abs(rho) >= threshold - 1e-12)
        keep = j > i
        rows.append(i[keep] + lo)
        cols.append(j[keep] + lo)
    return np.concatenate(rows), np.concatenate(cols)


def correlated_groups(X: pd.DataFrame, threshold: float = 0.8) -> dict[str, list[str]]:
    """Average-linkage clusters on ``1 - |Spearman ρ|``, cut so members have ``|ρ| >= threshold``.

    Past :data:`DENSE_COLUMNS` columns the same clusters are found without the ``d x d`` matrix: average
    linkage joins two clusters only if some pair across them is within the cut, so every cluster lies in one
    connected set of the pairs at ``|ρ| >= threshold`` (found by blocks); each set is clustered exactly on its own.

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
        If ``threshold`` is not in (0, 1], or (past :data:`DENSE_COLUMNS` columns) more than
        :data:`MAX_COMPONENT` columns are linked together.
    """
    if not 0 < threshold <= 1:
        raise ValueError(f"threshold must be in (0, 1], got {threshold}")
    cols = list(X.columns)
    if len(cols) < 2:
        return {}
    if len(cols) <= DENSE_COLUMNS:
        rho = np.nan_to_num(X.rank().corr().to_numpy(), nan=0.0)
        labels = _cluster(1 - np.abs(rho), threshold)
        return _named(cols, [list(np.flatnonzero(labels == lab)) for lab in dict.fromkeys(labels)])
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    i, j = _linked_pairs(X, threshold)
    d = len(cols)
    _, comp = connected_components(coo_matrix((np.ones(i.size), (i, j)), shape=(d, d)), directed=False)
    members_of = []
    for c in np.unique(comp):
        idx = np.flatnonzero(comp == c)
        if idx.size < 2:
            continue
        if idx.size > MAX_COMPONENT:
            raise ValueError(f"{idx.size:,} columns are correlated together at |ρ| >= {threshold:g}; grouping "
                             f"clusters at most {MAX_COMPONENT:,} at once")
        rho = np.nan_to_num(X.iloc[:, idx].rank().corr().to_numpy(), nan=0.0)
        labels = _cluster(1 - np.abs(rho), threshold)
        members_of += [list(idx[labels == lab]) for lab in np.unique(labels)]
    return _named(cols, members_of)


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
