"""Fidelity-complexity frontier of MUSE against CART and a flat decision set.

docs/methods.md, "Rule surrogates: MUSE and CART": held-out agreement plotted against number of rules, predicates
and neighborhoods, one point per budget [P]; baselines on the same axes [D]: CART drawn both leaf by
leaf (``"cart"``) and as a decision set with a default rule (``"cart_dl"``, the fair comparison),
the flat set, and the trivial surrogate (the majority label) as a reference. Every agreement
carries a Wilson 95 % interval over the held-out rows.
"""
from __future__ import annotations

import time
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from ..types import Predicate
from ..intervals import wilson_interval
from ._semantics import default_label, fire_matrix, quantities, resolve_rules
from ._types import AgreementDetail, Frontier, FrontierPoint, RuleSetQuantities, TwoLevelRule, TwoLevelRuleSet
from ._frames import _py, as_frame

__all__ = ["surrogate_frontier", "evaluate_rule_set", "predict_rule_set", "agreement_detail", "make_rule_set",
           "rule_agreement", "majority_label"]

_METHODS = ("muse", "cart", "cart_dl", "flat")


def _apply(rule_set: TwoLevelRuleSet, X):
    Xf = as_frame(X, rule_set.feature_names if not isinstance(X, pd.DataFrame) else None)
    fired = fire_matrix(rule_set.rules, Xf)
    pred, amb, unc = resolve_rules(rule_set.rules, fired, rule_set.default_label)
    return fired, pred, amb, unc


def predict_rule_set(rule_set: TwoLevelRuleSet, X) -> np.ndarray:
    """Labels a fitted rule set gives to ``X`` (docs/methods.md, "Rule surrogates: MUSE and CART" semantics).

    Parameters
    ----------
    rule_set : TwoLevelRuleSet
    X : DataFrame or ndarray of shape (n_rows, n_features)

    Returns
    -------
    ndarray of object, shape (n_rows,)
    """
    return _apply(rule_set, X)[1]


def evaluate_rule_set(rule_set: TwoLevelRuleSet, X, y_model) -> RuleSetQuantities:
    """All BETA/MUSE quantities of ``rule_set`` on ``(X, y_model)`` (e.g. held-out rows)."""
    fired, pred, amb, unc = _apply(rule_set, X)
    y = np.asarray([_py(v) for v in np.asarray(y_model)], dtype=object)
    return quantities(rule_set.rules, fired, y, pred, amb, unc)


def majority_label(y_model) -> Any:
    """The trivial surrogate's label: the most frequent label (ties: the first in sorted order)."""
    y = [_py(v) for v in np.asarray(y_model)]
    if not y:
        raise ValueError("no rows: the majority label is undefined")
    classes = sorted(set(y), key=lambda v: (str(type(v)), v))
    counts = [y.count(c) for c in classes]
    return classes[int(np.argmax(counts))]


def agreement_detail(rule_set: TwoLevelRuleSet, X, y_model, trivial_label: Any = None) -> AgreementDetail:
    """Per-class agreement and the surrogate-vs-model confusion matrix.

    Parameters
    ----------
    rule_set : TwoLevelRuleSet
    X : DataFrame or ndarray of shape (n_rows, n_features)
    y_model : array-like of shape (n_rows,)
        Black-box labels.
    trivial_label : label, optional
        The trivial surrogate's label (the training rows' majority); default: these rows' majority.

    Returns
    -------
    AgreementDetail
        ``confusion[i, j]``: rows the model labels ``classes[i]`` and the
        surrogate ``classes[j]``; classes are those of the rule set plus any
        new label in ``y_model``; the agreement's Wilson 95 % interval and the
        trivial surrogate's agreement on the same rows.
    """
    _, pred, amb, unc = _apply(rule_set, X)
    y = [_py(v) for v in np.asarray(y_model)]
    classes = list(rule_set.classes) + sorted({v for v in y} - set(rule_set.classes), key=str)
    pos = {c: i for i, c in enumerate(classes)}
    conf = np.zeros((len(classes), len(classes)), dtype=int)
    for a, b in zip(y, pred.tolist()):
        conf[pos[a], pos[b]] += 1
    rows = conf.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        per = np.where(rows > 0, np.diag(conf) / np.maximum(rows, 1), np.nan)
    n = len(y)
    low, high = wilson_interval(int(np.trace(conf)), n)
    triv = (majority_label(y) if trivial_label is None else trivial_label) if n else trivial_label
    triv_agr = float(np.mean([v == triv for v in y])) if n else float("nan")
    return AgreementDetail(tuple(classes), conf, per, float(np.trace(conf) / n) if n else float("nan"),
                           float(np.mean(amb)) if n else float("nan"), float(np.mean(unc)) if n else float("nan"), n,
                           low, high, triv, triv_agr)


def rule_agreement(rule_set: TwoLevelRuleSet, X, y_model) -> tuple[np.ndarray, np.ndarray]:
    """Each triple's own agreement with the black box on ``(X, y_model)`` (e.g. held-out rows).

    Parameters
    ----------
    rule_set : TwoLevelRuleSet
    X : DataFrame of shape (n_rows, n_features)
    y_model : array-like of shape (n_rows,)

    Returns
    -------
    agreement : ndarray of float, shape (n_rules,)
        Share of the rows a triple fires on whose black-box label is the
        triple's label (its precision on these rows); NaN if it fires on none.
    support : ndarray of int, shape (n_rules,)
        Rows each triple fires on.
    """
    fired = _apply(rule_set, X)[0]
    y = np.asarray([_py(v) for v in np.asarray(y_model)], dtype=object)
    support = fired.sum(axis=1).astype(int)
    agree = np.array([np.mean(y[f] == r.label) if f.any() else np.nan for f, r in zip(fired, rule_set.rules)])
    return agree, support


def make_rule_set(triples: Sequence[tuple[Sequence[Predicate], Sequence[Predicate], Any]], X, y_model,
                  method: str = "manual", params: Mapping[str, Any] | None = None) -> TwoLevelRuleSet:
    """Build a rule set from given ``(descriptor, rule, label)`` triples, measured on ``(X, y_model)``.

    Support, coverage and precision of each triple and the default label
    (majority black-box label of uncovered rows, docs/methods.md, "Rule surrogates: MUSE and CART") come from
    these rows, as :meth:`TwoLevelDecisionSet.fit` computes them. Use it for
    hand-written or pruned rule sets (e.g. the persuasive layer's O5).

    Parameters
    ----------
    triples : sequence of (sequence of Predicate, sequence of Predicate, label)
    X : DataFrame of shape (n_rows, n_features)
    y_model : array-like of shape (n_rows,)
        Black-box labels.
    method : str, default="manual"
    params : mapping, optional

    Returns
    -------
    TwoLevelRuleSet
    """
    Xf = as_frame(X)
    y = np.asarray([_py(v) for v in np.asarray(y_model)], dtype=object)
    classes = sorted(set(y.tolist()), key=lambda v: (str(type(v)), v))
    n = len(y)
    rules = []
    for q, s, c in triples:
        m = fire_matrix([TwoLevelRule(tuple(q), tuple(s), c, 0, 0.0, 0.0)], Xf)[0]
        sup = int(m.sum())
        rules.append(TwoLevelRule(tuple(q), tuple(s), _py(c), sup, sup / n if n else 0.0,
                                  float(np.mean(y[m] == c)) if sup else 0.0))
    fired = fire_matrix(rules, Xf)
    dflt = default_label(fired, y, classes)
    pred, amb, unc = resolve_rules(rules, fired, dflt)
    q_ = quantities(rules, fired, y, pred, amb, unc)
    return TwoLevelRuleSet(method, tuple(rules), dflt, tuple(classes), tuple(str(c) for c in Xf.columns), q_,
                           dict(params or {}))


def surrogate_frontier(X_train, y_train_model, X_eval, y_eval_model, *, budgets: Sequence[int] = (5, 10, 20),
                       methods: Sequence[str] = _METHODS, muse_params: Mapping[str, Any] | None = None,
                       seed: int = 0, progress=None) -> Frontier:
    """Sweep rule budgets and measure held-out agreement for MUSE, CART and the flat set.

    Parameters
    ----------
    X_train, X_eval : DataFrame of shape (n_train, n_features), (n_eval, n_features)
    y_train_model, y_eval_model : array-like
        Black-box labels on those rows.
    budgets : sequence of int, default=(5, 10, 20)
        ``max_rules`` for MUSE and the flat set, ``max_leaf_nodes`` for CART.
    methods : subset of {"muse", "cart", "cart_dl", "flat"}
        ``"cart_dl"`` reads the same tree as ``"cart"`` as a decision set (no second fit).
    muse_params : mapping, optional
        Extra :class:`TwoLevelDecisionSet` parameters (features of interest,
        ``max_width``, ``max_neighborhoods``, lambdas ...). The flat set gets
        the same ones except the neighborhood settings, so both draw on the
        same candidate conjunctions (flat rules have up to ``2 * max_width``
        predicates, as many as a descriptor plus a decision rule).
    seed : int, default=0
    progress : callable, optional
        Called as ``progress(done, total)`` after each fit (for a UI progress bar); ``"cart"`` and
        ``"cart_dl"`` share one fit per budget.

    Returns
    -------
    Frontier
        Points with Wilson 95 % intervals, and the trivial surrogate (training majority label)
        measured on the same held-out rows.

    Raises
    ------
    ValueError
        On an unknown method or a budget below 1 (2 for CART).
    """
    bad = set(methods) - set(_METHODS)
    if bad:
        raise ValueError(f"methods must be among {_METHODS}, got {sorted(bad)}")
    from .cart import CartSurrogate  # the estimators import scikit-learn: here, not on a server's start (issue 23)
    from .estimator import FlatDecisionSet, TwoLevelDecisionSet

    mp = dict(muse_params or {})
    fp = {k: v for k, v in mp.items() if k not in ("features_of_interest", "max_neighborhoods")}
    fits = [m for m in methods if m != "cart_dl" or "cart" not in methods]
    total, done, points = len(fits) * len(budgets), 0, []
    carts: dict[int, tuple[CartSurrogate, float]] = {}
    for method in methods:
        for b in budgets:
            if method in ("cart", "cart_dl") and int(b) in carts:
                est, dt = carts[int(b)]
            else:
                if method == "muse":
                    est = TwoLevelDecisionSet(max_rules=int(b), seed=seed, **mp)
                elif method == "flat":
                    est = FlatDecisionSet(max_rules=int(b), seed=seed, **fp)
                else:
                    est = CartSurrogate(max_leaf_nodes=int(b), seed=seed)
                t0 = time.perf_counter()
                est.fit(X_train, y_train_model)
                dt = time.perf_counter() - t0
                if method in ("cart", "cart_dl"):
                    carts[int(b)] = (est, dt)
                done += 1
                if progress is not None:
                    progress(done, total)
            rs = est.decision_set_ if method == "cart_dl" else est.rule_set_
            q = rs.train
            held = evaluate_rule_set(rs, X_eval, y_eval_model)
            points.append(FrontierPoint(method, int(b), q.size, q.numpreds, q.numdsets, held.agreement, dt, rs,
                                        held.agreement_low, held.agreement_high))
    triv = majority_label(y_train_model)
    y_eval = [_py(v) for v in np.asarray(y_eval_model)]
    hits = sum(v == triv for v in y_eval)
    low, high = wilson_interval(hits, len(y_eval))
    return Frontier(tuple(points), len(X_train), len(X_eval), triv,
                    hits / len(y_eval) if y_eval else float("nan"), low, high)
