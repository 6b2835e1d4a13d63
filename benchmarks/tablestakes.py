"""Speed of the views a user of explainerdashboard, shapash or the RAI dashboard expects (issue 25).

``python -m benchmarks.tablestakes [--parts performance] [--quick]``: a readable table per part, then one JSON line
``{"performance": {...}, ...}`` (``--quick``: tiny sizes for CI; its figures are not the measured ones).

Each part is one function ``_NAME(quick) -> (rows, figures)`` in :data:`PARTS` (rows: ``(what, value, unit)`` for
the table; figures: the part's JSON object); a part that fails is named in ``"failed"`` and the others still run.

- ``performance``: the Performance page's numbers (:mod:`explainers.performance`): ROC and precision-recall with
  ROC AUC, average precision and the Brier score with 1,000 stratified bootstrap resamples each, and the
  calibration curve, on the held-out probabilities of a HistGradientBoostingClassifier fitted on UCI Adult
  (``shared/data``; Candor's split: 25 % held out, 8,141 rows) and on the bundled sample through the service;
  the confusion at a threshold (what a move of the slider computes) and the threshold callback with its figure on
  the sample; a regressor's R² and RMSE with their intervals on 8,141 rows. Wall-clock medians of a few repeats
  (``time.perf_counter``) on a shared 2-core machine.
- ``dependence``: the Dependence page on a user's Adult pipeline, feature by feature, cold and cached
  (:mod:`benchmarks.tablestakes_parts.dependence`).
- ``counterfactuals``: the Persuasive page's story test, two counterfactual searches a row, on the sample and
  Adult (:mod:`benchmarks.tablestakes_parts.counterfactuals`).
- ``cohorts``: the Cohorts page's error tree, story measures and views on the sample, and the error tree and
  fairness rates on Adult (:mod:`benchmarks.tablestakes_parts.cohorts`).
- ``whatif``: a what-if edit to every panel of the Descriptive and Persuasive pages settled in Chromium, with the
  server's CPU per edit, on the sample and Adult (:mod:`benchmarks.tablestakes_parts.whatif`, :func:`_whatif` there).
"""
from __future__ import annotations

import argparse
import json
import statistics
import time
from typing import Callable

from benchmarks.tablestakes_parts import cohorts, counterfactuals, dependence, whatif


def _median_s(fn: Callable[[], object], repeats: int) -> float:
    """Median wall-clock seconds of ``fn()`` over ``repeats`` calls (and its CPU seconds in :data:`CPU`)."""
    times, cpu = [], []
    for _ in range(repeats):
        t, c = time.perf_counter(), time.process_time()
        fn()
        times.append(time.perf_counter() - t)
        cpu.append(time.process_time() - c)
    CPU[fn] = statistics.median(cpu)
    return statistics.median(times)


CPU: dict = {}
"""CPU seconds (this process, ``time.process_time``) of the last :func:`_median_s` of each function: the machine is
shared, so wall-clock times run long when others work; CPU time is the part of it that is ours."""


def _adult_probabilities(quick: bool):
    """(y, P(>50K)) of a HistGradientBoostingClassifier on Adult's held-out 25 % (Candor's split: seed 0)."""
    import numpy as np
    import pandas as pd
    from sklearn.ensemble import HistGradientBoostingClassifier
    from sklearn.model_selection import train_test_split

    from benchmarks.build_store import _adult_frame

    df = _adult_frame("adult.data")
    if quick:
        df = df.sample(2000, random_state=0)
    y = (df.pop("income") == ">50K").to_numpy().astype(int)
    X = df.apply(lambda c: c if pd.api.types.is_numeric_dtype(c) else c.astype("category"))
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.25, random_state=0, stratify=y)
    model = HistGradientBoostingClassifier(random_state=0, max_iter=50 if quick else 200,
                                           categorical_features="from_dtype").fit(Xtr, ytr)
    return np.asarray(yte), model.predict_proba(Xte)[:, 1]


def _performance(quick: bool):
    """The Performance page's computations: see the module docstring."""
    import numpy as np

    from explainers import performance as perf

    n_boot, repeats = (50, 1) if quick else (perf.N_BOOT, 3)
    rows, out = [], {"n_boot": n_boot}
    y, p = _adult_probabilities(quick)
    c = perf.classifier_performance(y, p, n_boot=n_boot)
    def fn():
        return perf.classifier_performance(y, p, n_boot=n_boot)

    s = _median_s(fn, repeats)
    out.update(adult_rows=int(len(y)), adult_curves_s=s, adult_curves_cpu_s=CPU[fn], adult_roc_auc=c.roc_auc.value,
               adult_roc_auc_interval=[c.roc_auc.low, c.roc_auc.high], adult_average_precision=c.average_precision.value)
    rows += [(f"Adult, {len(y):,} held-out rows: curves + {n_boot:,} resamples", s, "s"),
             ("  of which CPU (this process)", CPU[fn], "s"),
             ("  ROC AUC (95 % interval)", f"{c.roc_auc.value:.4f} ({c.roc_auc.low:.4f}-{c.roc_auc.high:.4f})", ""),
             ("  average precision", f"{c.average_precision.value:.4f}", ""), ("  Brier score", f"{c.brier.value:.4f}", "")]
    t = _median_s(lambda: [perf.confusion_at(c, k / 100) for k in range(100)], repeats) / 100
    out["adult_confusion_ms"] = t * 1e3
    rows.append(("  confusion at one threshold", t * 1e3, "ms"))
    rng = np.random.default_rng(0)
    actual = rng.normal(size=len(y))
    predicted = actual + 0.3 * rng.normal(size=len(y))
    def fn():  # noqa: F811  (the regressor's, measured alike)
        return perf.regressor_performance(actual, predicted, n_boot=n_boot)

    s = _median_s(fn, repeats)
    out.update(regressor_s=s, regressor_cpu_s=CPU[fn])
    rows += [(f"regressor, {len(y):,} rows: R² and RMSE + {n_boot:,} resamples", s, "s"),
             ("  of which CPU (this process)", CPU[fn], "s")]
    out.update(_sample(repeats))
    rows += [(f"sample, {out['sample_rows']} held-out rows: the service's view", out["sample_view_s"], "s"),
             ("  threshold callback (counts, rates, figure)", out["sample_callback_ms"], "ms")]
    return rows, out


def _sample(repeats: int) -> dict:
    """The service's view on the bundled sample (computed afresh each repeat) and the threshold callback."""
    from app import services
    from app.callbacks import performance as callbacks
    from workspace.workspace import load_sample_workspace

    ws = load_sample_workspace()
    with services.overridden(services.ServiceState(ws)):
        services.model_summary()  # the outputs, as the warm-up has them before the view
        view_s = _median_s(lambda: services.performance._compute(), repeats)
        services.performance.performance()
        callback_s = _median_s(lambda: [callbacks.render_confusion(k) for k in (10, 50, 90)], repeats) / 3
    return {"sample_rows": int(len(ws.test_idx)), "sample_view_s": view_s, "sample_callback_ms": callback_s * 1e3}


def _cohorts(quick: bool):
    """The Cohorts page's part (:mod:`benchmarks.tablestakes_parts.cohorts`)."""
    return cohorts.part(quick)


PARTS: dict[str, Callable] = {"performance": _performance, "dependence": dependence.part,
                              "counterfactuals": counterfactuals.part, "cohorts": _cohorts, "whatif": whatif.part}
"""Each part of the benchmark by name (other views add theirs here)."""


def _show(value, unit: str) -> str:
    if isinstance(value, float):
        return f"{value:,.3f} {unit}".strip()
    return f"{value} {unit}".strip()


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--parts", default=",".join(PARTS), help=f"comma-separated, of {', '.join(PARTS)}")
    parser.add_argument("--quick", action="store_true", help="tiny sizes for CI (figures not meaningful)")
    args = parser.parse_args(argv)
    result, failed = {"quick": args.quick}, {}
    for name in [p.strip() for p in args.parts.split(",") if p.strip()]:
        if name not in PARTS:
            parser.error(f"no part {name!r}; known: {', '.join(PARTS)}")
        try:
            rows, figures = PARTS[name](args.quick)
        except Exception as err:  # noqa: BLE001  one part failing must not hide the others
            failed[name] = f"{type(err).__name__}: {err}"
            print(f"{name}: FAILED {failed[name]}")
            continue
        width = max(len(r[0]) for r in rows)
        print(f"\n{name}")
        for what, value, unit in rows:
            print(f"  {what:<{width}}  {_show(value, unit)}")
        result[name] = figures
    if failed:
        result["failed"] = failed
    print(json.dumps(result))
    return result


if __name__ == "__main__":
    main()
