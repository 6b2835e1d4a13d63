"""Parts 2 and 3 of :mod:`benchmarks.engine`: LIME and model-agnostic (permutation) SHAP, CPU ms a row on Adult.

- LIME: :func:`benchmarks.lime_speed.measure` on its ``adult`` case (a one-hot GradientBoosting Pipeline on 8,000
  seeded rows of ``adult.data``, 14 raw columns, loaded as a user's files; the page's LIME,
  ``app.services.tabular._make_lime``).
- Permutation SHAP: an MLPClassifier, a KNeighborsClassifier and an SVC (RBF, scikit-learn's defaults: no
  ``predict_proba``, so its ``decision_function`` margin is explained) Pipeline (numbers standardised, Adult's 8
  string columns one-hot encoded) fitted on the same 6,000 of 8,000 rows, explained through
  ``explainers.ShapExplainer(ModelAdapter(pipe, TabularCodec(raw table)), algorithm="permutation")`` with the app's
  100 background rows and its per-row ordering cap (``app.services.tabular.LOCAL_MAX_ORDERINGS``) on held-out rows;
  CPU time of this process (``time.process_time``), after one warm-up row; the rows the model predicts a row
  (counted around ``ModelAdapter.outputs``) and the largest standard error over the tolerance (1 or less: converged).
"""
from __future__ import annotations

import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd


def lime_adult(rows: int, folder: Path) -> dict:
    from benchmarks.lime_speed import measure

    return measure("adult", rows, folder)


def _adult_pipelines(quick: bool = False):
    """Adult (8,000 seeded rows, 6,000 to fit; ``quick``: 2,000 and 1,500): MLP, k-NN and SVC Pipelines fitted."""
    from sklearn.compose import ColumnTransformer
    from sklearn.neighbors import KNeighborsClassifier
    from sklearn.neural_network import MLPClassifier
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler
    from sklearn.svm import SVC

    from benchmarks.build_store import ADULT_COLS, _adult_frame

    df = _adult_frame("adult.data").sample(2000 if quick else 8000, random_state=0).reset_index(drop=True)
    y = (df.pop("income") == ">50K").to_numpy()
    strings = [c for c in ADULT_COLS[:-1] if not pd.api.types.is_numeric_dtype(df[c])]
    numbers = [c for c in df.columns if c not in strings]

    def prep():
        return ColumnTransformer([("num", StandardScaler(), numbers),
                                  ("str", OneHotEncoder(handle_unknown="ignore", sparse_output=False), strings)])

    train = np.arange(1500 if quick else 6000)
    models = {"mlp": Pipeline([("prep", prep()), ("mlp", MLPClassifier((32,), max_iter=200, random_state=0))]),
              "knn": Pipeline([("prep", prep()), ("knn", KNeighborsClassifier(n_neighbors=15))]),
              "svc": Pipeline([("prep", prep()), ("svc", SVC())])}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the MLP's convergence warning
        for m in models.values():
            m.fit(df.iloc[train], y[train])
    width = models["mlp"][:-1].transform(df.head(1)).shape[1]
    return df, train, models, width


def permutation(rows: int, quick: bool = False) -> dict:
    """CPU ms a row of permutation SHAP, per model, on the first ``rows`` held-out rows (``quick``: smaller fits)."""
    from app.services.tabular import BACKGROUND_SIZE, LOCAL_MAX_ORDERINGS
    from explainers import ShapExplainer
    from explainers._codec import TabularCodec
    from explainers.model_adapter import ModelAdapter

    df, train, models, width = _adult_pipelines(quick)
    codec = TabularCodec(df)
    Z = codec.encode(df)
    held_out = np.arange(len(train), len(df))
    out = {}
    for name, pipe in models.items():
        e = ShapExplainer(ModelAdapter(pipe, codec), background=Z.iloc[train], background_size=BACKGROUND_SIZE,
                          algorithm="permutation", max_orderings=LOCAL_MAX_ORDERINGS, seed=0)
        e.explain(Z.iloc[[int(held_out[-1])]])  # warm: first-call costs
        seen = {"rows": 0}
        model_outputs = e.adapter.outputs

        def counted(rows, outputs=model_outputs):
            seen["rows"] += len(rows)
            return outputs(rows)

        e.adapter.outputs = counted  # counts the rows the model predicts; the values are the model's own
        ms, orderings, converged, model_rows, se_ratio = [], [], 0, [], []
        for r in held_out[:rows]:
            seen["rows"] = 0
            t0 = time.process_time()
            x = e.explain(Z.iloc[[int(r)]])
            ms.append(1000 * (time.process_time() - t0))
            model_rows.append(seen["rows"])
            orderings.append(int(np.ravel(x.params.get("orderings", 0))[0]))
            converged += bool(np.ravel(x.params.get("converged", False))[0])
            se_ratio.append(round(float(np.max(x.params["standard_error"]) / x.params["tolerance"]), 2))
        out[name] = {"columns": df.shape[1], "transformed": width, "background": e.params["background_size"],
                     "rows": rows, "cpu_ms_median": float(np.median(ms)), "cpu_ms_max": float(np.max(ms)),
                     "model_rows_median": int(np.median(model_rows)), "model_rows_max": int(np.max(model_rows)),
                     "orderings": orderings, "converged": converged, "max_se_over_tolerance": se_ratio}
        print(f"permutation SHAP {name}: {df.shape[1]} raw columns ({width} transformed), CPU ms a row median "
              f"{np.median(ms):.0f}, max {np.max(ms):.0f}; model rows a row median {np.median(model_rows):,.0f}, "
              f"max {np.max(model_rows):,}; orderings {orderings}; converged {converged}/{rows}; largest SE / "
              f"tolerance {se_ratio}", flush=True)
    return out
