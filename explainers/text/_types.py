"""Frozen result types of :mod:`explainers.text`.

They complement :mod:`explainers.types` (``AttentionMap``, ``AgreementReport``,
``Explanation``) with what text models need: the tokenisation record (special
tokens, padding, truncation, word-piece to word map), head roles, head
importance and the pruning curve. Arrays inside are read-only numpy arrays;
there are no model objects, so every object can be sent through ``to_dict``.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from explainers.types import AgreementReport, AttentionMap
from explainers.types._json import _jsonable

__all__ = [
    "TextEncoding",
    "TextAttention",
    "TextAgreementReport",
    "HeadRoles",
    "HeadImportance",
    "PruningCurve",
    "HeadAnalysis",
]


def _frozen(values, dtype=float) -> np.ndarray:
    arr = np.array(values, dtype=dtype, copy=True)
    arr.setflags(write=False)
    return arr


@dataclass(frozen=True)
class TextEncoding:
    """How one text was tokenised for a model.

    Parameters
    ----------
    text : str
        The input text as given.
    tokens : tuple of str, length n_tokens
        Word pieces actually fed to the model, special tokens included, no padding.
    input_ids : ndarray of int, shape (n_tokens,)
    word_index : ndarray of int, shape (n_tokens,)
        Index into ``words`` of the word each piece belongs to; -1 for special tokens.
    words : tuple of str, length n_words
        Content words (pieces merged, ``##`` removed), in order.
    special_mask : ndarray of bool, shape (n_tokens,)
        True for ``[CLS]``, ``[SEP]`` and other special tokens.
    n_special : int
        Number of special tokens, excluded from every per-token score.
    n_padding : int
        Padding tokens the batch added to this text; 0 for a single text.
        Padding never enters a score.
    truncated : bool
    n_tokens_before_truncation : int
        Length (with special tokens) the text would have without truncation.
    max_length : int
        The model's maximum input length in tokens.
    truncation_note : str
        Empty when not truncated; otherwise says where the text was cut
        (token index and the first dropped word).
    merge_rule : str
        The sub-word to word rule applied (docs/methods.md, "Attention"), for display.
    """

    text: str
    tokens: tuple[str, ...]
    input_ids: np.ndarray
    word_index: np.ndarray
    words: tuple[str, ...]
    special_mask: np.ndarray
    n_special: int
    n_padding: int
    truncated: bool
    n_tokens_before_truncation: int
    max_length: int
    truncation_note: str
    merge_rule: str

    def __post_init__(self) -> None:
        object.__setattr__(self, "tokens", tuple(self.tokens))
        object.__setattr__(self, "words", tuple(self.words))
        object.__setattr__(self, "input_ids", _frozen(self.input_ids, np.int64))
        object.__setattr__(self, "word_index", _frozen(self.word_index, np.int64))
        object.__setattr__(self, "special_mask", _frozen(self.special_mask, bool))
        n = len(self.tokens)
        for name in ("input_ids", "word_index", "special_mask"):
            if getattr(self, name).shape != (n,):
                raise ValueError(f"{name} has shape {getattr(self, name).shape}, expected ({n},)")

    @property
    def n_tokens(self) -> int:
        return len(self.tokens)

    @property
    def content_mask(self) -> np.ndarray:
        """Boolean array of shape (n_tokens,): True for content (non-special) pieces."""
        return ~self.special_mask

    def to_dict(self) -> dict:
        return _jsonable(self)


@dataclass(frozen=True)
class TextAttention:
    """Attention of every layer and head for one text, with its encoding.

    Parameters
    ----------
    attention : AttentionMap
        Weights of shape (n_layers, n_heads, n_tokens, n_tokens) over all
        tokens fed to the model (special tokens included, padding removed);
        every row sums to 1.
    encoding : TextEncoding
    logits : ndarray of shape (n_classes,)
        The model's logits for this text.
    labels : tuple of str, length n_classes
    source : str
        Model and attention implementation, for display.
    """

    attention: AttentionMap
    encoding: TextEncoding
    logits: np.ndarray
    labels: tuple[str, ...]
    source: str

    def __post_init__(self) -> None:
        object.__setattr__(self, "logits", _frozen(self.logits))

    @property
    def predicted(self) -> int:
        """Index of the predicted class (ties to the lowest index)."""
        return int(np.argmax(self.logits))

    def to_dict(self) -> dict:
        return _jsonable(self)


@dataclass(frozen=True)
class TextAgreementReport(AgreementReport):
    """Per layer and head agreement between attention and an attribution.

    Extends :class:`explainers.types.AgreementReport` (``per_head`` is
    Spearman's rho, ``kendall``, ``top_k_overlap``) with what was compared.

    Parameters
    ----------
    aggregate : str
        Per-token attention aggregate compared: ``"cls"`` or ``"mean"``.
    level : str
        ``"word"`` (pieces merged, docs/methods.md) or ``"token"``.
    n_items : int
        Number of content words (or tokens) compared.
    """

    aggregate: str = "cls"
    level: str = "word"
    n_items: int = 0

    def to_dict(self) -> dict:
        return _jsonable(self)


@dataclass(frozen=True)
class HeadRoles:
    """Voita et al. (2019) head statistics and roles, per layer and head.

    All arrays have shape (n_layers, n_heads) unless stated.

    Positions are tokens (``level="token"``, special tokens excluded as queries and targets) or
    words (``level="word"``, pieces merged). Positional shares use *eligible-query* denominators:
    a query counts for offset ``r`` only if position ``query + r`` is a valid target.

    Parameters
    ----------
    confidence : ndarray
        Mean over queries of the largest attention weight to a valid (non-special)
        target (not renormalised).
    modal_offset : ndarray of int
        Offset ``argmax - query`` with the largest eligible share (offsets that at least
        ``params["min_coverage"]`` of the queries are eligible for).
    modal_share : ndarray
        Share of the eligible queries whose argmax is at ``modal_offset``.
    share_prev, share_next : ndarray
        Share of the queries that have a -1 / +1 neighbour whose argmax is there.
    rare_share : ndarray
        Share of queries whose argmax is (a piece of) the sentence's rarest word.
    syntactic_best : tuple of tuple of str, shape (n_layers, n_heads)
        Best ``"rel:dir"`` (``dir`` is ``d2h`` dependent to head or ``h2d``)
        by accuracy minus baseline; empty string without gold arcs.
    syntactic_accuracy, syntactic_baseline : ndarray
        Accuracy of that relation and its positional baseline (NaN if none).
    labels : tuple of tuple of tuple of str
        Roles of every head, e.g. ``("positional(-1)",)``,
        ``("syntactic(nsubj,d2h)", "syntactic(obj,h2d)", "rare_word")``, or ``()``:
        every relation that clears the margin.
    n_queries : int
        Number of queries (tokens or words) the statistics were taken over.
    params : dict
        Thresholds used (positional 0.90 inclusive, rare 0.5, syntactic +0.10).
    level : {"token", "word"}
    modal_se, share_prev_se, share_next_se : ndarray
        Standard errors of those shares, clustered by sentence (ratio estimator); NaN when
        fewer than two sentences are eligible.
    modal_eligible : ndarray of int
        Denominator of ``modal_share`` (eligible queries at ``modal_offset``).
    eligible_prev, eligible_next : int
        Denominators of ``share_prev`` / ``share_next``.
    syntactic : dict
        Every relation with enough arcs: ``"rel:dir" -> {"accuracy": ndarray (n_layers, n_heads),
        "baseline": float, "n_arcs": int}``.
    n_sentences : int
    """

    confidence: np.ndarray
    modal_offset: np.ndarray
    modal_share: np.ndarray
    share_prev: np.ndarray
    share_next: np.ndarray
    rare_share: np.ndarray
    syntactic_best: tuple
    syntactic_accuracy: np.ndarray
    syntactic_baseline: np.ndarray
    labels: tuple
    n_queries: int
    params: dict = field(default_factory=dict)
    level: str = "word"
    modal_se: np.ndarray | None = None
    share_prev_se: np.ndarray | None = None
    share_next_se: np.ndarray | None = None
    modal_eligible: np.ndarray | None = None
    eligible_prev: int = 0
    eligible_next: int = 0
    syntactic: dict = field(default_factory=dict)
    n_sentences: int = 0

    def heads_with(self, role_prefix: str) -> list[str]:
        """``"layer.head"`` labels (0-based) of heads with a role starting with ``role_prefix``."""
        out = []
        for layer, row in enumerate(self.labels):
            for head, roles in enumerate(row):
                if any(r.startswith(role_prefix) for r in roles):
                    out.append(f"{layer}.{head}")
        return out

    def to_dict(self) -> dict:
        return _jsonable(self)


@dataclass(frozen=True)
class HeadImportance:
    """Gradient-based head importance (Michel et al. 2019, arXiv 1905.10650).

    Parameters
    ----------
    raw : ndarray of shape (n_layers, n_heads)
        ``E_x |dL/dxi_h|`` with L the cross-entropy against the model's own
        predicted label, averaged over texts.
    normalized : ndarray of shape (n_layers, n_heads)
        ``raw`` divided by the l2 norm of its layer (as ``run_bertology.py``).
    n_texts : int
    loss : str
        What L was, for display.
    """

    raw: np.ndarray
    normalized: np.ndarray
    n_texts: int
    loss: str

    def to_dict(self) -> dict:
        return _jsonable(self)


@dataclass(frozen=True)
class PruningCurve:
    """Agreement with the unpruned model as the least important heads are masked.

    Parameters
    ----------
    fraction_pruned : ndarray of shape (n_points,)
    n_pruned : ndarray of int, shape (n_points,)
    agreement : ndarray of shape (n_points,)
        Share of texts whose predicted label equals the unpruned model's.
    order : str
        ``"importance (one-shot)"``, ``"importance (iterative)"`` or
        ``"random(seed=s)"``; least important heads are masked first.
    pruned_heads : tuple of str
        ``"layer.head"`` in the order they were masked.
    n_texts : int
    """

    fraction_pruned: np.ndarray
    n_pruned: np.ndarray
    agreement: np.ndarray
    order: str
    pruned_heads: tuple
    n_texts: int

    def to_dict(self) -> dict:
        return _jsonable(self)


@dataclass(frozen=True)
class HeadAnalysis:
    """Everything the head-analysis job produces over one dataset.

    Parameters
    ----------
    roles : HeadRoles
        At token level (the level the model works on).
    importance : HeadImportance or None
    pruning : tuple of PruningCurve
    n_texts : int
    seconds : float
        Wall time of the job.
    source : str
        Model, dataset and settings, for display.
    word_roles : HeadRoles or None
        The same roles at word level (pieces merged), shown beside; None if not asked for.
    """

    roles: HeadRoles
    importance: HeadImportance | None
    pruning: tuple
    n_texts: int
    seconds: float
    source: str
    word_roles: HeadRoles | None = None

    def to_dict(self) -> dict:
        return _jsonable(self)
