"""The Cohorts page's part of ``python -m benchmarks.tablestakes`` (issue 25).

Cohorts, on the bundled sample (143 held-out rows, GradientBoosting(150), its services as the page calls them,
in a fresh service state, after the SHAP of every row the warm-up computes): the error tree, the story measured
on every held-out row, the default MUSE fit the agreement needs (read from the surrogate results cache when an
earlier run left it there), the first Cohorts view and another cohort's view after it (what a user waits for on
a new filter); on UCI Adult (``shared/data/adult/adult.data``, 32,561 rows; a HistGradientBoosting on the columns
as codes, 25 % held out, seed 0): the error tree on the held-out rows and fairlearn's rates by sex and by race
with their bootstrap intervals. ``--quick``: 10 story rows, 2,000 Adult rows.
"""
from __future__ import annotations

import time

import numpy as np


def _timed(fn):
    started = time.perf_counter()
    value = fn()
    return value, time.perf_counter() - started


def _sample_cohorts(quick: bool) -> dict:
    from app import services
    from app.services import cohorts
    from workspace.workspace import load_sample_workspace

    ws = load_sample_workspace()
    if quick:
        cohorts.STORY_ROWS = 10
    with services.overridden(services.ServiceState(ws)):
        _, shap_all = _timed(services.global_importance)  # the server's warm-up computes it before a page opens
        _, muse = _timed(services.default_muse_key)
        tree, t_tree = _timed(cohorts._tree)
        story, t_story = _timed(cohorts._story)
        _, t_first = _timed(lambda: services.cohorts_view("mean radius > 15", ["mean radius"]))
        _, t_next = _timed(lambda: services.cohorts_view("worst texture <= 25; mean area > 500"))
    return {"sample_rows": int(tree.n_rows), "sample_leaves": len(tree.leaves), "error_tree_ms": 1000 * t_tree,
            "story_rows": story.n_measured, "story_ms_per_row": 1000 * t_story / max(story.n_measured, 1),
            "warm_shap_all_s": shap_all, "muse_default_s": muse, "first_view_s": t_first, "next_view_ms": 1000 * t_next}


def _adult_cohorts(quick: bool) -> dict:
    from sklearn.ensemble import HistGradientBoostingClassifier
    from sklearn.model_selection import train_test_split

    from explainers._codec import TabularCodec
    from explainers.cohorts import error_tree
    from explainers.fairness import fairness_report
    from tests.shared_data import ADULT_COLUMNS, shared_data_dir

    import pandas as pd

    folder = shared_data_dir()
    if folder is None or not (folder / "adult" / "adult.data").exists():
        return {"adult": "skipped: shared/data/adult/adult.data not found"}
    df = pd.read_csv(folder / "adult" / "adult.data", header=None, names=ADULT_COLUMNS, skipinitialspace=True,
                     na_values="?").dropna(how="all")
    if quick:
        df = df.sample(2000, random_state=0).reset_index(drop=True)
    raw, y = df.drop(columns="income"), (df["income"] == ">50K").to_numpy().astype(int)
    X = TabularCodec(raw).encode(raw)
    train, test = train_test_split(np.arange(len(X)), test_size=0.25, random_state=0, stratify=y)
    model = HistGradientBoostingClassifier(random_state=0).fit(X.iloc[train], y[train])
    held, pred = X.iloc[test], model.predict(X.iloc[test])
    tree, t_tree = _timed(lambda: error_tree(held, pred != y[test]))
    out = {"adult_rows": len(test), "adult_error_rate": tree.error_rate, "adult_error_tree_ms": 1000 * t_tree,
           "adult_worst_leaf_error": tree.leaves[0].error_rate, "adult_worst_leaf_rows": tree.leaves[0].n_rows}
    for feature in ("sex", "race"):
        report, t = _timed(lambda: fairness_report(y[test], pred, raw[feature].to_numpy()[test], feature=feature))
        gap = report.difference["selection_rate"]
        out[f"adult_{feature}_fairness_ms"] = 1000 * t
        out[f"adult_{feature}_selection_gap"] = [gap[0], gap[1], gap[2]]
    return out


def part(quick: bool):
    """``(rows, figures)`` of the Cohorts page: the sample through its services, Adult through the explainers."""
    out = {**_sample_cohorts(quick), **_adult_cohorts(quick)}
    rows = [(f"sample, {out['sample_rows']} held-out rows: error tree ({out['sample_leaves']} leaves)",
             out["error_tree_ms"], "ms"),
            (f"  story on {out['story_rows']} rows (top 3, sufficiency + share shown), a row", out["story_ms_per_row"], "ms"),
            ("  the warm-up's SHAP of every row (before)", out["warm_shap_all_s"], "s"),
            ("  default MUSE (results cache when present)", out["muse_default_s"], "s"),
            ("  first Cohorts view", out["first_view_s"], "s"), ("  another cohort's view", out["next_view_ms"], "ms")]
    if "adult_rows" in out:
        rows += [(f"Adult, {out['adult_rows']:,} held-out rows: error tree", out["adult_error_tree_ms"], "ms"),
                 ("  worst leaf: error rate of rows", f"{out['adult_worst_leaf_error']:.3f} of {out['adult_worst_leaf_rows']}", "")]
        for f in ("sex", "race"):
            gap = out[f"adult_{f}_selection_gap"]
            rows += [(f"  fairness by {f} (MetricFrame + 500 resamples)", out[f"adult_{f}_fairness_ms"], "ms"),
                     (f"  selection-rate gap by {f} (95 % interval)", f"{gap[0]:.3f} ({gap[1]:.3f}-{gap[2]:.3f})", "")]
    return rows, out
