"""The Dependence page's part of ``python -m benchmarks.tablestakes`` (issue 25), timed on UCI Adult.

The workspace is a user's Adult pipeline loaded as ``python -m app --model M --data D --target income`` loads it:
the model :func:`benchmarks.build_store.prepare_adult` fits (a one-hot ``ColumnTransformer`` over Adult's 8 string
columns, the 6 numbers passed through, ``HistGradientBoostingClassifier(random_state=0)``) on ``adult.data``
(32,561 rows), serving ``adult.test`` (16,281 rows; 4,071 held out). Fitting, loading and global SHAP (the
warm-up's, which the pages share) are done before any clock starts; their seconds are reported beside.
``--quick`` (for CI; its figures are not the measured ones): fitted on 2,000 rows, serving 400. Wall seconds
depend on the machine's load, so each feature also reports its process CPU seconds.

For each of a few features (numeric and categorical), a feature never shown before: the Dependence page's
callback work, cold (:func:`app.views.dependence.draw`: the service's PDP and ICE on up to 500 held-out
rows x a 20-value grid, the SHAP dependence's colour pick with its 50 bootstraps, both figures), plus the
figures' JSON as Dash sends it; then the same feature again (cached). Also the PDP/ICE and the colour
pick alone. Target: cold <= 1 s per feature (judged on CPU seconds, which is wall time on a quiet machine).
"""
from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path

DEPENDENCE_FEATURES = ("age", "marital-status", "capital-gain", "occupation", "hours-per-week")
"""Two categorical (one-hot groups in the model) and three numeric columns."""
DEPENDENCE_TARGET_S = 1.0


def _adult_workspace(folder: Path, quick: bool):
    """Fit and save the Adult pipeline, load it as the app does, install it; (workspace, setup seconds)."""
    from app import services
    from benchmarks.build_store import prepare_adult
    from workspace.workspace import load_user_workspace

    t0 = time.perf_counter()
    flags = prepare_adult(folder, rows=(2000, 400) if quick else None)
    fit_s = time.perf_counter() - t0
    args = dict(zip(flags[::2], flags[1::2]))
    t0 = time.perf_counter()
    ws = load_user_workspace(args["--model"], args["--data"], args["--target"])
    services.init(ws, warm=False)
    load_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    services.global_importance()
    return ws, {"fit_s": round(fit_s, 2), "load_s": round(load_s, 2),
                "global_shap_s": round(time.perf_counter() - t0, 2)}


def _dependence(features=DEPENDENCE_FEATURES) -> dict:
    """Seconds of the Dependence page's work per feature, cold and cached, on the installed workspace."""
    import plotly.io as pio

    from app.services import dependence
    from app.views.dependence import draw

    out = {}
    for name in features:
        t0 = time.perf_counter()
        pd_ = dependence._explainer().explain(name)  # the parts alone (not cached by the service)
        pdp_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        dependence._shap(name)
        colour_s = time.perf_counter() - t0
        t0, c0 = time.perf_counter(), time.process_time()
        figs = draw(name)  # the callback's work, cold: service (PDP, ICE, colour pick) and figures
        size = sum(len(pio.to_json(f)) for f in figs[:2])
        cold_s, cold_cpu = time.perf_counter() - t0, time.process_time() - c0
        t0 = time.perf_counter()
        draw(name)
        warm_s = time.perf_counter() - t0
        f = pd_.fidelity
        out[name] = {"cold_s": round(cold_s, 3), "cold_cpu_s": round(cold_cpu, 3), "cached_s": round(warm_s, 3), "pdp_ice_s": round(pdp_s, 3),
                     "colour_pick_s": round(colour_s, 3), "curves": f.n_curves, "grid": len(pd_.grid),
                     "categorical": pd_.categorical, "figures_kb": round(size / 1024, 1),
                     "opposite_share": round(f.opposite_share, 4),
                     "opposite_ci": [round(f.opposite_low, 4), round(f.opposite_high, 4)],
                     "distance_share_of_range": round(f.distance / f.pdp_range, 4) if f.pdp_range else None}
    return out


def part(quick: bool):
    """``(rows, figures)`` of the Dependence page on Adult (see the module's text)."""
    with tempfile.TemporaryDirectory() as tmp:
        ws, setup = _adult_workspace(Path(tmp), quick)
        from threadpoolctl import threadpool_limits

        # one OpenMP thread, as the server runs (app/serve/server.py::create_app); after scikit-learn is loaded, or
        # it limits nothing (measured: 3.4 s of CPU for one PDP with two spinning threads, 0.48 s with one)
        threadpool_limits(limits=1, user_api="openmp")
        dep = _dependence()
    cold, cpu = [r["cold_s"] for r in dep.values()], [r["cold_cpu_s"] for r in dep.values()]
    rows = [(f"Adult ({len(ws.X):,} rows, {len(ws.test_idx):,} held out, {ws.X.shape[1]} columns); setup", str(setup), "")]
    for name, r in dep.items():
        rows += [(f"{name}: cold (CPU)", f"{r['cold_s']:.3f} s ({r['cold_cpu_s']:.3f} s)", ""),
                 (f"{name}: cached; PDP/ICE; colour pick", f"{r['cached_s']:.3f}; {r['pdp_ice_s']:.3f}; "
                  f"{r['colour_pick_s']:.3f}", "s"),
                 (f"{name}: {r['curves']} curves x {r['grid']} grid values, against the PDP",
                  f"{r['opposite_share']:.3f}", "")]
    return rows, {"setup_s": setup, "features": dep,
                  "targets": {"dependence_cold_s": {"target": DEPENDENCE_TARGET_S, "max": max(cold),
                                                    "median": statistics.median(cold), "max_cpu": max(cpu),
                                                    "met": max(cpu) <= DEPENDENCE_TARGET_S}}}
