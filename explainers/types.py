"""Frozen result types shared by every explainer.

Everything :mod:`explainers` computes leaves the package as one of these
dataclasses: plain numpy arrays and Python scalars inside, no model objects, so
that the app layer can render them and ``to_dict`` can put them in a
``dcc.Store``. Field names follow the vocabulary of ``shared/STYLE.md`` (B4):
*attribution* for local per-feature values, *base_value* for the expected
output over the *background*, *fidelity* for agreement with the black box.
"""
from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

OutputSpace = Literal["probability", "log_odds", "raw"]

__all__ = [
    "Fidelity",
    "Explanation",
    "Predicate",
    "Rule",
    "Simplification",
    "AttentionMap",
    "AgreementReport",
    "ModelSummary",
    "GlobalImportance",
]


def _as_float_array(values: Any, name: str, ndim: int) -> np.ndarray:
    arr = np.asarray(values, dtype=float)
    if arr.ndim != ndim:
        raise ValueError(f"{name} must have {ndim} dimension(s), got shape {arr.shape}")
    if _read_only_map(arr):  # a store's array: shared by every process through the page cache, never copied
        return arr
    arr = arr.copy()
    arr.setflags(write=False)
    return arr


def _read_only_map(arr: np.ndarray) -> bool:
    """Whether ``arr`` is (a read-only view of) a ``numpy.memmap`` opened read-only (``mode="r"``): nothing in
    this process can write through it, so a result type may hold it without copying."""
    if arr.flags.writeable:
        return False
    a = arr
    while isinstance(a, np.ndarray):
        if isinstance(a, np.memmap):
            return a.mode == "r"
        a = a.base
    return False


CHUNK_ROWS = 65_536
"""Rows per block of the per-feature reductions of :class:`GlobalImportance` (a memory-mapped (n, d) array is
reduced block by block: no temporary of its full size)."""


def _column_sums(arr: np.ndarray, fn) -> np.ndarray:
    """``fn(arr).sum(axis=0)`` in blocks of :data:`CHUNK_ROWS` rows, float64, shape (n_columns,)."""
    out = np.zeros(arr.shape[1])
    for start in range(0, arr.shape[0], CHUNK_ROWS):
        out += fn(np.asarray(arr[start:start + CHUNK_ROWS], dtype=float)).sum(axis=0)
    return out


def _jsonable(value: Any) -> Any:
    """Turn numpy scalars/arrays and nested dataclasses into JSON-ready values."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    return value


@dataclass(frozen=True)
class Fidelity:
    """How faithfully an explanation reproduces the black box.

    Parameters
    ----------
    metric : {"r2", "agreement", "accuracy"}
        ``r2`` is a (weighted) coefficient of determination of a local
        surrogate; ``agreement`` the share of rows where a surrogate predicts
        the black box's label.
    value : float
        The metric's value, in [0, 1] for agreement, at most 1 for R².
    n_samples : int
        Number of rows or perturbed samples the value was computed on.
    split : {"neighborhood", "holdout", "train"}
        Where those samples came from.
    """

    metric: Literal["r2", "agreement", "accuracy"]
    value: float
    n_samples: int
    split: Literal["neighborhood", "holdout", "train"]

    def to_dict(self) -> dict:
        return _jsonable(self)


@dataclass(frozen=True)
class Explanation:
    """A local feature-attribution explanation of one prediction.

    Parameters
    ----------
    method : str
        ``"shap"``, ``"lime"``, ``"integrated_gradients"`` ...
    feature_names : tuple of str, length n_features
    values : ndarray of shape (n_features,)
        Attributions in the units of ``output_space`` for class ``target``.
    base_value : float
        Expected output over the background (SHAP) or the local surrogate's
        intercept (LIME) or the output at the baseline (Integrated Gradients).
    prediction : float
        The model's output for this row, same units as ``values``.
    feature_values : ndarray of shape (n_features,)
        The explained row, in the model's input space.
    output_space : {"probability", "log_odds", "raw"}
    target : str
        Name of the explained class (or of the regression target).
    source : str
        Human-readable description of the method and its settings, shown in
        the UI next to every number, e.g. ``"SHAP 0.51.0 TreeExplainer,
        interventional, 100 background rows"``.
    fidelity : Fidelity or None
        Local fidelity (LIME's R²), if the method has one.
    params : dict
        Settings that produced the values (``seed``, ``num_samples`` ...).

    Raises
    ------
    ValueError
        If ``values``, ``feature_values`` and ``feature_names`` differ in length.
    """

    method: str
    feature_names: tuple[str, ...]
    values: np.ndarray
    base_value: float
    prediction: float
    feature_values: np.ndarray
    output_space: OutputSpace
    target: str
    source: str
    fidelity: Fidelity | None = None
    params: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "feature_names", tuple(str(n) for n in self.feature_names))
        object.__setattr__(self, "values", _as_float_array(self.values, "values", 1))
        object.__setattr__(self, "feature_values", np.asarray(self.feature_values))
        d = len(self.feature_names)
        if self.values.shape != (d,) or self.feature_values.shape != (d,):
            raise ValueError(
                f"values {self.values.shape} and feature_values {self.feature_values.shape} "
                f"must both have shape ({d},) to match feature_names"
            )

    @property
    def additivity_gap(self) -> float:
        """``|base_value + sum(values) - prediction|`` in output units."""
        return float(abs(self.base_value + self.values.sum() - self.prediction))

    def ranking(self) -> np.ndarray:
        """Feature indices by decreasing ``|value|``; ties broken by index (docs/methods.md, "Persuasive layer")."""
        return np.lexsort((np.arange(self.values.size), -np.abs(self.values)))

    def to_dict(self) -> dict:
        return _jsonable(self)


@dataclass(frozen=True)
class Predicate:
    """One condition ``feature op threshold`` on a single feature.

    Parameters
    ----------
    feature : str
    op : {"<=", ">", "==", "in"}
    threshold : float or str or tuple
        A number for ``<=``/``>``, a level for ``==``, a tuple of levels for ``in``.
    """

    feature: str
    op: Literal["<=", ">", "==", "in"]
    threshold: Any

    def __str__(self) -> str:
        from .rules import format_predicate

        return format_predicate(self.feature, self.op, self.threshold)


@dataclass(frozen=True)
class Rule:
    """The one rule type: *if* ``descriptor`` *: if* ``rule`` *then* ``label``; a flat rule has an empty descriptor.

    MUSE's triples ``(q, s, c)`` (``explainers.muse.TwoLevelRule`` is this class), the flat
    decision set's and CART's leaves (empty descriptor) are all this type; the persuasive layer
    shows one through :class:`~explainers.persuasive.ShownRule`.

    Parameters
    ----------
    descriptor : tuple of Predicate
        Neighborhood descriptor ``q`` (outer if-then); empty for a flat rule.
    rule : tuple of Predicate
        Decision-logic rule ``s`` (inner if-then).
    label : int or str
        Black-box label ``c`` the rule predicts.
    support : int
        Training rows satisfying ``q AND s``.
    coverage : float
        ``support`` as a fraction of the training rows, in [0, 1].
    precision : float
        Share of covered training rows whose black-box label is ``label``
        (the ``prec_i`` used to resolve conflicts, docs/methods.md, "Rule surrogates: MUSE and CART").
    """

    descriptor: tuple[Predicate, ...]
    rule: tuple[Predicate, ...]
    label: Any
    support: int
    coverage: float
    precision: float

    @property
    def predicates(self) -> tuple[Predicate, ...]:
        """``descriptor + rule``: the full conjunction the rule fires on."""
        return self.descriptor + self.rule

    @property
    def width(self) -> int:
        """``max(width(q), width(s))`` in predicates."""
        return max(len(self.descriptor), len(self.rule))

    def __str__(self) -> str:
        from .rules import rule_text

        return rule_text(self)


@dataclass(frozen=True)
class Simplification:
    """A persuasive view of a descriptive explanation, with what it cost: the one simplification type of
    the attribution operators (:mod:`explainers.persuasive`).

    The persuasive layer never stands alone (Herman 2017, arXiv 1711.07414):
    ``parent`` is the descriptive object it was derived from, ``previous`` the step before.

    Parameters
    ----------
    parent : Explanation
    operators : tuple of (str, dict)
        The operator chain, in application order, with parameters.
    kept : tuple of str
        Features shown.
    dropped : tuple of str
        Features hidden.
    values : ndarray of shape (n_features,)
        The simplified attributions (zeros for dropped features).
    statement : str
        Plain-language text rendered from what is shown.
    fidelity_before, fidelity_after : dict of str to float
        Fidelity measures of the parent and of the simplification.
    complexity_before, complexity_after : dict of str to int
        Complexity proxies (items, words, numbers, chunks) of both.
    items : tuple of Item
        What the reader sees, most important first.
    previous : Simplification or None
        The step this one was derived from (None for the identity view).
    sentences : tuple
        Verified sentences (:class:`~explainers.persuasive.SentenceCheck`) after the summary step.
    """

    parent: Explanation
    operators: tuple
    kept: tuple[str, ...]
    dropped: tuple[str, ...]
    values: np.ndarray
    statement: str
    fidelity_before: dict
    fidelity_after: dict
    complexity_before: dict
    complexity_after: dict
    items: tuple = ()
    previous: "Simplification | None" = None
    sentences: tuple = ()

    def to_dict(self) -> dict:
        return _jsonable(self)


@dataclass(frozen=True)
class AttentionMap:
    """Attention weights of a transformer for one input.

    Parameters
    ----------
    tokens : tuple of str, length n_tokens
    weights : ndarray of shape (n_layers, n_heads, n_tokens, n_tokens)
        Row ``q`` of ``weights[l, h]`` is query ``q``'s distribution over keys;
        every row sums to 1. Layers and heads are 0-based.
    """

    tokens: tuple[str, ...]
    weights: np.ndarray

    def __post_init__(self) -> None:
        w = _as_float_array(self.weights, "weights", 4)
        t = len(self.tokens)
        if w.shape[2:] != (t, t):
            raise ValueError(f"weights shape {w.shape} does not match {t} tokens")
        object.__setattr__(self, "weights", w)
        object.__setattr__(self, "tokens", tuple(self.tokens))

    @property
    def n_layers(self) -> int:
        return self.weights.shape[0]

    @property
    def n_heads(self) -> int:
        return self.weights.shape[1]


@dataclass(frozen=True)
class AgreementReport:
    """Agreement between each head's attention and one attribution.

    Parameters
    ----------
    per_head : ndarray of shape (n_layers, n_heads)
        Spearman rank correlation between the head's attention (from the
        query position stated in ``query``) and ``|attribution|``.
    top_k_overlap : ndarray of shape (n_layers, n_heads)
        Share of the attribution's top-k tokens among the head's top-k.
    k : int
    attribution_method : str
    query : str
        Which attention row was compared, e.g. ``"CLS row"``.
    kendall : ndarray of shape (n_layers, n_heads)
        Kendall's τ-b (scipy's default) between the head's attention and ``|attribution|``;
        ``nan`` where a vector is constant.
    """

    per_head: np.ndarray
    top_k_overlap: np.ndarray
    k: int
    attribution_method: str
    query: str
    kendall: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))


@dataclass(frozen=True)
class ModelSummary:
    """What the Model & data page reports about a model.

    Parameters
    ----------
    task : str
        ``"binary classification"`` etc.
    classes : tuple of str
    target : str
        Target column name.
    metrics : dict of str to float
        Held-out metrics (accuracy, ROC AUC).
    n_train, n_test : int
    feature_names : tuple of str
    source : str
        Where model and data came from.
    """

    task: str
    classes: tuple[str, ...]
    target: str
    metrics: dict
    n_train: int
    n_test: int
    feature_names: tuple[str, ...]
    source: str


@dataclass(frozen=True)
class GlobalImportance:
    """Attributions of many rows and their global aggregate.

    Parameters
    ----------
    feature_names : tuple of str, length n_features
    values : ndarray of shape (n_rows, n_features)
        Per-row attributions (output units as in ``output_space``).
    feature_values : ndarray of shape (n_rows, n_features)
        The explained rows (numeric), for colouring a beeswarm.
    base_value : float
    output_space : {"probability", "log_odds", "raw"}
    target : str
    source : str
    standard_error : ndarray of shape (n_rows, n_features) or None
        Standard error of each sampled attribution (0 for exact backends), same units as ``values``.

    Notes
    -----
    ``importance`` is the mean ``|attribution|`` per feature (Lundberg et al.
    2020, arXiv 1905.04610): a global aggregate, hence "importance".
    """

    feature_names: tuple[str, ...]
    values: np.ndarray
    feature_values: np.ndarray
    base_value: float
    output_space: OutputSpace
    target: str
    source: str
    standard_error: np.ndarray | None = None

    def __post_init__(self) -> None:
        v = _as_float_array(self.values, "values", 2)
        if v.shape[1] != len(self.feature_names):
            raise ValueError(f"values has {v.shape[1]} columns for {len(self.feature_names)} features")
        object.__setattr__(self, "values", v)
        object.__setattr__(self, "feature_names", tuple(self.feature_names))

    @functools.cached_property
    def importance(self) -> np.ndarray:
        """Mean ``|attribution|`` over every row, per feature, shape (n_features,); computed once, by blocks of
        rows (:data:`CHUNK_ROWS`), so a memory-mapped ``values`` is never copied whole."""
        out = _column_sums(self.values, np.abs) / max(len(self.values), 1)
        out.setflags(write=False)
        return out

    @functools.cached_property
    def importance_standard_error(self) -> np.ndarray:
        """Standard error of :attr:`importance` from the per-row sampling errors, shape (n_features,).

        ``sqrt(Σ_i se_ij²) / n_rows`` (independent rows; ``| |a| − |b| | ≤ |a − b|``); zeros when exact.
        It does not count which rows were sampled, only how well each row was estimated. Computed once, by
        blocks of rows.
        """
        if self.standard_error is None:
            return np.zeros(self.values.shape[1])
        out = np.sqrt(_column_sums(self.standard_error, np.square)) / max(len(self.standard_error), 1)
        out.setflags(write=False)
        return out
