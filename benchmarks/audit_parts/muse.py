"""Audit part: MUSE against CART drawn as a decision set, at 4, 7 and 10 predicates.

Datasets: Adult, COMPAS (``shared/data``, loaded and cleaned as ``benchmarks.surrogates`` says;
skipped if absent) and scikit-learn's breast cancer; a ``GradientBoostingClassifier`` on a
stratified 75/25 split is the black box, surrogates imitate its labels and are scored on the held-out
25 %.

At a predicate budget P:

* MUSE is ``TwoLevelDecisionSet(max_predicates=P)`` (Lakkaraju et al. 2019, AIES);
* CART as a decision set is the tree (``max_leaf_nodes`` 2..40) with the most leaves whose leaves
  not of the default label (the label of the most training rows) carry at most P predicates, one
  per merged bound (numeric ``<=`` / ``>``) or categorical feature, plus the default rule.

The product's figure: both agreements through ``explainers.muse`` (``evaluate_rule_set`` of the
fitted MUSE rule set and of ``CartSurrogate.decision_set_``). The independent figure: MUSE's rules
read row by row in plain Python (precision, then coverage, then index wins; no rule fires: the
default label), and CART fitted again here with scikit-learn on an encoding written here, its
predicates counted from ``tree_`` and its agreement from ``tree.predict``. Reported: MUSE minus
CART (positive: MUSE ahead), per dataset and P.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
from sklearn.tree import DecisionTreeClassifier

from benchmarks import surrogates as B
from explainers.muse import CartSurrogate, TwoLevelDecisionSet, evaluate_rule_set

BUDGETS = (4, 7, 10)
LEAVES = tuple(range(2, 41))


# ----------------------------------------------------------------------------- independent code
def _holds(p, v) -> bool:
    if p.op in ("<=", ">"):
        try:
            x = float(v)
        except (TypeError, ValueError):
            return False
        if math.isnan(x):
            return False
        return x <= float(p.threshold) if p.op == "<=" else x > float(p.threshold)
    if p.op == "==":
        return v == p.threshold
    return v in tuple(p.threshold)


def brute_force_agreement(rule_set, X: pd.DataFrame, y) -> float:
    """Agreement of a rule set read one row at a time (no ``explainers`` code)."""
    rules, hits = rule_set.rules, 0
    for (_, row), target in zip(X.iterrows(), y):
        fired = [i for i, r in enumerate(rules) if all(_holds(p, row[p.feature]) for p in r.predicates)]
        if fired:
            best = min(fired, key=lambda i: (-rules[i].precision, -rules[i].coverage, i))
            label = rules[best].label
        else:
            label = rule_set.default_label
        hits += label == target
    return float(hits / len(y))


def _encode(X: pd.DataFrame, levels: dict) -> tuple[np.ndarray, list[tuple[str, str]]]:
    cols, kinds = [], []
    for f in X.columns:
        if f in levels:
            for lv in levels[f]:
                cols.append((X[f].to_numpy() == lv).astype(float))
                kinds.append((f, "cat"))
        else:
            cols.append(pd.to_numeric(X[f], errors="coerce").to_numpy(dtype=float))
            kinds.append((f, "num"))
    return np.column_stack(cols), kinds


def _ds_predicates(tree: DecisionTreeClassifier, kinds) -> int:
    """Predicates of the tree drawn as a decision set: leaves not of the default label, one predicate
    per numeric bound direction and one per categorical feature on the path."""
    t = tree.tree_
    leaves = {}

    def walk(node, keys):
        if t.children_left[node] == -1:
            leaves[node] = len(keys)
            return
        f, kind = kinds[t.feature[node]]
        walk(t.children_left[node], keys | {(f, "<=" if kind == "num" else "cat")})
        walk(t.children_right[node], keys | {(f, ">" if kind == "num" else "cat")})

    walk(0, frozenset())
    label = {n: int(np.argmax(t.value[n][0])) for n in leaves}
    rows: dict[int, int] = {}
    for n in leaves:
        rows[label[n]] = rows.get(label[n], 0) + int(t.n_node_samples[n])
    default = max(rows, key=lambda c: (rows[c], -c))
    return sum(leaves[n] for n in leaves if label[n] != default)


def independent_cart(X_tr, b_tr, X_te, b_te, P: int) -> float:
    levels = {f: sorted({v for v in X_tr[f].dropna().unique()}, key=str)
              for f in X_tr.columns if not pd.api.types.is_numeric_dtype(X_tr[f]) or X_tr[f].dtype == bool}
    Z, kinds = _encode(X_tr, levels)
    Zt, _ = _encode(X_te, levels)
    classes, y = np.unique(b_tr, return_inverse=True)
    best = None
    for k in LEAVES:
        tree = DecisionTreeClassifier(max_leaf_nodes=k, random_state=0).fit(Z, y)
        if _ds_predicates(tree, kinds) <= P:
            best = tree
    return float(np.mean(classes[best.predict(Zt)] == b_te))


# ----------------------------------------------------------------------------- product code
def product_cart(X_tr, b_tr, X_te, b_te, P: int) -> float:
    best = None
    for k in LEAVES:
        ds = CartSurrogate(max_leaf_nodes=k, seed=0).fit(X_tr, b_tr).decision_set_
        if ds.train.numpreds <= P:
            best = ds
    return evaluate_rule_set(best, X_te, b_te).agreement


def _datasets(quick: bool):
    out = {"breast_cancer": B.load_breast_cancer_df}
    if (B.DATA / "adult" / "adult.data").exists():
        out["adult"] = B.load_adult
    if (B.DATA / "compas" / "compas-scores-two-years.csv").exists():
        out["compas"] = B.load_compas
    return out


def run(quick: bool = False) -> tuple[list[dict], dict]:
    """Rows per dataset and budget; headline ``{"muse_vs_cart": {dataset: {"4": d, "7": d, "10": d}}}``.

    ``quick`` (for CI: tiny, its figures not the audited ones): every dataset subsampled to 250 rows (seeded)
    and the brute-force MUSE reading on at most 150 held-out rows (the product's figure then uses the same rows).
    """
    rows, head = [], {}
    for name, loader in _datasets(quick).items():
        X, y = loader()
        if quick and len(X) > 250:
            keep = np.sort(np.random.default_rng(0).permutation(len(X))[:250])
            X, y = X.iloc[keep].reset_index(drop=True), y[keep]
        X_tr, X_te, b_tr, b_te, _ = B.split_and_label(X, y)
        if quick and len(X_te) > 150:
            X_te, b_te = X_te.iloc[:150], b_te[:150]
        head[name] = {}
        for P in BUDGETS:
            muse = TwoLevelDecisionSet(max_predicates=P, seed=0).fit(X_tr, b_tr).rule_set_
            m_prod = evaluate_rule_set(muse, X_te, b_te).agreement
            c_prod = product_cart(X_tr, b_tr, X_te, b_te, P)
            m_ind = brute_force_agreement(muse, X_te, b_te)
            c_ind = independent_cart(X_tr, b_tr, X_te, b_te, P)
            d_prod, d_ind = float(m_prod - c_prod), float(m_ind - c_ind)
            head[name][str(P)] = round(d_prod, 4)
            rows.append({"item": f"muse_vs_cart {name} @{P} predicates", "product": round(d_prod, 4),
                         "independent": round(d_ind, 4), "difference": round(d_prod - d_ind, 6),
                         "note": f"MUSE {m_prod:.4f} ({muse.train.numpreds} preds, {muse.train.size} rules) vs "
                                 f"CART as decision set {c_prod:.4f}; {len(b_te)} held-out rows"})
    return rows, {"muse_vs_cart": head}
