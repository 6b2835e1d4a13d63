"""Benchmark: what top-k truncation (O1) costs in fidelity, on breast cancer and COMPAS.

Run ``python -m benchmarks.persuasive`` (``--quick``: 5 rows, 10 background rows, k = 1, 3, for CI;
its figures are not the measured ones). For k = 1, 3, 5, 10 it prints ERASER
sufficiency and comprehensiveness (DeYoung et al. 2020, arXiv 1911.03429) and
the Spearman rank correlation between ``|φ|`` and ``|φ^(k)|`` (the full and the
truncated SHAP attributions), each averaged over 100 held-out rows, so a reader
sees what each step of simplification costs. Explained output: P(positive
class); sufficiency and comprehensiveness are taken for the *predicted* class
(ERASER's definition: for a row predicted 0 the differences of P(1) change
sign, since P(0) = 1 - P(1)). Attributions: SHAP TreeExplainer, interventional, 100 background rows
of the training split (seed 0), as the app computes them. Removed features
take each background row's value and the outputs are averaged. Sufficiency is
``f(x) - f(top-k only)`` (0 is best), comprehensiveness ``f(x) - f(x without
top-k)`` (higher is more faithful). Spearman is undefined (NaN) when the
truncated vector is constant; such rows are left out of its mean (the table's
"(rows)" column counts the rows it averages). For pure top-k without ties in
``|φ|`` Spearman depends only on k and the number of features (the shown
ranks are kept, the rest tie), so on breast cancer it is the same for every
row; it varies on COMPAS, whose one-hot columns tie at 0.

Data and cleaning:

* **breast cancer**: the bundled sample (``sample_models/artifacts``,
  ``GradientBoostingClassifier`` on scikit-learn's breast cancer table, 569 x
  30); its recorded held-out split (143 rows), first 100 held-out rows.
* **COMPAS**: ``../shared/data/compas/compas-scores-two-years.csv`` with the
  usual ProPublica filter (``-30 <= days_b_screening_arrest <= 30``,
  ``is_recid != -1``, ``c_charge_degree != "O"``, ``score_text != "N/A"``;
  6,172 rows), the same as ``benchmarks.surrogates``. Features ``age,
  juv_fel_count, juv_misd_count, juv_other_count, priors_count`` and one-hot
  ``sex``, ``race``, ``c_charge_degree`` (15 columns); target
  ``two_year_recid``; the COMPAS score and every outcome-leaking column are
  excluded. ``GradientBoostingClassifier(random_state=0)`` on a stratified
  75 % split (``random_state=0``); first 100 rows of the other 25 %.

The last line printed is one JSON object ``{dataset: {measure: {k: mean}}}``.
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.ensemble import GradientBoostingClassifier
from sklearn.model_selection import train_test_split

import explainers as ex
import explainers.persuasive as xp

KS = (1, 3, 5, 10)
N_ROWS = 100
BACKGROUND = 100
DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def breast_cancer_case():
    """(model, X, train_idx, test_idx) of the bundled sample."""
    from workspace.workspace import load_sample_workspace

    ws = load_sample_workspace()
    return ws.adapter.model, ws.X, np.asarray(ws.train_idx), np.asarray(ws.test_idx)


def compas_case():
    """(model, X one-hot, train_idx, test_idx) for COMPAS, cleaned as the module docstring states."""
    df = pd.read_csv(DATA / "compas" / "compas-scores-two-years.csv")
    df = df[(df.days_b_screening_arrest <= 30) & (df.days_b_screening_arrest >= -30) & (df.is_recid != -1)
            & (df.c_charge_degree != "O") & (df.score_text != "N/A")].reset_index(drop=True)
    num = ["age", "juv_fel_count", "juv_misd_count", "juv_other_count", "priors_count"]
    X = pd.concat([df[num].astype(float), pd.get_dummies(df[["sex", "race", "c_charge_degree"]], dtype=float)], axis=1)
    y = df["two_year_recid"].to_numpy()
    train, test = train_test_split(np.arange(len(X)), test_size=0.25, random_state=0, stratify=y)
    train, test = np.sort(train), np.sort(test)
    model = GradientBoostingClassifier(random_state=0).fit(X.iloc[train], y[train])
    return model, X, train, test


def measure(model, X: pd.DataFrame, train, test, n_rows: int = N_ROWS, background: int = BACKGROUND,
            ks: tuple = KS) -> tuple[dict, dict]:
    """Mean sufficiency, comprehensiveness and Spearman ρ per k over the first ``n_rows`` held-out rows, with
    their standard errors (the product's own chain: :func:`explainers.persuasive.average_curve`)."""
    shap = ex.ShapExplainer(ex.ModelAdapter.for_table(model, X.iloc[train]), background=X.iloc[train],
                            target_index=1, background_size=background, seed=0)
    bg = X.iloc[train].sample(n=min(background, len(train)), random_state=0).to_numpy(dtype=float)
    rows = test[:n_rows]
    g = shap.explain_many(X.iloc[rows])
    f = lambda a: model.predict_proba(pd.DataFrame(a, columns=X.columns))[:, 1]  # noqa: E731
    train_rows = X.iloc[train].to_numpy(dtype=float)
    ref = xp.reference_values(train_rows)
    expls = [shap.from_row(X.iloc[[r]], g.values[i], g.base_value) for i, r in enumerate(rows)]
    ctxs = [xp.make_context(f, train_rows, bg, X.iloc[r].to_numpy(dtype=float), ("0", "1"), num_samples=0,
                            full=False, reference=ref) for r in rows]
    avg = xp.average_curve(expls, ctxs, measures=("sufficiency", "comprehensiveness", "spearman"))
    out = {m: {str(k): float(avg.measures[m][k]) for k in ks} for m in avg.measures}
    se = {m: {str(k): float(avg.std_error[m][k]) for k in ks} for m in avg.std_error}
    return out, se


def main(argv: list[str] | None = None) -> None:
    """Print the table per dataset, then the JSON line."""
    p = argparse.ArgumentParser(prog="python -m benchmarks.persuasive", description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="tiny sizes for CI (figures not asserted)")
    args = p.parse_args(argv)
    n_rows, background, ks = (5, 10, (1, 3)) if args.quick else (N_ROWS, BACKGROUND, KS)
    results = {}
    for name, case in (("breast_cancer", breast_cancer_case), ("compas", compas_case)):
        model, X, train, test = case()
        res, se = measure(model, X, train, test, n_rows=n_rows, background=background, ks=ks)
        results[name] = res
        print(f"\n{name}: {X.shape[1]} features, {min(n_rows, len(test))} held-out rows, P(class 1) explained")
        print(f"{'k':>3} {'sufficiency ± se':>18} {'comprehensiveness ± se':>24} {'spearman ± se':>16}")
        for k in ks:
            kk = str(k)
            cells = [f"{res[m][kk]:.4f} ± {se[m][kk]:.4f}" for m in ("sufficiency", "comprehensiveness", "spearman")]
            print(f"{k:>3} {cells[0]:>18} {cells[1]:>24} {cells[2]:>16}")
    print(json.dumps(results, sort_keys=True))


if __name__ == "__main__":
    main()
