"""Audit part: ERASER AOPC (DeYoung et al. 2020, ACL, arXiv 1911.03429) and deletion/insertion AUCs
(Petsiuk et al. 2018, arXiv 1806.07421) of a top-k view, on a real COMPAS row.

Model: scikit-learn ``GradientBoostingClassifier`` (seed 0) on COMPAS two-year recidivism, cleaned as
``benchmarks/persuasive.py`` does (5 numeric columns + one-hot sex, race, charge degree), 75/25 split.
Row: the first held-out row; SHAP by the product (exact Tree SHAP); the view is the product's top-k
(:func:`explainers.persuasive.top_k_items`, k = 3). The explained output is the probability of the
predicted class; removed features take each of 100 seeded training rows' values.

* **Product**: ``fidelity_after`` of the view (AOPC over the k ranks the view shows; deletion and
  insertion AUCs as shares of ``g(x) - g(median)``).
* **Independent**: the same quantities written here in numpy from the model's ``predict_proba``: the
  view's ranks are the top-k of ``|φ|`` (argsort), every masked expectation an explicit loop over
  background rows, the curves' path and trapezoids by hand.
* **Order spread**: the old definition (AOPC over all d ranks, the hidden zeros in some order)
  computed in numpy for 30 random orders of the hidden features (min-max: what "ranked by column
  index" could give), against the product's AOPC on the same row with its hidden columns permuted
  (model, row, background and φ permuted alike), for as many permutations.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

DATA = Path(__file__).resolve().parents[3] / "shared" / "data" / "compas" / "compas-scores-two-years.csv"
K = 3


def _compas():
    from sklearn.ensemble import GradientBoostingClassifier
    from sklearn.model_selection import train_test_split

    df = pd.read_csv(DATA)
    df = df[(df.days_b_screening_arrest <= 30) & (df.days_b_screening_arrest >= -30) & (df.is_recid != -1)
            & (df.c_charge_degree != "O") & (df.score_text != "N/A")].reset_index(drop=True)
    num = ["age", "juv_fel_count", "juv_misd_count", "juv_other_count", "priors_count"]
    X = pd.concat([df[num].astype(float), pd.get_dummies(df[["sex", "race", "c_charge_degree"]], dtype=float)], axis=1)
    y = df["two_year_recid"].to_numpy()
    train, test = train_test_split(np.arange(len(X)), test_size=0.25, random_state=0, stratify=y)
    train, test = np.sort(train), np.sort(test)
    return GradientBoostingClassifier(random_state=0).fit(X.iloc[train], y[train]), X, train, test


def _expected(prob, x, keep, bg) -> float:
    """E_b[p(x_keep, b_rest)] by an explicit loop over background rows."""
    total = 0.0
    for b in bg:
        z = b.copy()
        z[keep] = x[keep]
        total += prob(z[None, :])[0]
    return total / len(bg)


def _aopc_numpy(prob, x, ranked, bg) -> tuple[float, float]:
    g = prob(x[None, :])[0]
    d = x.size
    comp = [g - _expected(prob, x, np.setdiff1d(np.arange(d), ranked[:k]), bg) for k in range(1, len(ranked) + 1)]
    suff = [g - _expected(prob, x, np.asarray(ranked[:k]), bg) for k in range(1, len(ranked) + 1)]
    return float(np.mean(comp)), float(np.mean(suff))


def run(quick: bool = False) -> tuple[list[dict], dict]:
    """Product vs numpy AOPC and normalised deletion/insertion; spread over hidden-feature orders."""
    import explainers as ex
    import explainers.persuasive as xp
    from explainers.types import Explanation

    if not DATA.is_file():
        return [dict(item="AOPC of a top-k view", product=None, independent=None, difference=None,
                     note=f"skipped: {DATA} not found")], {}
    model, X, train, test = _compas()
    d = X.shape[1]
    n_bg, n_orders = (10, 3) if quick else (100, 30)
    bg = X.iloc[train].sample(n=n_bg, random_state=0).to_numpy(dtype=float)
    train_rows = X.iloc[train].to_numpy(dtype=float)
    row = int(test[0])
    x = X.iloc[row].to_numpy(dtype=float)
    f = lambda a: model.predict_proba(pd.DataFrame(a, columns=X.columns))[:, 1]  # noqa: E731
    shap = ex.ShapExplainer(ex.ModelAdapter.for_table(model, X.iloc[train]), background=X.iloc[train], target_index=1, background_size=n_bg, seed=0)
    g = shap.explain_many(X.iloc[[row]])
    e = shap.from_row(X.iloc[[row]], g.values[0], g.base_value)
    ctx = xp.make_context(f, train_rows, bg, x, ("0", "1"), num_samples=0)
    view = xp.top_k_items(e, K, ctx).fidelity_after

    # independent: predicted-class probability, top-k of |φ|, loops in numpy
    positive = f(x[None, :])[0] >= 0.5
    prob = (lambda a: f(a)) if positive else (lambda a: 1 - f(a))
    phi = np.asarray(e.values, float) * (1 if positive else -1)
    ranked = list(np.argsort(-np.abs(phi), kind="stable")[:K])
    comp, suff = _aopc_numpy(prob, x, ranked, bg)
    median = np.median(train_rows, axis=0)
    path = [int(j) for j in np.argsort(-phi, kind="stable") if j in ranked]  # shown features, signed order
    hidden = [int(j) for j in np.argsort(-phi, kind="stable") if j not in ranked]
    shown_sign = {j: phi[j] for j in path}
    full_path = [j for j in path if shown_sign[j] > 0] + hidden + [j for j in path if shown_sign[j] <= 0]
    dele, ins = [prob(x[None, :])[0]], [prob(median[None, :])[0]]
    z_del, z_ins = x.copy(), median.copy()
    for j in full_path:
        z_del[j], z_ins[j] = median[j], x[j]
        dele.append(prob(z_del[None, :])[0])
        ins.append(prob(z_ins[None, :])[0])
    dele, ins = np.array(dele), np.array(ins)
    gap = dele[0] - dele[-1]
    trap = lambda c: float(np.mean((c[1:] + c[:-1]) / 2))  # noqa: E731
    del_norm, ins_norm = (trap(dele) - dele[-1]) / gap, (trap(ins) - dele[-1]) / gap
    small = abs(gap) < 0.25 * np.std(prob(bg))

    # spread over hidden orders: the old all-d definition (numpy) vs the product under column permutations
    rng = np.random.default_rng(0)
    old, new = [], []
    for _ in range(n_orders):
        order = ranked + list(rng.permutation([j for j in range(d) if j not in ranked]))
        old.append(_aopc_numpy(prob, x, order, bg)[0])
        perm = np.concatenate([np.arange(d)[np.isin(np.arange(d), ranked)],
                               rng.permutation(np.flatnonzero(~np.isin(np.arange(d), ranked)))])
        inv = np.argsort(perm)
        fp = lambda a, inv=inv: f(np.asarray(a, float)[:, inv])  # noqa: E731
        ep = Explanation("shap", tuple(np.array(e.feature_names)[perm]), np.asarray(e.values)[perm], e.base_value,
                         e.prediction, x[perm], e.output_space, e.target, e.source)
        cp = xp.make_context(fp, train_rows[:, perm], bg[:, perm], x[perm], ("0", "1"), num_samples=0)
        new.append(xp.top_k_items(ep, K, cp).fidelity_after["aopc_comprehensiveness"])
    rows = [
        dict(item=f"AOPC comprehensiveness, top-{K} view (COMPAS row {row})", product=view["aopc_comprehensiveness"],
             independent=comp, difference=view["aopc_comprehensiveness"] - comp,
             note=f"k = 1..{K}, the view's ranks; {n_bg} background rows; numpy loops"),
        dict(item=f"AOPC sufficiency, top-{K} view", product=view["aopc_sufficiency"], independent=suff,
             difference=view["aopc_sufficiency"] - suff, note="same"),
        dict(item="deletion AUC / (g(x) - g(median))", product=view["deletion_auc_norm"], independent=del_norm,
             difference=view["deletion_auc_norm"] - del_norm,
             note=f"path: shown positives, hidden by φ, shown negatives; gap {gap:.3f}"),
        dict(item="insertion AUC / (g(x) - g(median))", product=view["insertion_auc_norm"], independent=ins_norm,
             difference=view["insertion_auc_norm"] - ins_norm, note="same"),
        dict(item="small-gap flag", product=view["curve_gap_small"], independent=float(small),
             difference=view["curve_gap_small"] - float(small), note="|gap| < 0.25 sd of g over the background"),
        dict(item=f"AOPC comp. spread over {n_orders} hidden-feature orders, before", product=None,
             independent=float(np.ptp(old)), difference=None,
             note=f"old definition (all {d} ranks, hidden zeros in some order): {min(old):.3f}-{max(old):.3f}"),
        dict(item=f"AOPC comp. spread over {n_orders} hidden-column permutations, after",
             product=float(np.ptp(new)), independent=0.0, difference=float(np.ptp(new)),
             note=f"product on permuted columns: {min(new):.4f}-{max(new):.4f}"),
    ]
    return rows, {"aopc_product_minus_numpy": view["aopc_comprehensiveness"] - comp,
                  "aopc_order_spread_before": float(np.ptp(old)), "aopc_order_spread_after": float(np.ptp(new))}


if __name__ == "__main__":
    import json
    import sys

    out_rows, figures = run(quick="--quick" in sys.argv)
    cell = lambda v: f"{v:.4g}" if isinstance(v, float) else str(v)  # noqa: E731
    for r in out_rows:
        print(f"{r['item']:<64} {cell(r['product']):>10} {cell(r['independent']):>10} {cell(r['difference']):>10}  "
              f"{r['note']}")
    print(json.dumps(figures))
