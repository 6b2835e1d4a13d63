"""Head statistics and roles of Voita et al. (2019, arXiv 1905.09418).

Pure numpy over attention matrices whose rows are queries and columns keys
at the same positions (word level after merging pieces, docs/methods.md, "Attention", or
token level). :class:`RoleAccumulator` collects counts sentence by sentence
so that a dataset never has to be held in memory; :meth:`finalize` applies
the product rules of docs/methods.md, "Head roles and head importance":

* **confidence**: mean over queries of the largest weight on a valid
  (non-EOS, non-special) target, not renormalised;
* **positional(r)**: the modal argmax offset ``r != 0`` has share >= 0.90
  (inclusive); ``self`` when ``r == 0`` with share >= 0.90;
* **rare_word**: share of queries whose argmax is the sentence's least
  frequent word (frequencies from the dataset, ties -> leftmost,
  punctuation excluded) >= 0.5 [D];
* **syntactic(rel,dir)**: accuracy of the argmax against gold arcs is at
  least the positional baseline (most frequent offset for that relation and
  direction) + 0.10, absolute [P: "10% above"; absolute assumed, D].
"""
from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence

import numpy as np

from explainers.text._types import HeadRoles

__all__ = ["RoleAccumulator", "head_roles", "rarest_position", "DEFAULT_RELATIONS"]

#: The relations of Voita et al. (UD v2 names ``dobj`` ``obj``) [P].
DEFAULT_RELATIONS = ("nsubj", "obj", "amod", "advmod")
_MAX_OFFSET = 512


class RoleAccumulator:
    """Accumulates per-head counts over sentences, then labels the heads.

    Parameters
    ----------
    n_layers, n_heads : int
    relations : sequence of str, default=DEFAULT_RELATIONS
    positional_threshold : float, default=0.90 (inclusive)
    rare_threshold : float, default=0.5
    syntactic_margin : float, default=0.10 (absolute)
    min_arcs : int, default=10
        Relations with fewer arcs are not used for labels.
    """

    def __init__(self, n_layers: int, n_heads: int, relations: Sequence[str] = DEFAULT_RELATIONS,
                 positional_threshold: float = 0.90, rare_threshold: float = 0.5,
                 syntactic_margin: float = 0.10, min_arcs: int = 10):
        self.shape = (n_layers, n_heads)
        self.relations = tuple(relations)
        self.params = dict(positional_threshold=positional_threshold, rare_threshold=rare_threshold,
                           syntactic_margin=syntactic_margin, min_arcs=min_arcs,
                           relations=list(self.relations), positional_inclusive=True,
                           syntactic_margin_kind="absolute")
        self.conf_sum = np.zeros(self.shape)
        self.offsets = np.zeros(self.shape + (2 * _MAX_OFFSET + 1,))
        self.rare_hits = np.zeros(self.shape)
        self.rare_queries = 0
        self.n_queries = 0
        self.syn_hits: dict = defaultdict(lambda: np.zeros(self.shape))
        self.syn_offsets: dict = defaultdict(Counter)

    def add(self, weights: np.ndarray, valid_targets: np.ndarray | None = None,
            rare_index: int | None = None, heads: Sequence[int] | None = None,
            deprels: Sequence[str] | None = None) -> None:
        """Add one sentence.

        Parameters
        ----------
        weights : ndarray of shape (n_layers, n_heads, n_queries, n_keys)
            Query ``i`` and key ``i`` are the same position.
        valid_targets : ndarray of bool, shape (n_keys,), optional
            Keys allowed as argmax / confidence targets (False for EOS or
            special columns); default all.
        rare_index : int, optional
            Position of the sentence's rarest word; None to skip the sentence
            for the rare-word statistic.
        heads : sequence of int, optional
            Gold governor of each position (-1 for the root).
        deprels : sequence of str, optional
            Gold relation of each position to its governor.

        Raises
        ------
        ValueError
            If ``weights`` is not 4-D or does not match the head count.
        """
        w = np.asarray(weights, dtype=float)
        if w.ndim != 4 or w.shape[:2] != self.shape:
            raise ValueError(f"weights must have shape {self.shape} + (Q, K), got {w.shape}")
        nq, nk = w.shape[2:]
        if valid_targets is not None:
            w = np.where(np.asarray(valid_targets, bool)[None, None, None, :], w, -np.inf)
        best = w.max(-1)  # (L, H, Q)
        arg = w.argmax(-1)
        self.conf_sum += best.sum(-1)
        self.n_queries += nq
        off = np.clip(arg - np.arange(nq)[None, None, :], -_MAX_OFFSET, _MAX_OFFSET) + _MAX_OFFSET
        idx_l, idx_h = np.indices(self.shape)
        np.add.at(self.offsets, (idx_l[..., None], idx_h[..., None], off), 1)
        if rare_index is not None:
            self.rare_hits += (arg == rare_index).sum(-1)
            self.rare_queries += nq
        if heads is not None and deprels is not None:
            for v, (g, rel) in enumerate(zip(heads, deprels)):
                if rel not in self.relations or g < 0 or g >= nk or v >= nq:
                    continue
                self.syn_hits[(rel, "d2h")] += arg[:, :, v] == g  # dependent -> head
                self.syn_offsets[(rel, "d2h")][g - v] += 1
                if g < nq:
                    self.syn_hits[(rel, "h2d")] += arg[:, :, g] == v  # head -> dependent
                    self.syn_offsets[(rel, "h2d")][v - g] += 1

    def finalize(self) -> HeadRoles:
        """Shares, best relations and role labels of every head."""
        if self.n_queries == 0:
            raise ValueError("no sentence was added")
        p = self.params
        n = self.n_queries
        share = self.offsets / n
        modal = share.argmax(-1)
        modal_share = share.max(-1)
        modal_offset = modal - _MAX_OFFSET
        rare = self.rare_hits / max(self.rare_queries, 1)
        L, H = self.shape
        best_rel = [["" for _ in range(H)] for _ in range(L)]
        best_acc, best_base = np.full(self.shape, np.nan), np.full(self.shape, np.nan)
        best_gain = np.full(self.shape, -np.inf)
        for key, hits in self.syn_hits.items():
            total = sum(self.syn_offsets[key].values())
            if total < p["min_arcs"]:
                continue
            acc = hits / total
            base = max(self.syn_offsets[key].values()) / total
            better = acc - base > best_gain
            best_gain = np.where(better, acc - base, best_gain)
            best_acc = np.where(better, acc, best_acc)
            best_base = np.where(better, base, best_base)
            for layer, head in zip(*np.nonzero(better)):
                best_rel[layer][head] = f"{key[0]}:{key[1]}"
        labels = []
        for layer in range(L):
            row = []
            for head in range(H):
                roles = []
                if modal_share[layer, head] >= p["positional_threshold"]:
                    r = int(modal_offset[layer, head])
                    roles.append("self" if r == 0 else f"positional({r:+d})")
                margin = best_acc[layer, head] - best_base[layer, head]
                if best_rel[layer][head] and margin >= p["syntactic_margin"] - 1e-12:
                    rel, d = best_rel[layer][head].split(":")
                    roles.append(f"syntactic({rel},{d})")
                if self.rare_queries and rare[layer, head] >= p["rare_threshold"]:
                    roles.append("rare_word")
                row.append(tuple(roles))
            labels.append(tuple(row))
        return HeadRoles(
            confidence=self.conf_sum / n, modal_offset=modal_offset, modal_share=modal_share,
            share_prev=share[:, :, _MAX_OFFSET - 1], share_next=share[:, :, _MAX_OFFSET + 1],
            rare_share=rare, syntactic_best=tuple(tuple(r) for r in best_rel),
            syntactic_accuracy=best_acc, syntactic_baseline=best_base, labels=tuple(labels),
            n_queries=n, params=dict(p))


def head_roles(sentences: Sequence[np.ndarray], **kwargs) -> HeadRoles:
    """Convenience: roles from a list of (n_layers, n_heads, T, T) matrices.

    Parameters
    ----------
    sentences : sequence of ndarray of shape (n_layers, n_heads, T, T)
        No special tokens (every key is a valid target).
    **kwargs
        Passed to :class:`RoleAccumulator`.

    Returns
    -------
    HeadRoles
    """
    first = np.asarray(sentences[0])
    acc = RoleAccumulator(first.shape[0], first.shape[1], **kwargs)
    for w in sentences:
        acc.add(w)
    return acc.finalize()


def rarest_position(words: Sequence[str], counts: Counter, is_candidate: Sequence[bool]) -> int | None:
    """Index of the least frequent candidate word (ties -> leftmost), or None.

    Parameters
    ----------
    words : sequence of str
        Compared lower-cased with ``counts``.
    counts : collections.Counter
        Word frequencies counted over the dataset.
    is_candidate : sequence of bool
        False for punctuation (never a rare-word target).
    """
    best, best_count = None, None
    for i, (w, ok) in enumerate(zip(words, is_candidate)):
        if not ok:
            continue
        c = counts[w.lower()]
        if best_count is None or c < best_count:
            best, best_count = i, c
    return best
