"""The explanation engine (issue 23): exact Tree SHAP per model family, LIME, permutation SHAP and cold start.

``python -m benchmarks.engine [--quick] [--only tree,lime,permutation,cold]``

1. ``tree`` (:mod:`benchmarks.engine_parts.tree`): per scikit-learn tree family, max |error| of Candor's exact
   interventional Tree SHAP (:class:`explainers.tree_shap.TreeShap`) against brute force over every coalition
   (:func:`tests.shapley_oracle.brute_force_shapley`, at most 8 columns, 50 background rows, 3 rows; and
   :func:`tests.shapley_oracle.brute_force_boosted_shapley` for GradientBoosting on all 30 breast-cancer
   columns), shap 0.51's interventional ``TreeExplainer`` on the same cases (``model_output="raw"`` against the
   same oracle; ``"probability"`` against brute force on ``predict_proba`` for classifiers), and wall µs a row of
   ``TreeShap.shap_values`` with 100 background rows (one row per call, median; the whole table in one call).
   Families: GradientBoosting binary (margin) and multiclass (wine), HistGradientBoosting classifier and regressor
   at ``max_depth`` 3, 5, 8, 12 (``max_leaf_nodes=None``), with NaNs, with categorical features, RandomForest(200),
   ExtraTrees, RandomForestRegressor (bootstrap: weighted trees), GradientBoostingRegressor(subsample=0.8), and a
   one-hot Pipeline on real Adult with raw columns as players (``shared/data``, tests/shared_data.py).
2. ``lime``: CPU ms a row of the page's LIME on an Adult one-hot GradientBoosting Pipeline (14 raw columns), by
   :func:`benchmarks.lime_speed.measure`.
3. ``permutation``: CPU ms a row of model-agnostic SHAP (permutation, 100 background rows) on an MLP, a KNN and an
   SVC Pipeline on Adult (14 raw columns) through ``ShapExplainer`` with a ``ModelAdapter``.
4. ``cold``: seconds from process start to the first HTTP 200 on ``/`` of ``python -m app`` (the bundled sample,
   a fresh cache folder) and to ``/_candor/ready``, by :func:`benchmarks.build_store.serve_once`.

``--quick``: tiny sizes (10 background rows, one row, 20 trees, the permutation part's Adult models fitted on 1,500
rows) so CI can run it; its figures are not the
benchmark's. The machine is shared: the load average is printed before and after. The last line is one JSON object.
"""
from __future__ import annotations

import argparse
import json
import math
import tempfile
import time
import traceback
from pathlib import Path

PARTS = ("tree", "lime", "permutation", "cold")


def _load() -> str:
    path = Path("/proc/loadavg")
    return " ".join(path.read_text().split()[:3]) if path.exists() else "?"


def _num(v, digits: int = 1) -> str:
    if v is None:
        return "-"
    if isinstance(v, str):
        return v[:38]
    if isinstance(v, float) and (v == 0 or abs(v) < 1e-3 or abs(v) >= 1e5):
        return "0" if v == 0 else f"{v:.1e}"
    return f"{v:,.{digits}f}" if isinstance(v, float) else str(v)


def _err(v) -> str:
    if v is None:
        return "-"
    return v if isinstance(v, str) else f"{v:.1e}"


def tree_table(accs: list[dict], times: dict) -> str:
    head = ["family", "players", "outputs", "Candor max|err|", "shap raw max|err|", "shap prob max|err|",
            "µs/row, 1 row", "µs/row, table", "rows", "build ms"]
    body = []
    for a in accs:
        t = times.get(a["family"], {})
        body.append([a["family"], str(a["players"]), str(a["outputs"]), _err(a["candor"]), _err(a.get("shap_raw")),
                     _err(a.get("shap_probability")), _num(t.get("one_row_us"), 0), _num(t.get("table_us_per_row"), 0),
                     str(t.get("table_rows", "-")), _num(t.get("build_ms"), 0)])
    widths = [max(len(r[i]) for r in [head, *body]) for i in range(len(head))]

    def line(r):
        return "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths)))
    out = [line(head), "  ".join("-" * w for w in widths), *map(line, body)]
    notes = [f"  {a['family']}: {a['note']}" for a in accs if a.get("note")]
    return "\n".join(out + notes)


def _clean(v):
    """JSON-safe: NaN/inf to None, floats to 3 significant figures below 1e-3."""
    if isinstance(v, dict):
        return {k: _clean(x) for k, x in v.items()}
    if isinstance(v, float):
        if not math.isfinite(v):
            return None
        return float(f"{v:.3g}") if abs(v) < 1e-3 else round(v, 4)
    return v


def main(argv: list[str] | None = None) -> dict:
    p = argparse.ArgumentParser(prog="python -m benchmarks.engine", description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", help="tiny sizes for CI (figures not asserted)")
    p.add_argument("--only", default=",".join(PARTS), help=f"comma-separated parts of {PARTS}")
    p.add_argument("--timeout", type=float, default=300.0, help="seconds to wait for the server in 'cold'")
    args = p.parse_args(argv)
    only = [s.strip() for s in args.only.split(",") if s.strip()]
    unknown = set(only) - set(PARTS)
    if unknown:
        p.error(f"unknown parts {sorted(unknown)}; choose from {PARTS}")
    print(f"load average at start: {_load()}", flush=True)
    headline: dict = {"quick": args.quick, "failed": {}}
    report: list[str] = []
    with tempfile.TemporaryDirectory(prefix="engine-bench-") as tmp:
        for part in only:
            t0 = time.perf_counter()
            print(f"[{part}]", flush=True)
            try:
                report.append(_run(part, args, Path(tmp), headline))
            except Exception as exc:  # a part that cannot run says why; the others still run
                traceback.print_exc()
                headline["failed"][part] = f"{type(exc).__name__}: {str(exc)[:200]}"
            print(f"[{part}: {time.perf_counter() - t0:.0f} s]", flush=True)
    headline["loadavg_end"] = _load()
    print()
    print("\n\n".join(r for r in report if r))
    print(f"load average at end: {headline['loadavg_end']}")
    print(json.dumps(_clean(headline), default=float), flush=True)
    return headline


def _run(part: str, args, tmp: Path, headline: dict) -> str:
    quick = args.quick
    if part == "tree":
        from benchmarks.engine_parts import tree

        accs, times, figures = tree.run(quick)
        headline.update(figures)
        return ("Exact Tree SHAP vs brute force over every coalition (max |error|, Candor's output: margin for "
                "boosted classifiers, probability for forests), shap 0.51 interventional beside it; wall µs a row "
                "with 100 background rows\n" + tree_table(accs, times))
    if part == "lime":
        from benchmarks.engine_parts.agnostic import lime_adult

        r = lime_adult(2 if quick else 8, tmp)
        headline["lime_ms_per_row_adult"] = r["cpu_ms_median"]
        return (f"LIME (the page's, CPU ms a row), Adult one-hot GB Pipeline, {r['features']} raw columns, {r['rows']} "
                f"rows: median {r['cpu_ms_median']:.0f}, max {r['cpu_ms_max']:.0f}; samples {r['num_samples']}; "
                f"converged {r['converged']}/{r['rows']}")
    if part == "permutation":
        from benchmarks.engine_parts.agnostic import permutation

        r = permutation(1, quick=True) if quick else permutation(6)
        headline["permutation_ms_per_row"] = {k: v["cpu_ms_median"] for k, v in r.items()}
        headline["permutation_ms_per_row_max"] = {k: v["cpu_ms_max"] for k, v in r.items()}
        headline["permutation_model_rows_per_row"] = {k: v["model_rows_median"] for k, v in r.items()}
        return "Permutation SHAP (CPU ms a row, 100 background rows), Adult Pipelines\n" + "\n".join(
            f"  {k}: {v['columns']} raw columns ({v['transformed']} transformed), {v['rows']} rows: median "
            f"{v['cpu_ms_median']:.0f}, max {v['cpu_ms_max']:.0f}; model rows a row median "
            f"{v['model_rows_median']:,}, max {v['model_rows_max']:,}; orderings {v['orderings']}; "
            f"converged {v['converged']}/{v['rows']}; largest SE / tolerance {v['max_se_over_tolerance']}"
            for k, v in r.items())
    from benchmarks.build_store import serve_once

    r = serve_once([], tmp, args.timeout)
    if r.get("error"):
        raise RuntimeError(r["error"])
    headline.update(first_200_s=r["first_200_s"], ready_s=r["ready_s"], cold_cpu_s=r.get("cpu_s"),
                    cold_peak_rss_mb=r.get("peak_rss_mb"))
    return (f"Cold start, python -m app on the bundled sample: first HTTP 200 on / {_num(r['first_200_s'], 2)} s, "
            f"/_candor/ready {_num(r['ready_s'], 2)} s (process tree CPU {_num(r.get('cpu_s'))} s, peak RSS "
            f"{_num(r.get('peak_rss_mb'))} MB)")


if __name__ == "__main__":
    main()
