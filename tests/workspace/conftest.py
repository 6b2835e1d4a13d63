"""Helpers shared by the workspace tests."""
from __future__ import annotations

from pathlib import Path

import skops.io as sio
from sklearn.linear_model import LogisticRegression


def features_case(folder: Path, bc, columns: list[str], features_file: str, text: str) -> Path:
    """A user model on breast-cancer ``columns`` (``model.skops``, ``data.csv`` with ``diagnosis``) and a
    features file named ``features_file`` holding ``text`` beside them; returns ``folder``."""
    X, y, train, _ = bc
    sio.dump(LogisticRegression(max_iter=3000).fit(X.iloc[train][columns], y.iloc[train]), folder / "model.skops")
    X[columns].assign(diagnosis=y).to_csv(folder / "data.csv", index=False)
    (folder / features_file).write_text(text, encoding="utf-8")
    return folder
