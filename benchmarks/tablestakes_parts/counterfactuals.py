"""The story test's part of ``python -m benchmarks.tablestakes`` (issue 25): counterfactuals, two searches a row.

Five held-out rows of each case (``--quick``: cases ``sample,adult`` with Adult fitted on 2,000 rows, one row
each, for CI; its figures are not the measured ones).

Cases:

- ``sample``: the bundled breast-cancer gradient-boosting model (30 numeric columns).
- ``adult``: a scikit-learn Pipeline (one-hot of Adult's 8 string columns, ``HistGradientBoostingClassifier(
  random_state=0)``, :func:`benchmarks.build_store.prepare_adult`) fitted on UCI ``adult.data`` and serving
  ``adult.test``, loaded as a user's files: 14 raw columns, the strings as category levels.
- ``adult_onehot``: Adult one-hot encoded beforehand (``pandas.get_dummies``, 108 columns, as
  :mod:`benchmarks.vs_peer` serves it) and ``HistGradientBoostingClassifier(random_state=0)``: the counterfactual
  search moves each one-hot block as one column.

Parts:

- :func:`_counterfactuals`: the Persuasive page's story test (:func:`app.services.counterfactuals.story_view` at k = 3:
  two searches of at most :data:`app.services.counterfactuals.BUDGET` model evaluations each, the second one's
  counterfactuals the page's list) on the first ``--rows`` held-out rows: wall and CPU seconds a row (this process,
  the machine shared), model evaluations and calls, counterfactuals found, whether the story's features alone flip.
"""
from __future__ import annotations

import tempfile
import time
from pathlib import Path

import numpy as np


def _onehot_files(folder: Path) -> tuple[Path, Path]:
    from sklearn.ensemble import HistGradientBoostingClassifier

    from benchmarks.vs_peer_parts.datasets import adult_onehot_files

    return adult_onehot_files(folder, HistGradientBoostingClassifier(random_state=0))


def _workspace(case: str, folder: Path, quick: bool):
    from benchmarks.build_store import prepare_adult
    from workspace.workspace import load_sample_workspace, load_user_workspace

    if case == "sample":
        return load_sample_workspace()
    if case == "adult_onehot":
        return load_user_workspace(*_onehot_files(folder), "income", trust_pickle=False)
    flags = prepare_adult(folder, rows=(2_000, 400) if quick else None)
    return load_user_workspace(flags[1], flags[3], flags[5])


def _counterfactuals(case: str, rows: int, folder: Path, quick: bool = False) -> dict:
    """The story test (both searches) on the first ``rows`` held-out rows of ``case``: seconds and evaluations."""
    from app import services
    from app.services import counterfactuals as cfs

    ws = _workspace(case, folder, quick)
    out = {"case": case, "columns": ws.X.shape[1], "budget_per_search": cfs.BUDGET, "wall_s": [], "cpu_s": [],
           "evaluations": [], "calls": [], "found": [], "story_flips": [], "need_hidden": []}
    with services.overridden(services.ServiceState(ws)):
        out["features"] = len(cfs.features())
        for r in ws.test_idx[:rows]:
            services.persuasive_view(int(r), 3)  # the page has drawn the story before the job runs
            w, c = time.perf_counter(), time.process_time()
            test = cfs.story_view(int(r), 3).test
            out["wall_s"].append(round(time.perf_counter() - w, 3))
            out["cpu_s"].append(round(time.process_time() - c, 3))
            out["evaluations"].append(test.story_only.n_evaluated + test.any_feature.n_evaluated)
            out["calls"].append(test.story_only.n_calls + test.any_feature.n_calls)
            out["found"].append(len(test.any_feature.pool))
            out["story_flips"].append(test.story_flips)
            out["need_hidden"].append(f"{test.n_need_hidden}/{test.k}")
    out["wall_s_median"], out["wall_s_max"] = float(np.median(out["wall_s"])), float(np.max(out["wall_s"]))
    return out


def _table(results: list[dict]) -> str:
    head = f"{'case':<13} {'cols':>4} {'feats':>5} {'wall s med':>10} {'max':>6} {'CPU s med':>9} {'evals med':>9} " \
           f"{'found':>12} {'story flips':>12}"
    lines = [head, "-" * len(head)]
    for r in results:
        lines.append(f"{r['case']:<13} {r['columns']:>4} {r['features']:>5} {r['wall_s_median']:>10.2f} "
                     f"{r['wall_s_max']:>6.2f} {float(np.median(r['cpu_s'])):>9.2f} "
                     f"{int(np.median(r['evaluations'])):>9} {str(r['found']):>12} "
                     f"{str(sum(r['story_flips'])) + '/' + str(len(r['story_flips'])):>12}")
    return "\n".join(lines)


def part(quick: bool):
    """``(rows, figures)`` of the story test on the sample, Adult's Pipeline and Adult one-hot (see the module)."""
    cases, rows = (("sample", "adult"), 1) if quick else (("sample", "adult", "adult_onehot"), 5)
    with tempfile.TemporaryDirectory() as tmp:
        results = [_counterfactuals(c, rows, Path(tmp), quick) for c in cases]
    return [(line, "", "") for line in _table(results).splitlines()], {"cases": results}
