"""Candidate generation for MUSE: quantile binning and frequent itemsets (docs/methods.md, "Rule surrogates: MUSE and CART").

Items [D]. With ``binning="threshold"`` (default) every quantile edge ``e`` of a
numeric feature gives two items, ``x <= e`` and ``x > e``, and a bin
``e1 < x <= e2`` is the conjunction of two items; the paper's one item per
``(feature, bin)`` is ``binning="interval"`` (a middle bin is then one item
rendered as two predicates). Categorical levels give ``x == level``. Widths
and ``numpreds`` always count :class:`Predicate` objects, as a CART path does.
Threshold items let a two-predicate rule say ``age <= 31 AND priors > 2``,
which interval items cannot (measured on COMPAS, see the benchmark).
"""
from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
import pandas as pd
from pandas.api import types as ptypes

from ..rules import conjunction_mask
from ..types import Predicate
from ._mining import frequent_itemsets

__all__ = ["Item", "make_items", "item_matrix", "mine_itemsets", "itemset_masks", "itemset_support", "as_itemsets"]


@dataclass(frozen=True)
class Item:
    """One ``(feature, bin)`` item; ``predicates`` is its rendering."""

    feature: str
    predicates: tuple[Predicate, ...]


def _py(v: Any) -> Any:
    return v.item() if isinstance(v, np.generic) else v


def _is_numeric(col: pd.Series) -> bool:
    return ptypes.is_numeric_dtype(col) and not ptypes.is_bool_dtype(col)


def make_items(X: pd.DataFrame, n_bins: int = 4, binning: str = "threshold") -> list[Item]:
    """Quantile bins for numeric columns, one item per level for the others.

    Parameters
    ----------
    X : DataFrame of shape (n_rows, n_features)
    n_bins : int, default=4
        Quantile bins per numeric feature; duplicate edges are merged, so a
        feature with one heavy value (``capital-gain == 0``) gets fewer bins.
    binning : {"threshold", "interval"}, default="threshold"

    Returns
    -------
    items : list of Item
        Feature order, then bin order.

    Raises
    ------
    ValueError
        If ``n_bins < 2`` or ``binning`` is unknown.
    """
    if n_bins < 2:
        raise ValueError(f"n_bins must be >= 2, got {n_bins}")
    if binning not in ("threshold", "interval"):
        raise ValueError(f"binning must be 'threshold' or 'interval', got {binning!r}")
    items: list[Item] = []
    q = np.arange(1, n_bins) / n_bins
    block = _whole_float_columns(X)  # quantiles of every numpy-number column without NaN at once (issue 27)
    at = {j: k for k, j in enumerate(block)}
    if block:
        V = X.iloc[:, list(block)].to_numpy(dtype=float)
        block_qs, block_max = np.quantile(V, q, axis=0), V.max(axis=0)
    for j, f in enumerate(X.columns):
        name = str(f)
        if j in at:
            qs, top = block_qs[:, at[j]], block_max[at[j]]
            edges = [float(e) for e in np.unique(qs) if e < top]
        elif _is_numeric(col := X.iloc[:, j]):
            vals = pd.to_numeric(col, errors="coerce").to_numpy(dtype=float)
            vals = vals[~np.isnan(vals)]
            if vals.size == 0:
                continue
            qs = np.quantile(vals, q)
            edges = [float(e) for e in np.unique(qs) if e < vals.max()]
        else:
            edges = None
        if edges is not None:
            if not edges:
                continue
            if binning == "threshold":
                for e in edges:
                    items += [Item(name, (Predicate(name, "<=", e),)), Item(name, (Predicate(name, ">", e),))]
                continue
            items.append(Item(name, (Predicate(name, "<=", edges[0]),)))
            for lo, hi in zip(edges[:-1], edges[1:]):
                items.append(Item(name, (Predicate(name, ">", lo), Predicate(name, "<=", hi))))
            items.append(Item(name, (Predicate(name, ">", edges[-1]),)))
        else:
            col = X.iloc[:, j]
            levels = sorted({_py(v) for v in col.dropna().unique()}, key=lambda v: (str(type(v)), v))
            items.extend(Item(name, (Predicate(name, "==", lv),)) for lv in levels)
    return items


def _whole_float_columns(X: pd.DataFrame) -> tuple[int, ...]:
    """Positions of the columns of numpy integers or floats (not bool) that hold no NaN: their quantiles are those of
    all their values, computed for them all at once (``numpy.quantile`` along the rows: the same values as column by
    column)."""
    kinds = [j for j, d in enumerate(X.dtypes) if isinstance(d, np.dtype) and d.kind in "iuf"]
    if not kinds:
        return ()
    nan = np.isnan(X.iloc[:, kinds].to_numpy(dtype=float)).any(axis=0)
    return tuple(j for j, bad in zip(kinds, nan) if not bad and len(X))


def item_matrix(items: Sequence[Item], X: pd.DataFrame) -> np.ndarray:
    """Boolean one-hot matrix of shape (n_rows, n_items): column ``j`` is ``conjunction_mask(items[j].predicates, X)``.

    Predicates ``<=`` / ``>`` on a column of numpy numbers (integers or floats) are compared for every such predicate
    at once on the columns' block of values (a missing value satisfies neither, as in
    :func:`explainers.rules.predicate_mask`): a 10,000-column table has 60,000 threshold items, and a Series, a
    ``to_numeric`` and a column lookup per item took seconds of each fit (issue 27). Other items go one by one.
    """
    out = np.ones((len(X), len(items)), dtype=bool)
    dtypes = dict(zip(map(str, X.columns), X.dtypes)) if X.columns.is_unique else {}
    block = {str(f): k for k, f in enumerate(X.columns)
             if isinstance(dtypes.get(str(f)), np.dtype) and dtypes[str(f)].kind in "iuf"}
    cols, thresholds, le, at = [], [], [], []  # one entry per threshold predicate on a block column
    for j, it in enumerate(items):
        if all(p.op in ("<=", ">") and p.feature in block for p in it.predicates):
            for p in it.predicates:
                cols.append(block[p.feature])
                thresholds.append(float(p.threshold))
                le.append(p.op == "<=")
                at.append(j)
        else:
            out[:, j] = conjunction_mask(it.predicates, X)
    if cols:
        used = np.unique(cols)
        V = X.iloc[:, used].to_numpy(dtype=float)[:, np.searchsorted(used, cols)]
        t, le = np.asarray(thresholds), np.asarray(le)
        with np.errstate(invalid="ignore"):
            hold = np.where(le, V <= t, V > t)
        np.logical_and.at(out.T, np.asarray(at), hold.T)  # a conjunction: every predicate of the item holds
    return out


def _redundant(key: tuple[int, ...], items: Sequence[Item]) -> bool:
    seen = set()
    for i in key:
        for p in items[i].predicates:
            k = (p.feature, p.op)
            if k in seen:
                return True
            seen.add(k)
    return False


_MINED: OrderedDict = OrderedDict()
_MINED_LOCK = threading.Lock()
MINED_KEPT = 8
"""Results of :func:`mine_itemsets` kept in the process (each a few MB on Adult), least recently used dropped."""


def mine_itemsets(
    I: np.ndarray, items: Sequence[Item], min_support: float, max_width: int, max_items_len3: int = 64,
    mining_rows: int | None = 5000, seed: int = 0, max_pair_items: int = 1000,
) -> list[tuple[tuple[int, ...], float]]:
    """Frequent itemsets (as mlxtend's FP-growth finds them) whose width is at most ``max_width`` predicates.

    Itemsets with two bounds of the same direction on one feature
    (``x > 1 AND x > 3``) are dropped as redundant. When more than
    ``max_items_len3`` items are frequent (dense numeric data such as breast
    cancer's 30 correlated features) itemsets are limited to length 2 and
    counted exactly from ``I.T @ I`` instead of by FP-growth [D]: length 3
    there runs to hundreds of thousands of itemsets, and mlxtend's FP-growth
    took minutes even with ``max_len=2``. Pairs are counted among the ``max_pair_items`` most
    frequent items only (ties by index) [D]: the pair table of all frequent items grows with their
    square (a 10,000-column table gave ~40,000 items, a 6.4 GB matrix that crashed the server);
    every frequent item is still a candidate on its own.

    The itemsets are those mlxtend's FP-growth finds, counted by matrix products
    (``explainers.muse._mining``: FP-growth in pure Python took 15 CPU s of each fit on Adult); with more
    than ``mining_rows`` rows it mines a seeded row sample at ``0.8 * min_support`` and then keeps the
    itemsets whose exact support on all rows is at least ``min_support`` [D]
    (an itemset frequent in the data but below 0.8 x the threshold in the
    sample can be missed).

    Parameters
    ----------
    I : ndarray of bool, shape (n_rows, n_items)
    items : sequence of Item
    min_support : float
        Minimum support as a fraction of rows, in (0, 1].
    max_width : int
        Largest number of predicates an itemset may render to.
    max_pair_items : int, default=1000
        Most items whose pairs are counted when more than ``max_items_len3`` are frequent
        (memory: ``4 * max_pair_items**2`` bytes).

    Returns
    -------
    list of (item indices sorted ascending, support fraction), in canonical order.

    Notes
    -----
    The result depends only on the arguments, never on the black box's labels or the rule budgets, so the last
    :data:`MINED_KEPT` results are kept, keyed by a SHA-256 of ``I`` (its shape and bits), the items' predicates
    and the parameters: a frontier fits MUSE and the flat set at four budgets each on the same rows, and mined
    the same itemsets eight times (1.8 of 4.2 CPU s of each fit on Adult).
    """
    h = hashlib.sha256(repr((I.shape, [it.predicates for it in items], min_support, max_width, max_items_len3,
                             mining_rows, seed, max_pair_items)).encode())
    h.update(np.packbits(np.asarray(I, dtype=bool)).tobytes())
    key = h.digest()
    found = kept(_MINED, _MINED_LOCK, MINED_KEPT, key,
                 lambda: _mine(I, items, min_support, max_width, max_items_len3, mining_rows, seed, max_pair_items))
    return list(found)


def kept(cache: OrderedDict, lock, limit: int, key: bytes, compute):
    """``cache[key]``, or ``compute()`` kept there: at most ``limit`` results, least recently used dropped.

    The process-wide memo of MUSE's mined itemsets (:func:`mine_itemsets`) and of its pool's base pairs
    (``_pool._base_pairs``); ``lock`` guards ``cache``, and ``compute`` runs outside it.
    """
    with lock:
        found = cache.get(key)
        if found is not None:
            cache.move_to_end(key)
            return found
    found = compute()
    with lock:
        cache[key] = found
        while len(cache) > limit:
            cache.popitem(last=False)
    return found


def _mine(I, items, min_support, max_width, max_items_len3, mining_rows, seed, max_pair_items):
    """:func:`mine_itemsets` computed."""
    keep = np.flatnonzero(I.mean(axis=0) >= min_support)
    if keep.size == 0:
        return []
    sampled = mining_rows is not None and I.shape[0] > mining_rows
    rows = np.sort(np.random.default_rng(seed).permutation(I.shape[0])[:mining_rows]) if sampled else slice(None)
    keys = []
    if keep.size <= max_items_len3:
        found = frequent_itemsets(I[rows][:, keep], min_support * (0.8 if sampled else 1.0), max_width)
        cand = [tuple(int(keep[i]) for i in its) for its in found]
    else:
        support = I[:, keep].mean(axis=0)
        paired = np.sort(keep[np.argsort(-support, kind="stable")[:max_pair_items]])
        Ik = I[:, paired].astype(np.float32)
        counts = Ik.T @ Ik
        pair = counts / I.shape[0]
        a, b = np.nonzero(np.triu(pair >= min_support, k=1))
        if I.shape[0] < _EXACT_FLOAT32 and all(len(items[k].predicates) == 1 for k in keep):
            return _singles_and_pairs(I, items, keep, paired[a], paired[b], counts[a, b], min_support, max_width)
        cand = [(int(k),) for k in keep] + ([(int(paired[i]), int(paired[j])) for i, j in zip(a, b)]
                                            if max_width >= 2 else [])
    for key in cand:
        if sum(len(items[i].predicates) for i in key) <= max_width and not _redundant(key, items):
            keys.append(key)
    keys.sort(key=lambda t: (len(t), t))
    sup = itemset_support(I, keys)
    return [(k, float(v)) for k, v in zip(keys, sup) if v >= min_support]


def _singles_and_pairs(I, items, keep, a, b, pair_counts, min_support: float, max_width: int):
    """:func:`_mine`'s result when every frequent item is one predicate: its loop, as arrays.

    The items ``keep`` alone (width 1), then the pairs ``(a, b)`` (``a < b``, in the pair table's order: sorted, as
    the loop sorts them) of width 2 when ``max_width >= 2`` whose predicates are not on one feature in one direction
    (:func:`_redundant`), each with its support: its count of rows (exact in float32, as :func:`itemset_support`'s) over
    the rows. A wide table mined some 540,000 such pairs through a Python loop (issue 27).
    """
    N = max(I.shape[0], 1)
    singles = [(int(k),) for k in keep]
    out = [(k, float(v)) for k, v in zip(singles, itemset_support(I, singles)) if max_width >= 1 and v >= min_support]
    if max_width < 2 or not len(a):
        return out
    code: dict = {}
    direction = np.array([code.setdefault((it.predicates[0].feature, it.predicates[0].op), len(code))
                          if len(it.predicates) == 1 else -1 for it in items])
    sup2 = np.asarray(pair_counts, dtype=np.float64) / N
    ok = (direction[a] != direction[b]) & (sup2 >= min_support)
    out += list(zip(zip(a[ok].tolist(), b[ok].tolist()), sup2[ok].tolist()))
    return out


def itemset_support(I: np.ndarray, itemsets: Sequence[tuple[int, ...]], Y1: np.ndarray | None = None,
                    chunk: int = 2048) -> np.ndarray:
    """Support fraction of each itemset, or with ``Y1`` (n_rows, n_classes) the per-class row counts.

    Computed in chunks so that no (n_itemsets, n_rows) matrix is held at once.
    """
    N = I.shape[0]
    W = np.ones((N, 1), np.float32) if Y1 is None else Y1.astype(np.float32)
    out = np.zeros((len(itemsets), W.shape[1]))
    rest = _short_itemset_counts(I, itemsets, W, out) if N < _EXACT_FLOAT32 else range(len(itemsets))
    It = np.ascontiguousarray(I.T) if len(rest) else None  # once, not per chunk (a 10,000-column table: 276 chunks)
    for start in range(0, len(rest), chunk):
        at = rest[start:start + chunk]
        m = itemset_masks(I, [itemsets[k] for k in at], It=It)
        out[at] = m.astype(np.float32) @ W
    return out[:, 0] / max(N, 1) if Y1 is None else np.rint(out).astype(np.int64)


_EXACT_FLOAT32 = 2 ** 24
"""Row counts below this are exact in float32, summed in any order."""
PAIR_ITEMS = 2048
"""Most distinct items whose pairs :func:`_short_itemset_counts` counts from one product (16 MB a class at most)."""


def _short_itemset_counts(I: np.ndarray, itemsets, W: np.ndarray, out: np.ndarray) -> list[int]:
    """Fill ``out`` (n_itemsets, n_classes) with the weighted row counts of the itemsets of one or two items, from
    matrix products instead of row masks: ``I_aᵀ W`` for one item, ``(I_U ∘ W_c)ᵀ I_U`` over the items ``U`` of the
    pairs, class by class. Every entry is a count of rows (0/1 products, ``W`` one-hot or ones), exact in float32, so
    they equal the masks' counts. A wide table's pool counted about 540,000 itemsets mask by mask (issue 27). Returns
    the positions left for the masks (longer itemsets; pairs over more than :data:`PAIR_ITEMS` items)."""
    lengths = np.fromiter((len(s) for s in itemsets), dtype=np.intp, count=len(itemsets))
    ones = np.flatnonzero(lengths == 1)
    if ones.size:
        cols = np.fromiter((itemsets[k][0] for k in ones), dtype=np.intp, count=ones.size)
        for start in range(0, cols.size, PAIR_ITEMS):  # the masks' memory: a block of items' float32 columns
            out[ones[start:start + PAIR_ITEMS]] = I[:, cols[start:start + PAIR_ITEMS]].astype(np.float32).T @ W
    twos = np.flatnonzero(lengths == 2)
    if twos.size:
        pairs = np.array([itemsets[k] for k in twos], dtype=np.intp).reshape(-1, 2)
        U, at = np.unique(pairs, return_inverse=True)
        at = at.reshape(-1, 2)
        if U.size <= PAIR_ITEMS:
            IU = I[:, U].astype(np.float32)
            for c in range(W.shape[1]):
                out[twos, c] = ((IU * W[:, [c]]).T @ IU)[at[:, 0], at[:, 1]]
            twos = twos[:0]
    return np.sort(np.concatenate([np.flatnonzero((lengths > 2) | (lengths == 0)), twos])).tolist()


def itemset_masks(I: np.ndarray, itemsets: Sequence[tuple[int, ...]], chunk: int = 4096, *,
                  It: np.ndarray | None = None) -> np.ndarray:
    """Rows covered by each itemset: bool array of shape (n_itemsets, n_rows); ``It``: ``I.T`` C-contiguous, if the
    caller holds it."""
    out = np.ones((len(itemsets), I.shape[0]), dtype=bool)
    It = np.ascontiguousarray(I.T) if It is None else It
    by_len: dict[int, list[int]] = {}
    for k, s in enumerate(itemsets):
        by_len.setdefault(len(s), []).append(k)
    for L, ks in by_len.items():
        for start in range(0, len(ks), chunk):
            sel = np.asarray(ks[start:start + chunk])
            idx = np.asarray([itemsets[k] for k in sel], dtype=int).reshape(len(sel), L)
            m = np.ones((len(sel), I.shape[0]), dtype=bool)
            for p in range(L):
                m &= It[idx[:, p]]
            out[sel] = m
    return out


def as_itemsets(paths, items: list[Item], I: np.ndarray, X: pd.DataFrame):
    """Tree paths as itemsets: each new predicate becomes a one-predicate item (a new column of ``I``)."""
    pos = {it.predicates: k for k, it in enumerate(items) if len(it.predicates) == 1}
    new: list[Item] = []
    for q, s in paths:
        for p in q + s:
            if (p,) not in pos:
                pos[(p,)] = len(items) + len(new)
                new.append(Item(p.feature, (p,)))
    if new:
        items = list(items) + new
        I = np.hstack([I, item_matrix(new, X)])
    return items, I, [(tuple(pos[(p,)] for p in q), tuple(pos[(p,)] for p in s)) for q, s in paths]
