"""Benchmark: the Persuasive step of ``check`` and the grouping of correlated features on a wide table (issue 27).

Run ``python -m benchmarks.wide_persuasive [--cols D] [--rows N]`` (default 10,000 columns x 200 rows). The
table is seeded Gaussian noise with 30 planted groups of 10 correlated columns; the model a
``LogisticRegression`` on it (skops). Before the bounds, ``check`` on such a 10,000-column pair died in the
Persuasive step on a 10,001 x 10,001 matrix. Measured in one process (peak RSS is its high-water mark):

- ``load_s``: :func:`workspace.workspace.load_user_workspace`;
- ``persuasive_s``: ``services.persuasive_view(row, 3)``, the call ``check`` makes (curves, AOPC, restricted R²);
- ``grouping_s``, ``groups``: :func:`explainers.persuasive.correlated_groups` on the training rows (the
  Persuasive page's grouping switch);
- ``peak_rss_mb`` after each step.

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


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _pair(folder: Path, rows: int, cols: int) -> tuple[Path, Path]:
    import skops.io as sio
    from sklearn.linear_model import LogisticRegression

    rng = np.random.default_rng(0)
    X = rng.normal(size=(rows, cols))
    base = rng.normal(size=(rows, 30))
    for j in range(300):
        X[:, j * 7 % cols] = base[:, j % 30] + 0.2 * rng.normal(size=rows)
    frame = pd.DataFrame(X, columns=[f"f{j}" for j in range(cols)])
    y = np.where(frame.iloc[:, 0] + frame.iloc[:, 7] > 0, "yes", "no")
    sio.dump(LogisticRegression(max_iter=500).fit(frame, y), folder / "m.skops")
    frame.assign(label=y).to_csv(folder / "d.csv", index=False)
    return folder / "m.skops", folder / "d.csv"


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cols", type=int, default=10_000)
    p.add_argument("--rows", type=int, default=200)
    args = p.parse_args(argv)
    from app import services
    from explainers.persuasive import correlated_groups
    from workspace.workspace import load_user_workspace

    figures = {"cols": args.cols, "rows": args.rows}
    with tempfile.TemporaryDirectory(prefix="candor-wide-") as tmp:
        model, data = _pair(Path(tmp), args.rows, args.cols)
        t = time.perf_counter()
        ws = load_user_workspace(str(model), str(data), "label")
        figures.update(load_s=round(time.perf_counter() - t, 2), load_peak_rss_mb=round(_peak_mb()))
        services.init(ws, warm=False)
        t = time.perf_counter()
        services.persuasive_view(int(ws.test_idx[0]), 3)
        figures.update(persuasive_s=round(time.perf_counter() - t, 2), persuasive_peak_rss_mb=round(_peak_mb()))
        t = time.perf_counter()
        groups = correlated_groups(ws.X.iloc[ws.train_idx])
        figures.update(grouping_s=round(time.perf_counter() - t, 2), groups=len(groups),
                       grouping_peak_rss_mb=round(_peak_mb()))
    for key, value in figures.items():
        print(f"{key:24} {value}")
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
