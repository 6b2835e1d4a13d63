"""Precise candidates for MUSE: paths of shallow trees fitted to the black box's labels [D].

BETA/MUSE (Lakkaraju et al. 2017, arXiv 1707.01154; 2019, doi 10.1145/3306618.3314229) draw
candidates from frequent itemsets over quantile bins. On Adult that pool ran dry after two or
three rules (the best remaining candidate added 53 of 24,420 training rows): quantile edges are
not where the model's labels change, and a 2.5 % joint-support floor drops the small precise
regions a decision tree finds. This module adds candidates cut where the model's labels change:

* **full paths**: every node of CART trees (scikit-learn ``DecisionTreeClassifier``, Breiman et
  al. 1984) fitted to ``B(x)`` with up to 64 leaves (grown best-first, so smaller trees are prefixes), plain (with and without the leaf-size floor,
  so the CART baseline's own leaves are candidates) and class-balanced (and one-vs-rest per class
  when there are more than two), depth at most ``2 * max_width``. A path is split into a
  descriptor (its predicates on features of interest, or its first one to three) and a decision
  rule (the rest, possibly empty: "if q then c"); a path's tails also stand alone as descriptors;
* **two-level paths**: descriptors from a tree over the features of interest only (depth
  ``max_width``), and, inside each descriptor's rows, decision rules from a tree over all features.

Bounds on one feature along a path are merged (``x > 2 AND x <= 7``), so predicates are counted as
a CART rule counts them. ``min_leaf`` rows (default 0.5 % of rows, at least 5) is the support floor.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd
import pandas.api.types as ptypes
from sklearn.tree import DecisionTreeClassifier

from ..types import Predicate

__all__ = ["tree_paths"]

Path = tuple[tuple[Predicate, ...], tuple[Predicate, ...]]


class _Encoder:
    """Numeric columns as floats, other columns one-hot (the CART surrogate's encoding)."""

    def __init__(self, X: pd.DataFrame, features: Sequence[str]):
        self.features = [str(f) for f in features]
        dtypes = _dtypes(X)  # one lookup for every column (a wide table: not a Series per column)
        self.levels = {f: sorted({v.item() if isinstance(v, np.generic) else v for v in X[f].dropna().unique()},
                                 key=str) for f in self.features
                       if not (ptypes.is_numeric_dtype(dtypes[f]) and not ptypes.is_bool_dtype(dtypes[f]))}
        self.cols = []
        for f in self.features:
            self.cols += [(f, lv) for lv in self.levels[f]] if f in self.levels else [(f, None)]

    def encode(self, X: pd.DataFrame) -> np.ndarray:
        out = np.empty((len(X), len(self.cols)), np.float32)
        dtypes, at, block, where = _dtypes(X), 0, [], []
        for f in self.features:
            if f in self.levels:
                v = X[f].to_numpy()
                for lv in self.levels[f]:
                    out[:, at] = v == lv
                    at += 1
                continue
            if isinstance(dtypes[f], np.dtype) and dtypes[f].kind in "biuf":  # numpy numbers: one block below
                block.append(f)
                where.append(at)
            else:
                out[:, at] = pd.to_numeric(X[f], errors="coerce").to_numpy(dtype=np.float32)
            at += 1
        if block:
            out[:, where] = X[block].to_numpy(dtype=np.float32)
        return out


def _dtypes(X: pd.DataFrame) -> dict:
    """Each column's dtype by its name as text."""
    return dict(zip(map(str, X.columns), X.dtypes))


def _node_paths(tree: DecisionTreeClassifier, enc: _Encoder, by_node: bool = False):
    """Predicates of every non-root node, root-first, bounds on one feature merged.

    With ``by_node``: a dict node id -> predicates instead of a list.
    """
    t = tree.tree_
    out = []

    def preds(bounds, order):
        res = []
        for f in order:
            d = bounds[f]
            if f in enc.levels:
                if "==" in d:
                    res.append(Predicate(f, "==", d["=="]))
                else:
                    allowed = tuple(lv for lv in enc.levels[f] if lv not in d["not"])
                    if not allowed:
                        return None
                    res.append(Predicate(f, "==", allowed[0]) if len(allowed) == 1 else Predicate(f, "in", allowed))
            else:
                if ">" in d:
                    res.append(Predicate(f, ">", float(d[">"])))
                if "<=" in d:
                    res.append(Predicate(f, "<=", float(d["<="])))
        return tuple(res)

    def walk(node, bounds, order):
        leaf = t.children_left[node] == -1
        if node != 0:
            p = preds(bounds, order)
            if p and by_node:
                ids[node] = p
            elif p:
                out.append(p)
        if leaf:
            return
        f, lv = enc.cols[t.feature[node]]
        thr = float(t.threshold[node])
        for child, side in ((t.children_left[node], "le"), (t.children_right[node], "gt")):
            b = {k: {kk: (set(vv) if kk == "not" else vv) for kk, vv in v.items()} for k, v in bounds.items()}
            d = b.setdefault(f, {})
            o = order if f in order else order + [f]
            if lv is None:
                if side == "le":
                    d["<="] = min(d.get("<=", np.inf), thr)
                else:
                    d[">"] = max(d.get(">", -np.inf), thr)
            elif side == "gt":
                d["=="] = lv
            else:
                d.setdefault("not", set()).add(lv)
            walk(child, b, o)

    ids: dict[int, tuple[Predicate, ...]] = {}
    walk(0, {}, [])
    return ids if by_node else out


def _prefix_leaves(tree: DecisionTreeClassifier, k: int) -> list[int]:
    """Leaves of the ``k``-leaf tree that best-first growth built on the way to ``tree``.

    scikit-learn's best-first builder (``max_leaf_nodes``) numbers nodes as it creates them, so the
    first ``k - 1`` splits are the internal nodes with the smallest child ids.
    """
    t = tree.tree_
    internal = sorted(np.flatnonzero(t.children_left != -1), key=lambda n: t.children_left[n])[:k - 1]
    split = set(int(n) for n in internal)
    nodes = [0] + [int(c) for n in internal for c in (t.children_left[n], t.children_right[n])]
    return [n for n in nodes if n not in split]


def _splits(path: tuple[Predicate, ...], interest: set[str] | None, max_width: int) -> list[Path]:
    """Descriptor / decision-rule splits of a root-first path that fit the widths.

    With features of interest the descriptor is the path's predicates on them; otherwise every
    cut ``path[:k] | path[k:]`` that fits (early cuts give descriptors many paths share, which
    the neighborhood budget needs).
    """
    if interest is not None:
        q = tuple(p for p in path if p.feature in interest)
        s = tuple(p for p in path if p.feature not in interest)
        return [(q, s)] if q and len(q) <= max_width and len(s) <= max_width else []
    return [(path[:k], path[k:]) for k in range(max(1, len(path) - max_width), min(max_width, len(path)) + 1)]


def _fit(Z, y, leaves, depth, min_leaf, balanced, seed):
    return DecisionTreeClassifier(max_leaf_nodes=leaves, max_depth=depth, min_samples_leaf=min_leaf,
                                  class_weight="balanced" if balanced else None, random_state=seed).fit(Z, y)


def tree_paths(X: pd.DataFrame, y: np.ndarray, *, interest: set[str] | None, max_width: int,
               min_leaf: int | None = None, leaves: int = 64, n_descriptors: int = 12,
               max_rules: int = 10, seed: int = 0) -> tuple[list[Path], list[list[Path]]]:
    """Candidate ``(descriptor, decision rule)`` predicate pairs from trees fitted to ``y``.

    Parameters
    ----------
    X : DataFrame of shape (n_rows, n_features)
    y : ndarray of int, shape (n_rows,)
        Black-box labels as class indices.
    interest : set of str or None
        Features of interest; descriptors use only these (MUSE's customisation).
    max_width : int
        Predicates allowed in a descriptor and in a decision rule.
    min_leaf : int, optional
        Fewest rows in a tree node (default ``max(5, 0.005 * n_rows)``).
    leaves : int, default=64
        ``max_leaf_nodes`` of the full-path trees (best-first growth: every smaller tree of the same
        settings is a prefix, so its nodes are among these).
    n_descriptors : int, default=12
        Largest descriptor nodes of the features-of-interest tree that get their own inner tree.
    max_rules : int, default=10
        Trees with 2 to ``2 * max_rules + 1`` leaves give the starting sets.
    seed : int, default=0

    Returns
    -------
    pairs : list of (tuple of Predicate, tuple of Predicate)
        Distinct pairs, descriptor non-empty, each part at most ``max_width`` predicates.
    starts : list of list of pairs
        Per CART tree with 2, 3, ... leaves, its leaves not of the default label (the label of the
        most rows) as pairs: the tree drawn as a decision set, a starting point for the search.
    """
    n = len(X)
    if n < 4 or len(np.unique(y)) < 2:
        return [], []
    min_leaf = int(min_leaf or max(5, round(0.005 * n)))
    enc = _Encoder(X, X.columns)
    Z = enc.encode(X)
    targets = [y] + ([(y == c).astype(int) for c in np.unique(y)] if len(np.unique(y)) > 2 else [])
    found: dict[Path, None] = {}
    for target in targets:
        for balanced, floor in ((False, 1), (False, min_leaf), (True, min_leaf)):
            tree = _fit(Z, target, leaves, 2 * max_width, floor, balanced, seed)
            for path in _node_paths(tree, enc):
                for pair in _splits(path, interest, max_width):
                    found.setdefault(pair, None)
                for k in range(1, len(path)):  # a path's tail alone ("capital-gain > 5119"), as the flat set has it
                    tail = path[k:]
                    if len(tail) <= max_width and (interest is None or {p.feature for p in tail} <= interest):
                        found.setdefault((tail, ()), None)
    feats = [f for f in map(str, X.columns) if interest is None or f in interest]
    enc_q = enc if feats == enc.features else _Encoder(X, feats)  # every feature: the same encoding, made once
    outer = _fit(Z if enc_q is enc else enc_q.encode(X), y, 2 ** max_width, max_width, min_leaf, False, seed)
    desc = [p for p in _node_paths(outer, enc_q) if len(p) <= max_width]
    from ..rules import conjunction_mask

    masks = [conjunction_mask(q, X) for q in desc]
    for q, m in sorted(zip(desc, masks), key=lambda t: -int(t[1].sum()))[:n_descriptors]:
        if m.sum() < 2 * min_leaf or len(np.unique(y[m])) < 2:
            continue
        if enc.levels:  # level columns: the descriptor's rows have their own levels
            Xi = X.loc[m]
            inner_enc = _Encoder(Xi, X.columns)
            Zi = inner_enc.encode(Xi)
        else:  # numbers only: the descriptor's rows of Z are their encoding
            inner_enc, Zi = enc, Z[m]
        for balanced in (False, True):
            inner = _fit(Zi, y[m], 2 ** max_width, max_width, min_leaf, balanced, seed)
            for s in _node_paths(inner, inner_enc):
                if len(s) <= max_width:
                    found.setdefault((q, s), None)
            found.setdefault((q, ()), None)
    starts = _starting_sets(Z, y, enc, interest, max_width, max_rules, seed, found)
    return list(found), starts


def _starting_sets(Z, y, enc, interest, max_width: int, max_rules: int, seed: int, found: dict) -> list[list[Path]]:
    """Per CART tree with 2, 3, ... ``2 * max_rules + 1`` leaves (prefixes of one best-first tree), its leaves not
    of the default label as pairs (:func:`tree_paths`' ``starts``); each pair is also added to ``found``. A tree
    with a leaf that cannot be written as a pair gives no starting set."""
    starts = []
    big = _fit(Z, y, 2 * max_rules + 1, 2 * max_width, 1, False, seed)
    paths_of, t = _node_paths(big, enc, by_node=True), big.tree_
    for k in range(2, t.n_leaves + 1):
        leaves_ = [(paths_of.get(n, ()), int(np.argmax(t.value[n][0])), int(t.n_node_samples[n]))
                   for n in _prefix_leaves(big, k)]
        rows: dict[int, int] = {}
        for _, lab, cnt in leaves_:
            rows[lab] = rows.get(lab, 0) + cnt
        dflt = max(rows, key=lambda c: (rows[c], -c))
        pairs = []
        for path, lab, _ in leaves_:
            if lab == dflt:
                continue
            if not path:
                pairs = None
                break
            cut = _splits(path, interest, max_width)
            if not cut:
                pairs = None
                break
            pairs.append(cut[0])
            found.setdefault(cut[0], None)
        if pairs:
            starts.append(pairs)
    return starts
