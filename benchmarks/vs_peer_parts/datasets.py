"""The data and models of :mod:`benchmarks.vs_peer`: breast cancer and UCI Adult, split as Candor splits a
user's table, with the same estimator fitted here (a ``.skops`` file) and in the peer's environment."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd

from benchmarks.vs_peer_parts.peer_env import PEER_SCRIPT
from tests.shared_data import shared_data_dir

ADULT_COLS = ["age", "workclass", "fnlwgt", "education", "education-num", "marital-status", "occupation",
              "relationship", "race", "sex", "capital-gain", "capital-loss", "hours-per-week",
              "native-country", "income"]
ADULT_CATS = ["workclass", "education", "marital-status", "occupation", "relationship", "race", "sex",
              "native-country"]


def _breast_cancer() -> tuple[pd.DataFrame, str, str, dict, list]:
    from sklearn.datasets import load_breast_cancer

    frame = load_breast_cancer(as_frame=True).frame
    return frame, "target", "RandomForestClassifier", {"n_estimators": 200, "random_state": 0}, []


def adult_onehot_files(folder: Path, model) -> tuple[Path, Path]:
    """Adult one-hot encoded beforehand (108 columns, as :func:`_adult` prepares it) with ``model`` fitted on it,
    written as ``onehot.skops`` and ``onehot.csv`` in ``folder``; their paths (a user's two files)."""
    import skops.io as sio

    frame = _adult()[0]
    model.fit(frame.drop(columns=["income"]), frame["income"])
    sio.dump(model, folder / "onehot.skops")
    frame.to_csv(folder / "onehot.csv", index=False)
    return folder / "onehot.skops", folder / "onehot.csv"


def _adult() -> tuple[pd.DataFrame, str, str, dict, list]:
    folder = shared_data_dir()
    if folder is None or not (folder / "adult" / "adult.data").exists():
        raise FileNotFoundError("Adult needs shared/data/adult/adult.data (see tests/shared_data.py)")
    df = pd.read_csv(folder / "adult" / "adult.data", header=None, names=ADULT_COLS, skipinitialspace=True,
                     na_values=["?"]).dropna(how="all")
    y = (df.pop("income").str.rstrip(".") == ">50K").astype(int)
    for c in ADULT_CATS:
        df[c] = df[c].fillna("Unknown")
    onehot = pd.get_dummies(df, columns=ADULT_CATS, dtype=int)
    onehot["income"] = y.to_numpy()
    return onehot.reset_index(drop=True), "income", "GradientBoostingClassifier", {"random_state": 0}, ADULT_CATS


DATASETS = {"breast_cancer": _breast_cancer, "adult": _adult}


def prepare(name: str, folder: Path, peer_python: Path) -> dict:
    """Write the table, the split, Candor's .skops model and the peer's pickled model into ``folder``.

    The split is the one Candor makes of a user's table (``workspace.load_pair``: stratified,
    25 % held out, seed 0), recomputed here so explainerdashboard explains the very same rows.
    """
    import skops.io as sio
    from sklearn.ensemble import GradientBoostingClassifier, RandomForestClassifier
    from sklearn.model_selection import train_test_split

    frame, target, estimator, params, cats = DATASETS[name]()
    folder.mkdir(parents=True, exist_ok=True)
    y = frame[target].to_numpy()
    train, test = train_test_split(np.arange(len(frame)), test_size=0.25, random_state=0, stratify=y)
    train, test = np.sort(train), np.sort(test)
    frame.to_csv(folder / "table.csv", index=False)
    frame.iloc[train].to_csv(folder / "train.csv")
    frame.iloc[test].to_csv(folder / "test.csv")
    meta = {"target": target, "estimator": estimator, "params": params, "cats": cats}
    (folder / "meta.json").write_text(json.dumps(meta))
    kind = {"RandomForestClassifier": RandomForestClassifier, "GradientBoostingClassifier": GradientBoostingClassifier}
    X_train = frame.iloc[train].drop(columns=[target])
    model = kind[estimator](**params).fit(X_train, y[train])
    sio.dump(model, folder / "model.skops")
    subprocess.run([peer_python, PEER_SCRIPT, "train", folder], check=True)
    return {"rows": len(frame), "held_out": len(test), "features": X_train.shape[1], "target": target,
            "model": f"{estimator}({params})"}
