"""Head statistics and roles of Voita et al. (2019, "Analyzing Multi-Head Self-Attention", ACL,
arXiv 1905.09418).

Pure numpy over attention matrices whose rows are queries and columns keys at the same
positions: tokens (the level the model works on; special tokens excluded as queries and as
targets) or words (pieces merged, docs/methods.md, "Attention"). :class:`RoleAccumulator`
collects counts sentence by sentence so that a dataset never has to be held in memory;
:meth:`RoleAccumulator.finalize` applies the rules of docs/methods.md, "Head roles and head
importance":

* **confidence**: mean over queries of the largest weight on a valid (non-special) target,
  not renormalised;
* **positional(r)**: the argmax is at offset ``r != 0`` for >= 0.90 (inclusive) of the
  *eligible* queries, those whose position ``query + r`` is a valid target (the first token of
  a sentence has no -1 neighbour and is not counted for -1); ``self`` for ``r == 0``;
* **rare_word**: share of queries whose argmax is (a piece of) the sentence's least frequent
  word (frequencies from the dataset, ties -> leftmost, punctuation excluded) >= 0.5 [D];
* **syntactic(rel,dir)**: accuracy of the argmax against gold arcs is at least the positional
  baseline (the best fixed offset for that relation and direction) + 0.10, absolute
  [P: "10% above"; absolute assumed, D]; *every* relation that clears the margin is a label.
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
_SE_OFFSETS = np.arange(-3, 4)  # offsets whose per-sentence counts are kept for standard errors


def _cluster_se(hits: np.ndarray, eligible: np.ndarray) -> np.ndarray:
    """Sentence-clustered standard error of the ratio sum(hits) / sum(eligible), per offset.

    hits (n_sentences, n_layers, n_heads, n_offsets), eligible (n_sentences, n_offsets);
    linearised ratio estimator ``sqrt(m/(m-1) * sum_s (h_s - p e_s)^2) / sum_s e_s`` over the
    ``m`` sentences with an eligible query; NaN when m < 2.
    """
    e = eligible[:, None, None, :]
    m = (eligible > 0).sum(0)
    total = eligible.sum(0)
    with np.errstate(invalid="ignore", divide="ignore"):
        p = hits.sum(0) / total
        var = m / (m - 1.0) * ((hits - p[None] * e) ** 2).sum(0)
        se = np.sqrt(var) / total
    return np.where(m >= 2, se, np.nan)


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
    min_coverage : float, default=0.5
        An offset is a candidate for ``modal_offset`` only if at least this share of all
        queries is eligible for it (guards against far offsets seen in a few long sentences;
        -1, 0 and +1 always qualify unless most texts are one position long).
    level : {"token", "word"}, default="token"
        What a position is; recorded in the result for display.

    References
    ----------
    Voita, Talbot, Moiseev, Sennrich, Titov 2019, ACL, arXiv 1905.09418.
    """

    def __init__(self, n_layers: int, n_heads: int, relations: Sequence[str] = DEFAULT_RELATIONS,
                 positional_threshold: float = 0.90, rare_threshold: float = 0.5,
                 syntactic_margin: float = 0.10, min_arcs: int = 10, min_coverage: float = 0.5,
                 level: str = "token"):
        if level not in ("token", "word"):
            raise ValueError(f"level must be 'token' or 'word', got {level!r}")
        self.shape = (n_layers, n_heads)
        self.relations = tuple(relations)
        self.level = level
        self.params = dict(positional_threshold=positional_threshold, rare_threshold=rare_threshold,
                           syntactic_margin=syntactic_margin, min_arcs=min_arcs,
                           min_coverage=min_coverage, relations=list(self.relations),
                           positional_inclusive=True, syntactic_margin_kind="absolute",
                           positional_denominator="eligible queries (those with a valid target at the offset)",
                           level=level)
        self.conf_sum = np.zeros(self.shape)
        self.offsets = np.zeros(self.shape + (2 * _MAX_OFFSET + 1,))
        self.eligible = np.zeros(2 * _MAX_OFFSET + 1)
        self.sent_hits: list[np.ndarray] = []  # per sentence (L, H, len(_SE_OFFSETS))
        self.sent_eligible: list[np.ndarray] = []  # per sentence (len(_SE_OFFSETS),)
        self.rare_hits = np.zeros(self.shape)
        self.rare_queries = 0
        self.n_queries = 0
        self.n_sentences = 0
        self.syn_hits: dict = defaultdict(lambda: np.zeros(self.shape))
        self.syn_arcs: Counter = Counter()
        self.syn_offsets: dict = defaultdict(Counter)

    def add(self, weights: np.ndarray, valid_targets: np.ndarray | None = None,
            rare_index: int | None = None, heads: Sequence[int] | None = None,
            deprels: Sequence[str] | None = None, *, valid_queries: np.ndarray | None = None,
            word_index: np.ndarray | None = None) -> None:
        """Add one sentence.

        Parameters
        ----------
        weights : ndarray of shape (n_layers, n_heads, n_queries, n_keys)
            Query ``i`` and key ``i`` are the same position (``n_queries <= n_keys``).
        valid_targets : ndarray of bool, shape (n_keys,), optional
            Keys allowed as argmax / confidence targets (False for [CLS], [SEP] or other
            special columns); default all.
        rare_index : int, optional
            Word index of the sentence's rarest word; None to skip the sentence for the
            rare-word statistic.
        heads : sequence of int, optional
            Gold governor (word index) of each word (-1 for the root).
        deprels : sequence of str, optional
            Gold relation of each word to its governor.
        valid_queries : ndarray of bool, shape (n_queries,), optional
            Positions counted as queries; default ``valid_targets`` (special tokens are
            neither queries nor targets).
        word_index : ndarray of int, shape (n_keys,), optional
            Word of each position (-1 for special tokens); default each position is its own
            word (word level). A word's query is its first valid position; a hit on a word is
            an argmax on any of its positions.

        Raises
        ------
        ValueError
            If ``weights`` is not 4-D, does not match the head count, or a mask or
            ``word_index`` does not match its length.
        """
        w = np.asarray(weights, dtype=float)
        if w.ndim != 4 or w.shape[:2] != self.shape:
            raise ValueError(f"weights must have shape {self.shape} + (Q, K), got {w.shape}")
        nq, nk = w.shape[2:]
        if nq > nk:
            raise ValueError(f"more queries ({nq}) than keys ({nk}): query i and key i must be one position")
        vt = np.ones(nk, bool) if valid_targets is None else np.asarray(valid_targets, bool)
        vq = vt[:nq].copy() if valid_queries is None else np.asarray(valid_queries, bool)
        wi = np.arange(nk) if word_index is None else np.asarray(word_index, int)
        for name, arr, size in (("valid_targets", vt, nk), ("valid_queries", vq, nq), ("word_index", wi, nk)):
            if arr.shape != (size,):
                raise ValueError(f"{name} must have shape ({size},), got {arr.shape}")
        qs = np.flatnonzero(vq)
        ks = np.flatnonzero(vt)
        if qs.size == 0 or ks.size == 0:
            return
        w = np.where(vt[None, None, None, :], w, -np.inf)[:, :, qs, :]
        best = w.max(-1)  # (L, H, nQ)
        arg = w.argmax(-1)
        self.conf_sum += best.sum(-1)
        self.n_queries += qs.size
        self.n_sentences += 1
        rel = arg - qs[None, None, :]
        off = np.clip(rel, -_MAX_OFFSET, _MAX_OFFSET) + _MAX_OFFSET
        idx_l, idx_h = np.indices(self.shape)
        np.add.at(self.offsets, (idx_l[..., None], idx_h[..., None], off), 1)
        diffs = (ks[None, :] - qs[:, None]).ravel()  # every (query, valid target) offset, once each
        diffs = diffs[np.abs(diffs) <= _MAX_OFFSET] + _MAX_OFFSET
        elig = np.bincount(diffs, minlength=2 * _MAX_OFFSET + 1)
        self.eligible += elig
        self.sent_eligible.append(elig[_SE_OFFSETS + _MAX_OFFSET].astype(float))
        self.sent_hits.append((rel[..., None] == _SE_OFFSETS).sum(-2).astype(float))
        target_word = wi[arg]  # (L, H, nQ) word of each argmax
        if rare_index is not None:
            self.rare_hits += (target_word == rare_index).sum(-1)
            self.rare_queries += qs.size
        if heads is not None and deprels is not None:
            self._add_arcs(arg, qs, vt, wi, heads, deprels)

    def _add_arcs(self, arg, qs, vt, wi, heads, deprels) -> None:
        first_query = {}
        for j, q in enumerate(qs):
            first_query.setdefault(int(wi[q]), (j, int(q)))
        for v, (g, rel) in enumerate(zip(heads, deprels)):
            if rel not in self.relations or g < 0:
                continue
            for key, src, dst in (((rel, "d2h"), v, g), ((rel, "h2d"), g, v)):
                if src not in first_query or not (vt & (wi == dst)).any():
                    continue  # a word cut by truncation
                j, q = first_query[src]
                self.syn_hits[key] += wi[arg[:, :, j]] == dst
                self.syn_arcs[key] += 1
                for p in np.flatnonzero(vt & (wi == dst)):
                    self.syn_offsets[key][int(p) - q] += 1

    def finalize(self) -> HeadRoles:
        """Shares, relations and role labels of every head.

        Raises
        ------
        ValueError
            If no sentence with a query was added.
        """
        if self.n_queries == 0:
            raise ValueError("no sentence was added")
        p = self.params
        n = self.n_queries
        with np.errstate(invalid="ignore", divide="ignore"):
            share = self.offsets / self.eligible  # NaN where no query is eligible
        cand = np.flatnonzero(self.eligible >= p["min_coverage"] * n)
        cand = cand[np.argsort(np.abs(cand - _MAX_OFFSET), kind="stable")]  # ties -> nearest offset
        if cand.size == 0:
            cand = np.array([_MAX_OFFSET])
        pick = cand[np.nanargmax(np.nan_to_num(share[..., cand], nan=-1.0), axis=-1)]  # (L, H)
        modal_share = np.take_along_axis(share, pick[..., None], -1)[..., 0]
        modal_offset = pick - _MAX_OFFSET
        se = _cluster_se(np.stack(self.sent_hits), np.stack(self.sent_eligible))  # (L, H, n_se)
        se_of = {int(r): se[..., i] for i, r in enumerate(_SE_OFFSETS)}
        modal_se = np.full(self.shape, np.nan)
        for r, s in se_of.items():
            modal_se = np.where(modal_offset == r, s, modal_se)
        rare = self.rare_hits / max(self.rare_queries, 1)
        L, H = self.shape
        syntactic = {}
        for key, hits in self.syn_hits.items():
            total = self.syn_arcs[key]
            if total < p["min_arcs"]:
                continue
            syntactic[f"{key[0]}:{key[1]}"] = dict(accuracy=hits / total,
                                                   baseline=max(self.syn_offsets[key].values()) / total,
                                                   n_arcs=int(total))
        best_rel = [["" for _ in range(H)] for _ in range(L)]
        best_acc, best_base = np.full(self.shape, np.nan), np.full(self.shape, np.nan)
        best_gain = np.full(self.shape, -np.inf)
        for name, s in syntactic.items():
            gain = s["accuracy"] - s["baseline"]
            better = gain > best_gain
            best_gain = np.where(better, gain, best_gain)
            best_acc = np.where(better, s["accuracy"], best_acc)
            best_base = np.where(better, s["baseline"], best_base)
            for layer, head in zip(*np.nonzero(better)):
                best_rel[layer][head] = name
        labels = _labels(modal_share, modal_offset, syntactic, rare if self.rare_queries else None, p)
        prev, nxt = _MAX_OFFSET - 1, _MAX_OFFSET + 1
        return HeadRoles(
            confidence=self.conf_sum / n, modal_offset=modal_offset, modal_share=modal_share,
            share_prev=share[:, :, prev], share_next=share[:, :, nxt],
            rare_share=rare, syntactic_best=tuple(tuple(r) for r in best_rel),
            syntactic_accuracy=best_acc, syntactic_baseline=best_base, labels=labels,
            n_queries=n, params=dict(p), level=self.level, modal_se=modal_se,
            share_prev_se=se_of[-1], share_next_se=se_of[1],
            modal_eligible=self.eligible[pick].astype(int), eligible_prev=int(self.eligible[prev]),
            eligible_next=int(self.eligible[nxt]), syntactic=syntactic, n_sentences=self.n_sentences)


def _labels(modal_share: np.ndarray, modal_offset: np.ndarray, syntactic: dict, rare: np.ndarray | None,
            p: dict) -> tuple:
    """Role labels of every head (layer, then head): ``self`` or ``positional(+r)`` when its modal offset's
    share reaches ``positional_threshold``, ``syntactic(rel,dir)`` for each relation clearing the baseline by
    ``syntactic_margin`` (largest gain first), ``rare_word`` when its share of rarest-word queries (``rare``;
    None when no query had one) reaches ``rare_threshold``."""
    labels = []
    L, H = modal_share.shape
    for layer in range(L):
        row = []
        for head in range(H):
            roles = []
            if modal_share[layer, head] >= p["positional_threshold"]:
                r = int(modal_offset[layer, head])
                roles.append("self" if r == 0 else f"positional({r:+d})")
            cleared = [(s["accuracy"][layer, head] - s["baseline"], name) for name, s in syntactic.items()
                       if s["accuracy"][layer, head] - s["baseline"] >= p["syntactic_margin"] - 1e-12]
            for _, name in sorted(cleared, key=lambda t: (-t[0], t[1])):
                rel, d = name.split(":")
                roles.append(f"syntactic({rel},{d})")
            if rare is not None and rare[layer, head] >= p["rare_threshold"]:
                roles.append("rare_word")
            row.append(tuple(roles))
        labels.append(tuple(row))
    return tuple(labels)


def head_roles(sentences: Sequence[np.ndarray], valid: Sequence[np.ndarray] | None = None,
               **kwargs) -> HeadRoles:
    """Convenience: roles from a list of (n_layers, n_heads, T, T) matrices.

    Parameters
    ----------
    sentences : sequence of ndarray of shape (n_layers, n_heads, T, T)
    valid : sequence of ndarray of bool, shape (T,), optional
        Per sentence, the positions that are queries and targets (False for [CLS] and
        [SEP]); default every position.
    **kwargs
        Passed to :class:`RoleAccumulator` (``level="word"`` when the positions are words).

    Returns
    -------
    HeadRoles
    """
    first = np.asarray(sentences[0])
    acc = RoleAccumulator(first.shape[0], first.shape[1], **kwargs)
    for i, w in enumerate(sentences):
        acc.add(w, None if valid is None else valid[i])
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
