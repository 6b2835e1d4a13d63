"""CPU milliseconds a row of tabular LIME at its default tolerance, as the app builds it (issue 23).

``python -m benchmarks.lime_speed [--cases sample,adult] [--rows 8] [--reproducible] [--quick]``
(``--quick``: cases ``sample,adult``, one row, for CI; its figures are not the measured ones)

Cases:

- ``sample``: the bundled breast-cancer gradient-boosting model (``sample_models/artifacts/breast_cancer_gb.skops``,
  loaded by :func:`workspace.workspace.load_sample_workspace`), 30 numeric columns.
- ``adult``: a scikit-learn Pipeline (one-hot of Adult's 8 string columns, 108 transformed columns; the six
  numbers passed through; ``GradientBoostingClassifier(random_state=0)``) fitted on 8,000 seeded rows of UCI
  ``adult.data`` (``shared/data``, tests/shared_data.py) and loaded as a user's files
  (:func:`workspace.workspace.load_user_workspace`): LIME explains the 14 raw columns, the strings as
  categorical levels.
- ``adult_onehot``: the table :mod:`benchmarks.vs_peer` serves: Adult one-hot encoded beforehand
  (``pandas.get_dummies``, 108 columns, every row of ``adult.data``) and ``GradientBoostingClassifier(random_state=0)``
  fitted on it: LIME explains the 108 columns.

For each case, the LIME the page draws (``app.services.tabular._make_lime``) explains the first ``--rows``
held-out rows; printed per case: CPU ms a row (``time.process_time``, this process, median and max), the
neighbourhood size reached, whether the tolerance was met and how many features the neighbourhood did not
identify (``params["unidentified"]``: indicator changed in fewer than ``min_changes`` samples a fit, left out of
the judgment). ``--reproducible`` uses the build's stopping rule (no time budget, 8,000-sample cap:
:func:`app.services.tabular.reproducible_lime`). The last line is one JSON object.
"""
from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from benchmarks.build_store import ADULT_COLS, _adult_frame


def _adult_files(folder: Path) -> tuple[Path, Path]:
    import skops.io as sio
    from sklearn.compose import ColumnTransformer
    from sklearn.ensemble import GradientBoostingClassifier
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import OneHotEncoder

    df = _adult_frame("adult.data").sample(8000, random_state=0).reset_index(drop=True)
    strings = [c for c in ADULT_COLS[:-1] if not pd.api.types.is_numeric_dtype(df[c])]
    prep = ColumnTransformer([("str", OneHotEncoder(handle_unknown="ignore", sparse_output=False), strings)],
                             remainder="passthrough")
    model = Pipeline([("prep", prep), ("gb", GradientBoostingClassifier(random_state=0))])
    model.fit(df.drop(columns=["income"]), df["income"])
    width = model[:-1].transform(df.drop(columns=["income"]).head(1)).shape[1]
    print(f"adult pipeline: {width} transformed columns, {df.shape[1] - 1} raw")
    sio.dump(model, folder / "adult.skops")
    df.to_csv(folder / "adult.csv", index=False)
    return folder / "adult.skops", folder / "adult.csv"


def _onehot_files(folder: Path) -> tuple[Path, Path]:
    from sklearn.ensemble import GradientBoostingClassifier

    from benchmarks.vs_peer_parts.datasets import adult_onehot_files

    return adult_onehot_files(folder, GradientBoostingClassifier(random_state=0))


def _workspace(case: str, folder: Path):
    from workspace.workspace import load_sample_workspace, load_user_workspace

    if case == "sample":
        return load_sample_workspace()
    if case == "adult_onehot":
        return load_user_workspace(*_onehot_files(folder), "income")
    model, data = _adult_files(folder)
    return load_user_workspace(model, data, "income")


def measure(case: str, rows: int, folder: Path) -> dict:
    """CPU ms a row of the page's LIME on the first ``rows`` held-out rows of ``case``."""
    from app import services
    from app.services import tabular

    ws = _workspace(case, folder)
    services.init(ws, warm=False)
    lime = tabular._make_lime()
    lime.explain(ws.X.iloc[[int(ws.test_idx[0])]])  # warm: imports, caches
    ms, sizes, conv, unid = [], [], [], []
    for r in ws.test_idx[:rows]:
        t0 = time.process_time()
        e = lime.explain(ws.X.iloc[[int(r)]])
        ms.append(1000 * (time.process_time() - t0))
        sizes.append(int(e.params["num_samples"]))
        conv.append(bool(e.params["converged"]))
        unid.append(len(e.params.get("unidentified", ())))
    out = {"case": case, "features": ws.X.shape[1], "rows": rows, "cpu_ms_median": float(np.median(ms)),
           "cpu_ms_max": float(np.max(ms)), "num_samples": sizes, "converged": sum(conv), "unidentified": unid}
    print(f"{case}: {ws.X.shape[1]} columns, CPU ms a row median {out['cpu_ms_median']:.0f}, max "
          f"{out['cpu_ms_max']:.0f}; samples {sizes}; converged {sum(conv)}/{rows}; features not identified "
          f"(left out of the judgment) {unid}")
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.lime_speed", description=__doc__.split("\n")[0])
    p.add_argument("--cases", default="sample,adult,adult_onehot")
    p.add_argument("--rows", type=int, default=8)
    p.add_argument("--reproducible", action="store_true", help="the build's stopping rule (no time budget)")
    p.add_argument("--quick", action="store_true", help="sample and adult, one row, for CI (figures not asserted)")
    args = p.parse_args(argv)
    if args.quick:
        args.cases, args.rows = "sample,adult", 1
    if args.reproducible:
        from app.services import tabular

        tabular.reproducible_lime()
    with tempfile.TemporaryDirectory() as tmp:
        results = [measure(c.strip(), args.rows, Path(tmp)) for c in args.cases.split(",") if c.strip()]
    print(json.dumps({"reproducible": args.reproducible, "results": results}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
