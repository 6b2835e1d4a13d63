"""The peer side of ``benchmarks.vs_peer``: run INSIDE explainerdashboard's own virtual environment.

Imports only pandas, scikit-learn and explainerdashboard (never Candor). Two commands:

``python peer_explainerdashboard.py train FOLDER``
    Fits the model described in ``FOLDER/meta.json`` on ``FOLDER/train.csv`` (same estimator, same
    parameters and seed as Candor's side) and pickles it to ``FOLDER/peer_model.pkl``.
``python peer_explainerdashboard.py serve FOLDER PORT``
    Loads that model and the held-out rows ``FOLDER/test.csv``, builds explainerdashboard's
    ``ClassifierExplainer`` (with ``cats=`` for one-hot groups) and ``ExplainerDashboard`` with its
    defaults, and serves it on 127.0.0.1:PORT with ``run()`` (Dash's server, as Candor's ``python -m app``).
"""
from __future__ import annotations

import json
import pickle
import sys
from pathlib import Path

import pandas as pd


def _estimator(meta: dict):
    from sklearn.ensemble import GradientBoostingClassifier, RandomForestClassifier

    kinds = {"RandomForestClassifier": RandomForestClassifier,
             "GradientBoostingClassifier": GradientBoostingClassifier}
    return kinds[meta["estimator"]](**meta["params"])


def _split(folder: Path, name: str, target: str):
    df = pd.read_csv(folder / name, index_col=0)
    return df.drop(columns=[target]), df[target]


def train(folder: Path) -> None:
    meta = json.loads((folder / "meta.json").read_text())
    X, y = _split(folder, "train.csv", meta["target"])
    model = _estimator(meta).fit(X, y)
    with open(folder / "peer_model.pkl", "wb") as fh:  # our own file, in our own folder
        pickle.dump(model, fh)


def serve(folder: Path, port: int) -> None:
    from explainerdashboard import ClassifierExplainer, ExplainerDashboard

    meta = json.loads((folder / "meta.json").read_text())
    with open(folder / "peer_model.pkl", "rb") as fh:
        model = pickle.load(fh)
    X, y = _split(folder, "test.csv", meta["target"])
    kwargs = {"cats": meta["cats"]} if meta.get("cats") else {}
    explainer = ClassifierExplainer(model, X, y, **kwargs)
    ExplainerDashboard(explainer).run(port=port, host="127.0.0.1")


if __name__ == "__main__":
    command, where = sys.argv[1], Path(sys.argv[2])
    if command == "train":
        train(where)
    elif command == "serve":
        serve(where, int(sys.argv[3]))
    else:
        raise SystemExit(f"unknown command {command!r}; use train or serve")
