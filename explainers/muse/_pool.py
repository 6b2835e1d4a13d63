"""Ground set ``V = ND x DL x C`` of candidate triples (docs/methods.md, "Rule surrogates: MUSE and CART").

Deviations, all named parameters of the estimators [D]:

* ``candidate_rank="wracc"`` picks the K decision rules by the Kloesgen
  measure ``max_c sqrt(support(s)/N) * (prec_c(s) - p_c)`` (weighted relative
  accuracy with the support exponent 1/2, which favours precise rules) with
  CN2-SD covering weights (so they describe different rows), among the 1000
  best by the unweighted measure, instead of by support; ``"support"`` is the
  ranking by support as in BETA/MUSE [P]. With plain WRAcc (exponent 1) the pool on COMPAS
  held only broad, imprecise rules (measured held-out agreement 0.83 vs 0.91). Descriptors are always ranked
  by support.
* each ``(q, s)`` pair keeps only its majority black-box label and needs joint
  support ``>= min_support / 2`` (an optional pruning of the ground set); a pair with two bounds
  of one direction on one feature (``x > 0`` in ``q``, ``x > 4`` in ``s``) is dropped, since one
  of its predicates says nothing.
* ``prune_majority_label=True`` (estimator default) drops triples that predict
  the overall majority black-box label: the default rule already gives that
  label, and BETA's cover term would otherwise spend the budget on rules that
  change no prediction.
* the flat (IDS-style) pool is the set of distinct conjunctions ``q AND s`` of
  the two-level pool plus every decision rule alone, each as a one-level rule.
* ``extra`` pairs (paths of trees fitted to the black box's labels,
  ``explainers.muse._tree_candidates``) join the pool with their own support floor
  ``extra_min_rows``, below ``min_support / 2``: they are where the labels change.
"""
from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ._items import Item, _redundant, itemset_masks, itemset_support, kept, mine_itemsets

__all__ = ["Pool", "build_pool"]


@dataclass
class Pool:
    """Candidate triples over item indices; ``cov`` is over the rows the pool was built on."""

    desc: list[tuple[int, ...]]
    dl: list[tuple[int, ...]]
    q_id: np.ndarray
    s_id: np.ndarray
    label: np.ndarray
    cov: np.ndarray
    npreds: np.ndarray
    A: np.ndarray


def _width(itemset: Sequence[int], items: Sequence[Item]) -> int:
    return sum(len(items[i].predicates) for i in itemset)


def _class_counts(masks: np.ndarray, Y1: np.ndarray) -> np.ndarray:
    return np.rint(masks.astype(np.float32) @ Y1).astype(np.int64)


def _weighted_covering(masks: np.ndarray, Y1: np.ndarray, targets: Sequence[int], k: int) -> list[int]:
    """Pick ``k`` itemsets by the Kloesgen measure ``sqrt(cov) * (prec_c - p_c)`` with CN2-SD weights.

    After each pick, a row covered ``j`` times gets weight ``1 / (j + 1)``
    (Lavrac, Kavsek, Flach, Todorovski 2004, "Subgroup discovery with CN2-SD",
    JMLR 5), so later picks describe rows earlier ones missed.
    """
    N = Y1.shape[0]
    mf = masks.astype(np.float32)
    times = np.zeros(N, dtype=np.float32)
    chosen: list[int] = []
    alive = np.ones(len(masks), dtype=bool)
    for _ in range(min(k, len(masks))):
        w = 1.0 / (1.0 + times)
        cnt = mf @ (Y1 * w[:, None])
        tot = cnt.sum(axis=1, keepdims=True)
        prior = (Y1 * w[:, None]).sum(axis=0) / w.sum()
        wsum = w.sum()
        with np.errstate(invalid="ignore", divide="ignore"):
            gain = np.where(tot > 0, cnt / np.maximum(tot, 1e-12) - prior, -np.inf)
        wr = (np.sqrt(tot / wsum) * gain)[:, targets].max(axis=1)
        wr[~alive] = -np.inf
        j = int(np.argmax(wr))
        chosen.append(j)
        alive[j] = False
        times += masks[j]
    return chosen


_BASES: OrderedDict = OrderedDict()
_BASES_LOCK = threading.Lock()
BASES_KEPT = 4
"""Results of :func:`_base_pairs` kept in the process, least recently used dropped."""


def _base_pairs(I, items, y, Y1, interest, min_support, max_width, top_k, candidate_rank, dl_exclude_interest,
                prune_majority_label, prefilter, seed):
    """The pool's mined descriptors, decision rules and their pairs (item indices, coverage over the rows).

    They depend on the rows, the mined items, the black box's labels and the pool's settings, never on the rule
    budgets, so the last :data:`BASES_KEPT` are kept, keyed by a SHA-256 of all of these: a frontier builds MUSE's
    pool at four budgets and the flat set's at four, and only the tree paths (cut to each budget) differ
    (2.7 of 4.9 CPU s of pool building over a frontier on Adult). Callers get their own lists.
    """
    h = hashlib.sha256(repr((I.shape, [it.predicates for it in items], None if interest is None else
                             sorted(interest), min_support, max_width, top_k, candidate_rank, dl_exclude_interest,
                             prune_majority_label, prefilter, seed, Y1.shape[1])).encode())
    h.update(np.packbits(np.asarray(I, dtype=bool)).tobytes())
    h.update(np.ascontiguousarray(y, dtype=np.int64).tobytes())
    key = h.digest()
    found = kept(_BASES, _BASES_LOCK, BASES_KEPT, key,
                 lambda: _compute_base_pairs(I, items, Y1, interest, min_support, max_width, top_k, candidate_rank,
                                             dl_exclude_interest, prune_majority_label, prefilter, seed))
    desc, dl, rows_q, rows_s, covs = found
    return list(desc), list(dl), list(rows_q), list(rows_s), list(covs)


def _by_support(idx: list[int], sup: np.ndarray) -> list[int]:
    """``idx`` in decreasing support, ties by index: ``sorted(idx, key=lambda k: (-sup[k], k))`` as one lexsort."""
    idx = np.asarray(idx, dtype=np.intp)
    return idx[np.lexsort((idx, -sup[idx]))].tolist() if idx.size else []


def _compute_base_pairs(I, items, Y1, interest, min_support, max_width, top_k, candidate_rank, dl_exclude_interest,
                        prune_majority_label, prefilter, seed):
    """:func:`_base_pairs` computed."""
    N, n_classes = Y1.shape
    mined = mine_itemsets(I, items, min_support, max_width, seed=seed)
    sup = np.array([t[1] for t in mined])
    if interest is not None:  # the itemsets' features are only needed to test them against the features of interest
        feats = [frozenset(items[i].feature for i in s) for s, _ in mined]
        nd_idx = [k for k, f in enumerate(feats) if f <= interest]
        dl_idx = [k for k, f in enumerate(feats) if not (dl_exclude_interest and interest and f & interest)]
    else:
        nd_idx = dl_idx = list(range(len(mined)))
    nd_idx = _by_support(nd_idx, sup)[:top_k]
    if candidate_rank == "support" or not dl_idx:
        dl_idx = _by_support(dl_idx, sup)[:top_k]
    else:
        majority = int(np.argmax(Y1.sum(axis=0)))
        targets = [c for c in range(n_classes) if not (prune_majority_label and c == majority)] or [majority]
        cnt = itemset_support(I, [mined[k][0] for k in dl_idx], Y1).astype(float)
        tot = cnt.sum(axis=1, keepdims=True)
        q = (np.sqrt(tot / N) * (cnt / np.maximum(tot, 1) - Y1.mean(axis=0)))[:, targets].max(axis=1)
        pre = np.lexsort((np.arange(len(dl_idx)), -q))[:prefilter]
        dl_idx = [dl_idx[o] for o in pre]
        order = _weighted_covering(itemset_masks(I, [mined[k][0] for k in dl_idx]), Y1, targets, top_k)
        dl_idx = [dl_idx[o] for o in order]
    desc = [mined[k][0] for k in nd_idx]
    dl = [mined[k][0] for k in dl_idx]
    mq, ms = itemset_masks(I, desc), itemset_masks(I, dl)
    rows_q, rows_s, covs = [], [], []
    thr = min_support / 2.0 * N
    for qi in range(len(desc)):
        m = ms & mq[qi]
        ok = np.array([not _redundant(tuple(desc[qi]) + tuple(s), items) for s in dl], dtype=bool)
        keep = np.flatnonzero((m.sum(axis=1) >= thr) & ok.reshape(-1)[:len(dl)])
        rows_q += [qi] * len(keep)
        rows_s += keep.tolist()
        covs.append(m[keep])
    return desc, dl, rows_q, rows_s, covs


def build_pool(I: np.ndarray, items: Sequence[Item], y: np.ndarray, n_classes: int, *,
               interest: set[str] | None, min_support: float, max_width: int, top_k: int,
               candidate_rank: str, dl_exclude_interest: bool, flat: bool,
               prune_majority_label: bool = False, prefilter: int = 1000, seed: int = 0,
               extra: Sequence[tuple[tuple[int, ...], tuple[int, ...]]] = (), extra_min_rows: int = 1,
               mine_items: int | None = None) -> Pool:
    """Mine itemsets on ``I`` and form the candidate triples.

    Parameters
    ----------
    I : ndarray of bool, shape (n_rows, n_items)
    items : sequence of Item
    y : ndarray of int, shape (n_rows,)
        Black-box labels as class indices.
    n_classes : int
    interest : set of str or None
        Features of interest; only they may appear in descriptors (MUSE [P]).
    min_support : float
    max_width : int
        Predicates allowed in one descriptor or one decision rule.
    top_k : int
        Descriptors and decision rules kept (``K``, docs/methods.md, "Rule surrogates: MUSE and CART").
    candidate_rank : {"wracc", "support"}
    dl_exclude_interest : bool
    flat : bool
        Build the one-level pool instead.
    prune_majority_label : bool, default=False
        Drop triples whose label is the overall majority black-box label.
    prefilter : int, default=1000
        Decision rules kept by the unweighted measure before the covering pass.
    seed : int, default=0
        Seeds the FP-growth row sample.
    extra : sequence of (descriptor itemset, decision-rule itemset), optional
        Further candidate pairs (item indices; the decision rule may be empty), kept when they
        cover at least ``extra_min_rows`` rows.
    extra_min_rows : int, default=1
    mine_items : int, optional
        Only the first ``mine_items`` items (the quantile ones) are mined for itemsets; the others
        serve ``extra``.

    Returns
    -------
    Pool

    Raises
    ------
    ValueError
        On an unknown ``candidate_rank``.
    """
    if candidate_rank not in ("wracc", "support"):
        raise ValueError(f"candidate_rank must be 'wracc' or 'support', got {candidate_rank!r}")
    N = I.shape[0]
    Y1 = np.zeros((N, n_classes), dtype=np.float32)
    Y1[np.arange(N), y] = 1.0
    n_base = I.shape[1] if mine_items is None else mine_items
    desc, dl, rows_q, rows_s, covs = _base_pairs(I[:, :n_base], items[:n_base], y, Y1, interest, min_support,
                                                 max_width, top_k, candidate_rank, dl_exclude_interest,
                                                 prune_majority_label, prefilter, seed)
    thr = min_support / 2.0 * N
    if extra:
        d_pos = {t: k for k, t in enumerate(desc)}
        s_pos = {t: k for k, t in enumerate(dl)}
        seen = set(zip(rows_q, rows_s))
        pairs = []
        for q, s in extra:
            q, s = tuple(sorted(q)), tuple(sorted(s))
            if _redundant(q + s, items):
                continue
            qi, si = d_pos.setdefault(q, len(d_pos)), s_pos.setdefault(s, len(s_pos))
            if qi == len(desc):
                desc.append(q)
            if si == len(dl):
                dl.append(s)
            if (qi, si) not in seen:
                seen.add((qi, si))
                pairs.append((qi, si))
        if pairs:
            m = itemset_masks(I, [tuple(sorted(set(desc[qi]) | set(dl[si]))) for qi, si in pairs])
            keep = np.flatnonzero(m.sum(axis=1) >= extra_min_rows)
            rows_q += [pairs[k][0] for k in keep]
            rows_s += [pairs[k][1] for k in keep]
            covs.append(m[keep])
    cov = np.concatenate(covs) if covs else np.zeros((0, N), bool)
    q_id, s_id = np.asarray(rows_q, dtype=int), np.asarray(rows_s, dtype=int)
    if flat:
        thr = min(thr, extra_min_rows) if extra else thr
        conj = {tuple(sorted(set(desc[q]) | set(dl[s]))): None for q, s in zip(q_id, s_id)}
        for s in dl:
            conj.setdefault(tuple(s), None)
        dl = sorted(conj, key=lambda t: (len(t), t))
        desc = [()]
        cov = itemset_masks(I, dl)
        keep = np.flatnonzero(cov.sum(axis=1) >= thr)
        dl = [dl[k] for k in keep]
        cov = cov[keep]
        q_id, s_id = np.zeros(len(dl), dtype=int), np.arange(len(dl))
    label = _class_counts(cov, Y1).argmax(axis=1) if len(cov) else np.zeros(0, int)
    if prune_majority_label and len(label):
        keep = np.flatnonzero(label != int(np.argmax(Y1.sum(axis=0))))
        q_id, s_id, label, cov = q_id[keep], s_id[keep], label[keep], cov[keep]
    npreds = np.array([_width(desc[q], items) + _width(dl[s], items) for q, s in zip(q_id, s_id)], dtype=int)
    fq = [{items[i].feature for i in q} for q in desc]
    fs = [{items[i].feature for i in s} for s in dl]
    A = np.array([[len(a & b) for b in fs] for a in fq], dtype=float).reshape(len(desc), len(dl))
    return Pool(desc, dl, q_id, s_id, label, cov, npreds, A)
