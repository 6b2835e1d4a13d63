"""Where a counterfactual may go: each feature's candidate values within the training rows, and what a change costs.

A feature is a raw column (a number, or a category as its codec's level code) or a block of one-hot columns, moved
as one column: its values are the blocks' patterns seen in the training rows. Numbers take values between the
training minimum and maximum (quantiles, integers where the column holds only integers); categories and blocks
take the levels or patterns the training rows hold. A number's change costs ``|after - before| / MAD`` (the median
absolute deviation over the training rows; the standard deviation, then 1, where it is 0: Wachter et al. 2017), a
category's or block's 1 (Mothilal et al. 2020).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np

MAX_PATTERNS = 64
"""The most one-hot patterns (or category levels) a feature offers: the most frequent in the training rows."""


@dataclass(frozen=True)
class Feature:
    """One feature of the search: its encoded columns, its candidate values and the scale of its cost.

    Parameters
    ----------
    name : str
    columns : tuple of int
        Positions in the encoded row (one, or a one-hot block's).
    kind : {"numeric", "category", "one-hot"}
    values : ndarray of shape (n_values, len(columns))
        The values it may take.
    scale : float
        A number's MAD (its cost's divisor); 1 otherwise.
    integer : bool
        A number whose training values are all integers (its values stay integers).
    """

    name: str
    columns: tuple[int, ...]
    kind: str
    values: np.ndarray
    scale: float = 1.0
    integer: bool = False

    def cost(self, before: np.ndarray, after: np.ndarray) -> np.ndarray:
        """Cost of moving from ``before`` to each row of ``after`` (shape (n, len(columns))), shape (n,)."""
        after = np.atleast_2d(after)
        if self.kind == "numeric":
            a, b = after[:, 0], float(before[0])
            both_nan = np.isnan(a) & np.isnan(b)
            diff = np.abs(a - b) / self.scale
            return np.where(both_nan, 0.0, np.where(np.isnan(diff), 1.0, diff))
        same = np.all((after == before) | (np.isnan(after) & np.isnan(before)), axis=1)
        return (~same).astype(float)


def _mad(col: np.ndarray) -> float:
    col = col[np.isfinite(col)]
    if not col.size:
        return 1.0
    mad = float(np.median(np.abs(col - np.median(col))))
    if mad > 0:
        return mad
    sd = float(col.std())
    return sd if sd > 0 else 1.0


def _numeric_values(col: np.ndarray, n_values: int) -> np.ndarray:
    col = col[np.isfinite(col)]
    if not col.size:
        return np.empty(0)
    uniq = np.unique(col)
    if uniq.size <= n_values:
        return uniq
    grid = np.quantile(col, np.linspace(0.0, 1.0, n_values))
    if np.all(uniq == np.round(uniq)):
        grid = np.round(grid)
    return np.unique(np.clip(grid, uniq[0], uniq[-1]))


def _patterns(block: np.ndarray) -> np.ndarray:
    """The distinct rows of ``block``, most frequent first (ties by value), at most :data:`MAX_PATTERNS`."""
    block = np.where(np.isnan(block), -1.0, block)
    uniq, counts = np.unique(block, axis=0, return_counts=True)
    order = np.lexsort((np.arange(len(counts)), -counts))[:MAX_PATTERNS]
    out = uniq[order]
    return np.where(out == -1.0, np.nan, out)


def search_space(training, feature_names: Sequence[str], *, categorical: Sequence[int] = (),
                 groups: Mapping[str, Sequence[str]] | None = None, n_values: int = 12) -> tuple[Feature, ...]:
    """Every feature's candidate values and cost scale, from the training rows.

    Parameters
    ----------
    training : ndarray of shape (n_rows, n_columns)
        Encoded training rows (a codec's float encoding: category columns hold level codes).
    feature_names : sequence of str, length n_columns
    categorical : sequence of int
        Positions of category columns (``TabularCodec.categorical``).
    groups : mapping of str to sequence of str, optional
        One-hot blocks (``explainers.persuasive.one_hot_groups``): each moves as one feature named by its key.
    n_values : int, default=12
        Candidate values of a number: its training quantiles at ``n_values`` evenly spaced levels (min and max
        included), or its distinct values when it has no more.

    Returns
    -------
    tuple of Feature
        In the table's order (a block where its first column is).
    """
    T = np.asarray(training, dtype=float)
    names = [str(n) for n in feature_names]
    index = {n: j for j, n in enumerate(names)}
    block_of: dict[int, tuple[str, tuple[int, ...]]] = {}
    for gname, members in (groups or {}).items():
        cols = tuple(sorted(index[str(m)] for m in members))
        for j in cols:
            block_of[j] = (str(gname), cols)
    out, seen = [], set()
    for j, name in enumerate(names):
        if j in block_of:
            gname, cols = block_of[j]
            if gname not in seen:
                seen.add(gname)
                out.append(Feature(gname, cols, "one-hot", _patterns(T[:, list(cols)])))
        elif j in set(categorical):
            out.append(Feature(name, (j,), "category", _patterns(T[:, [j]])))
        else:
            vals = _numeric_values(T[:, j], n_values)
            col = T[:, j][np.isfinite(T[:, j])]
            out.append(Feature(name, (j,), "numeric", vals.reshape(-1, 1), _mad(T[:, j]),
                               bool(np.all(col == np.round(col)))))
    return tuple(out)
