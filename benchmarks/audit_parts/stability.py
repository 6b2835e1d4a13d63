"""Audit part: LIME's claimed standard error, and SHAP's top-k stability over background resamples.

Data: scikit-learn's breast cancer (569 x 30), the product's stratified split
(``sample_models.common.split_indices``), a ``GradientBoostingClassifier(random_state=0)``
explaining P(malignant).

* **LIME standard error.** Product: ``explainers.LimeExplainer`` with its defaults (mean of 5
  seeded fits, neighborhood doubled until the largest SE is within 2 % of the largest weight or
  2 s) gives ``params["standard_error"]`` and the size ``n`` it reached. Independent: ``lime``'s
  ``LimeTabularExplainer`` run directly with ``n`` samples and seeds 1000, 1001, ... (none the
  product used), the sample SD of each weight over those seeds divided by ``sqrt(5)``.
  ``lime_se_ratio`` is the median over rows and features of product SE / empirical SE (1 is right;
  below 1 the product understates its error).
* **SHAP top-5 stability.** Product: ``explainers.stability.rerun_stability`` over
  ``ShapExplainer`` with background seeds 0..9. Independent: ``shap.TreeExplainer`` run directly
  on the 100 training rows pandas draws with each seed, the top-5 sets of ``|φ|`` enumerated over
  the 45 pairs in numpy. ``shap_topk_stability`` is the product's mean pairwise top-5 overlap,
  averaged over the rows.

Run alone: ``python -m benchmarks.audit_parts.stability [--quick]``.
"""
from __future__ import annotations

import json
import sys
from itertools import combinations

import numpy as np
import pandas as pd


def _data():
    from sklearn.ensemble import GradientBoostingClassifier

    from sample_models.common import breast_cancer, split_indices

    X, y = breast_cancer()
    train, test = split_indices(y)
    model = GradientBoostingClassifier(random_state=0).fit(X.iloc[train], y.iloc[train])
    return X, train, test, model


def _lime_direct(X, train, model, row, seeds, n) -> np.ndarray:
    """LIME weights for ``row`` from lime itself, one fresh explainer per seed, shape (len(seeds), n_features)."""
    from lime.lime_tabular import LimeTabularExplainer

    predict = lambda a: model.predict_proba(pd.DataFrame(a, columns=X.columns))  # noqa: E731
    train_np, d = X.iloc[train].to_numpy(dtype=float), X.shape[1]
    out = []
    for s in seeds:
        exp = LimeTabularExplainer(train_np, feature_names=list(X.columns), discretize_continuous=True,
                                   discretizer="quartile", random_state=s).explain_instance(
            X.iloc[row].to_numpy(dtype=float), predict, labels=(1,), num_features=d, num_samples=n)
        w = np.zeros(d)
        for j, v in exp.local_exp[1]:
            w[j] = v
        out.append(w)
    return np.array(out)


def _lime_rows(X, train, rows, model, n_seeds):
    from explainers import LimeExplainer

    predict = lambda a: model.predict_proba(pd.DataFrame(a, columns=X.columns))  # noqa: E731
    lime = LimeExplainer(predict, training_data=X.iloc[train], class_names=("benign", "malignant"))
    ratios, per_row = [], []
    for r in rows:
        e = lime.explain(X.iloc[[r]])
        se = np.array(e.params["standard_error"])
        n, reps = e.params["num_samples"], e.params["repeats"]
        emp = _lime_direct(X, train, model, r, range(1000, 1000 + n_seeds), n).std(axis=0, ddof=1) / np.sqrt(reps)
        ok = emp > 0
        ratios.extend((se[ok] / emp[ok]).tolist())
        per_row.append((int(r), n, bool(e.params["converged"]), float(np.median(se[ok] / emp[ok])),
                        float(se.max()), float(emp.max())))
    return float(np.median(ratios)), per_row


def _lime_over_product_seeds(X, train, row, model, n_bases, n_seeds, n=1000):
    """Median SE ratio of one row with the product's fits started at ``n_bases`` disjoint seeds (fixed n)."""
    from explainers import LimeExplainer

    predict = lambda a: model.predict_proba(pd.DataFrame(a, columns=X.columns))  # noqa: E731
    lime = LimeExplainer(predict, training_data=X.iloc[train], class_names=("benign", "malignant"))
    emp = _lime_direct(X, train, model, row, range(1000, 1000 + n_seeds), n).std(axis=0, ddof=1) / np.sqrt(lime.repeats)
    meds = [float(np.median(np.array(lime.explain(X.iloc[[row]], seed=b, num_samples=n).params["standard_error"]) / emp))
            for b in lime.independent_seeds(n_bases)]
    return float(np.mean(meds)), float(np.min(meds)), float(np.max(meds))


def _shap_rows(X, train, rows, model, reruns):
    import shap

    from explainers import ModelAdapter, ShapExplainer
    from explainers.stability import rerun_stability

    product, independent = [], []
    for r in rows:
        x = X.iloc[[r]]
        adapter = ModelAdapter.for_table(model, X.iloc[train])
        st = rerun_stability(lambda s: ShapExplainer(adapter, background=X.iloc[train], target_name="malignant",
                                                     seed=s).explain(x), range(reruns), 5, method="shap")
        tops = []
        for s in range(reruns):
            bg = X.iloc[train].sample(n=100, random_state=s)
            phi = np.asarray(shap.TreeExplainer(model, data=bg, feature_perturbation="interventional",
                                                model_output="probability").shap_values(x))[0]
            tops.append(set(np.argsort(-np.abs(phi), kind="stable")[:5].tolist()))
        pairs = list(combinations(range(reruns), 2))
        product.append(st.topk_overlap)
        independent.append(float(np.mean([len(tops[i] & tops[j]) / 5 for i, j in pairs])))
    return product, independent


def run(quick: bool = False) -> tuple[list[dict], dict]:
    """Recompute both figures; returns the table rows and ``{"lime_se_ratio", "shap_topk_stability"}``."""
    X, train, test, model = _data()
    lime_rows = test[:1] if quick else test[:10]
    ratio, per_row = _lime_rows(X, train, lime_rows, model, n_seeds=5 if quick else 40)
    cal = _lime_over_product_seeds(X, train, int(test[1]), model, 2 if quick else 15, 5 if quick else 40)
    shap_rows = test[:2] if quick else test[:20]
    prod, indep = _shap_rows(X, train, shap_rows, model, reruns=3 if quick else 10)
    rows = [{"item": f"LIME SE, row {r} (n={n}, {'converged' if c else 'not converged'})",
             "product": f"max SE {p_max:.4f}", "independent": f"max SD/√5 {e_max:.4f}",
             "difference": f"median ratio {m:.2f}", "note": "lime run directly over independent seeds"}
            for r, n, c, m, p_max, e_max in per_row]
    rows.append({"item": "lime_se_ratio (median product SE / empirical SE)", "product": f"{ratio:.3f}",
                 "independent": "1 (target)", "difference": f"{ratio - 1:+.3f}",
                 "note": f"{len(lime_rows)} rows x 30 features, product seed 0 as on the page"})
    rows.append({"item": f"LIME SE ratio, row {int(test[1])}, {2 if quick else 15} product seeds (n=1000)",
                 "product": f"{cal[0]:.3f}", "independent": "0.916 (χ₄ median)", "difference": f"{cal[0] - 0.916:+.3f}",
                 "note": f"range {cal[1]:.2f}–{cal[2]:.2f}: an SD from 5 fits has a median of 0.916 σ"})
    rows.append({"item": f"SHAP top-5 stability, {len(shap_rows)} rows x 10 background seeds",
                 "product": f"{np.mean(prod):.4f}", "independent": f"{np.mean(indep):.4f}",
                 "difference": f"{np.max(np.abs(np.array(prod) - np.array(indep))):.1e} (max over rows)",
                 "note": f"shap.TreeExplainer directly; min over rows {np.min(prod):.2f}"})
    return rows, {"lime_se_ratio": round(ratio, 4), "shap_topk_stability": round(float(np.mean(prod)), 4)}


if __name__ == "__main__":
    table, figures = run(quick="--quick" in sys.argv)
    for row in table:
        print(f"{row['item']:<62} {row['product']:>16} {row['independent']:>18} {row['difference']:>22}  {row['note']}")
    print(json.dumps(figures))
