"""Semantics of a two-level decision set: firing, conflict resolution, quantities.

Implements docs/methods.md, "Rule surrogates: MUSE and CART" (conflict resolution and default rule, [D]) and the
BETA/MUSE quantities ([P]; Lakkaraju et al. 2017, arXiv 1707.01154;
2019, doi 10.1145/3306618.3314229).
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import pandas as pd

from ..rules import conjunction_mask
from ..intervals import wilson_interval
from ._types import RuleSetQuantities, TwoLevelRule

__all__ = ["fire_matrix", "resolve", "resolve_rules", "default_label", "quantities"]


def fire_matrix(rules: Sequence[TwoLevelRule], X: pd.DataFrame) -> np.ndarray:
    """Which triples fire on which rows.

    Parameters
    ----------
    rules : sequence of TwoLevelRule, length M
    X : DataFrame of shape (n_rows, n_features)

    Returns
    -------
    fired : ndarray of bool, shape (M, n_rows)
        ``fired[i, x]`` is True when ``x`` satisfies ``q_i AND s_i``.
    """
    fired = np.zeros((len(rules), len(X)), dtype=bool)
    for i, r in enumerate(rules):
        fired[i] = conjunction_mask(r.predicates, X)
    return fired


def priority_order(precision: np.ndarray, coverage: np.ndarray) -> np.ndarray:
    """Triple indices by decreasing precision, then coverage, then increasing index."""
    idx = np.arange(len(precision))
    return np.lexsort((idx, -np.asarray(coverage, float), -np.asarray(precision, float)))


def resolve(
    fired: np.ndarray, labels: Sequence[Any], precision: np.ndarray, coverage: np.ndarray, default: Any
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Apply docs/methods.md, "Rule surrogates: MUSE and CART": default, unanimous label, or the best-precision triple.

    Parameters
    ----------
    fired : ndarray of bool, shape (M, n_rows)
    labels : sequence, length M
        Label ``c_i`` of each triple.
    precision, coverage : ndarray of shape (M,)
        Training precision and coverage of each triple (the tie-break keys).
    default : label
        Label for rows no triple fires on.

    Returns
    -------
    pred : ndarray of object, shape (n_rows,)
    ambiguous : ndarray of bool, shape (n_rows,)
        Rows fired by triples of two or more different labels.
    uncovered : ndarray of bool, shape (n_rows,)
        Rows that got the default label.
    """
    M, n = fired.shape
    pred = np.empty(n, dtype=object)
    pred[:] = default
    if M == 0:
        return pred, np.zeros(n, bool), np.ones(n, bool)
    order = priority_order(precision, coverage)
    f_ord = fired[order]
    any_fired = f_ord.any(axis=0)
    first = np.argmax(f_ord, axis=0)
    lab = np.empty(M, dtype=object)
    lab[:] = list(labels)
    pred[any_fired] = lab[order][first[any_fired]]
    distinct = list(dict.fromkeys(lab.tolist()))
    n_labels_fired = np.zeros(n, dtype=int)
    for c in distinct:
        rows = np.array([lab_i == c for lab_i in lab.tolist()])
        n_labels_fired += fired[rows].any(axis=0)
    return pred, n_labels_fired >= 2, ~any_fired


def resolve_rules(
    rules: Sequence[Any], fired: np.ndarray, default: Any
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`resolve` for rule objects: their ``label``, ``precision`` and ``coverage`` are the keys.

    The one conflict resolution of every decision set in Candor (MUSE, the flat set, CART drawn as
    rules, the persuasive layer's shown rules).

    Parameters
    ----------
    rules : sequence of rules, length M
        Anything with ``label``, ``precision`` and ``coverage`` (``TwoLevelRule``, ``ShownRule``).
    fired : ndarray of bool, shape (M, n_rows)
    default : label

    Returns
    -------
    pred, ambiguous, uncovered : ndarray of shape (n_rows,)
        As :func:`resolve`.
    """
    return resolve(fired, [r.label for r in rules], np.array([r.precision for r in rules], dtype=float),
                   np.array([r.coverage for r in rules], dtype=float), default)


def default_label(fired: np.ndarray, y: np.ndarray, classes: Sequence[Any]) -> Any:
    """Majority black-box label of rows no triple covers (global majority if none).

    Ties go to the lowest class in ``classes`` order (docs/methods.md, "Conventions" convention).
    """
    unc = ~fired.any(axis=0) if fired.shape[0] else np.ones(len(y), bool)
    pool = y[unc] if unc.any() else y
    counts = [int(np.sum(pool == c)) for c in classes]
    return classes[int(np.argmax(counts))]


def quantities(
    rules: Sequence[TwoLevelRule], fired: np.ndarray, y: np.ndarray, pred: np.ndarray,
    ambiguous: np.ndarray, uncovered: np.ndarray,
) -> RuleSetQuantities:
    """The BETA/MUSE quantities plus agreement, ambiguity and default shares.

    Parameters
    ----------
    rules : sequence of TwoLevelRule, length M
    fired : ndarray of bool, shape (M, n_rows)
    y : ndarray of shape (n_rows,)
        Black-box labels ``B(x)``.
    pred, ambiguous, uncovered : ndarray of shape (n_rows,)
        Output of :func:`resolve`.

    Returns
    -------
    RuleSetQuantities
        With the Wilson 95 % interval of the agreement over these rows.
    """
    n = len(y)
    y = np.asarray(y, dtype=object)
    dis = sum(int(np.sum(fired[i] & (y != r.label))) for i, r in enumerate(rules))
    cnt = fired.sum(axis=0).astype(np.int64)
    ro = int(np.sum(cnt * (cnt - 1) // 2))
    descs = {r.descriptor for r in rules if r.descriptor}
    fo = sum(
        len({p.feature for p in q} & {p.feature for p in r.rule}) for q in descs for r in rules
    )
    hits = int(np.sum(pred == y))
    low, high = wilson_interval(hits, n)
    return RuleSetQuantities(
        agreement=hits / n if n else float("nan"),
        disagreement=int(dis),
        ruleoverlap=ro,
        cover=int(np.sum(cnt > 0)),
        size=len(rules),
        numpreds=int(sum(len(r.descriptor) + len(r.rule) for r in rules)),
        numdsets=len(descs),
        featureoverlap=int(fo),
        maxwidth=int(max((r.width for r in rules), default=0)),
        ambiguous_share=float(np.mean(ambiguous)) if n else float("nan"),
        default_share=float(np.mean(uncovered)) if n else float("nan"),
        n_rows=int(n),
        agreement_low=low,
        agreement_high=high,
    )
