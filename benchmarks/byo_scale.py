"""Benchmark: a big user table (100,000 rows x 1,000 columns) through loading, ``check`` and the pages' services.

Run ``python -m benchmarks.byo_scale [--rows N] [--cols D] [--quick]`` (``--quick``: 1,000 rows x 30
columns, for CI; its figures are not the measured ones). Issue 7 asks that 100k+ rows and
1,000+ columns work, with memory and time estimated before a job starts and the background
summarised. The table is synthetic (seeded): 990 numeric columns (Gaussian, 10 of them carrying the
signal), 9 string columns with 5 levels each and 1 % missing cells, and one date column; the target
is a logistic function of 10 numeric and 2 string columns. The model is a scikit-learn Pipeline
(one-hot for the strings, numbers passed through; the date column is in the table but not among the
model's inputs, as often in practice) ending in ``HistGradientBoostingClassifier(max_iter=50)``,
which SHAP cannot explain exactly (permutation SHAP, the slowest path). Saved with skops, the table
as Parquet.

Measured, each on the same process (peak RSS is the process's high-water mark):

- ``load_s``: :func:`workspace.workspace.load_user_workspace` (read Parquet, encode, probe the model on
  50,000 rows);
- ``shap_estimate``: the cost line ``check`` prints before explaining (model rows per explained row,
  memory);
- ``row_shap_s``, ``row_lime_s``: one row through the services (as the Descriptive page asks,
  before the global view is ready: a row never waits for it);
- ``global_s`` and ``global_rows``: the global view under its time budget (about 20 s, at least
  10 rows);
- ``table_page_ms``: one page of 12 rows of the data table (what the browser receives, in bytes).

The last line is one JSON object of these figures.
"""
from __future__ import annotations

import argparse
import json
import resource
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd


def _table(n: int, d: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    n_str = 9
    num = pd.DataFrame(rng.normal(size=(n, d - n_str - 1)).astype(np.float64),
                       columns=[f"x{j}" for j in range(d - n_str - 1)])
    strings = {f"s{j}": rng.choice(["a", "b", "c", "d", "e"], n).astype(object) for j in range(n_str)}
    frame = pd.concat([num, pd.DataFrame(strings)], axis=1)
    for j in range(n_str):
        frame.loc[rng.random(n) < 0.01, f"s{j}"] = None
    frame["signup"] = pd.Timestamp("2020-01-01") + pd.to_timedelta(rng.integers(0, 1000, n), unit="D")
    logit = num.iloc[:, :10].to_numpy() @ np.linspace(1.0, 0.1, 10) + (frame.s0 == "a") * 1.5 - (frame.s1 == "b")
    frame["target"] = np.where(rng.random(n) < 1 / (1 + np.exp(-logit)), "yes", "no")
    return frame


def _fit_and_save(rows: int, cols: int) -> tuple[Path, float, float]:
    """Fit the benchmark's pipeline on :func:`_table` and write it and the table to a new temporary folder:
    ``(folder, seconds to build and fit, Parquet MiB)``."""
    import skops.io as sio
    from sklearn.compose import ColumnTransformer
    from sklearn.ensemble import HistGradientBoostingClassifier
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import OneHotEncoder

    t0 = time.perf_counter()
    frame = _table(rows, cols)
    strings = [c for c in frame.columns if c.startswith("s") and c != "signup"]
    features = frame.drop(columns=["target", "signup"])
    prep = ColumnTransformer([("str", OneHotEncoder(handle_unknown="ignore"), strings)], remainder="passthrough")
    model = Pipeline([("prep", prep), ("hgb", HistGradientBoostingClassifier(max_iter=50, random_state=0))])
    model.fit(features, frame.target)
    build_s = time.perf_counter() - t0
    folder = Path(tempfile.mkdtemp(prefix="candor-scale-"))
    sio.dump(model, folder / "model.skops")
    frame.to_parquet(folder / "table.parquet")
    return folder, build_s, (folder / "table.parquet").stat().st_size / 2**20


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rows", type=int, default=100_000)
    p.add_argument("--cols", type=int, default=1_000)
    p.add_argument("--quick", action="store_true", help="1,000 rows x 30 columns, for CI (figures not asserted)")
    args = p.parse_args(argv)
    if args.quick:
        args.rows, args.cols = 1_000, 30
    from threadpoolctl import threadpool_limits

    threadpool_limits(1, "openmp")  # as the server does
    from app import services
    from workspace.workspace import load_user_workspace

    folder, build_s, size_mb = _fit_and_save(args.rows, args.cols)
    t0 = time.perf_counter()
    ws = load_user_workspace(folder / "model.skops", folder / "table.parquet", "target")
    load_s = time.perf_counter() - t0
    services.init(ws, warm=False)
    from app.services import tabular

    shap = tabular._shap()
    row = int(ws.test_idx[0])
    t0 = time.perf_counter()
    services.shap_row(row)
    row_shap_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    services.lime_row(row)
    row_lime_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    g = services.global_importance()
    global_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    page, _ = services.data_page(3, 12)
    table_page_ms = (time.perf_counter() - t0) * 1000
    page_bytes = len(json.dumps(page, default=str))
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    figures = {
        "rows": args.rows, "cols": args.cols, "parquet_mb": round(size_mb, 1), "fit_s": round(build_s, 1),
        "load_s": round(load_s, 1), "shap_algorithm": shap.algorithm,
        "shap_model_rows_per_row": int(shap.cost["model_rows_per_row"]), "shap_memory_mb": shap.cost["memory_mb"],
        "background_rows": int(shap.params["background_size"]), "row_shap_s": round(row_shap_s, 2),
        "row_lime_s": round(row_lime_s, 2), "global_s": round(global_s, 1), "global_rows": int(g.values.shape[0]),
        "table_page_ms": round(table_page_ms, 1), "table_page_bytes": page_bytes, "peak_rss_mb": round(rss_mb),
    }
    print(f"{'measure':<28} value")
    for k, v in figures.items():
        print(f"{k:<28} {v}")
    print(f"global view: {g.source}")
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
