"""Helpers shared by the sample-model build scripts.

Everything here is deterministic (``SEED = 0``) and offline: the data come from
packages installed with the app (scikit-learn's bundled copy of the Wisconsin
breast cancer data), nothing is downloaded.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.datasets import load_breast_cancer
from sklearn.metrics import accuracy_score, roc_auc_score
from sklearn.model_selection import train_test_split

SEED = 0
TEST_SIZE = 0.25
ARTIFACTS = Path(__file__).resolve().parent / "artifacts"

BREAST_CANCER_SOURCE = {
    "name": "Breast Cancer Wisconsin (Diagnostic)",
    "loaded_with": "sklearn.datasets.load_breast_cancer (bundled with scikit-learn, no download)",
    "origin": "UCI Machine Learning Repository, Wolberg, Street & Mangasarian (1995)",
    "licence": "CC BY 4.0 (as listed by UCI)",
    "rows": 569,
    "features": 30,
    "target_note": "relabelled so that 1 = malignant, 0 = benign (scikit-learn uses 0 = malignant)",
}


def breast_cancer() -> tuple[pd.DataFrame, pd.Series]:
    """The 569 x 30 breast cancer table with target ``diagnosis`` (1 = malignant).

    Returns
    -------
    X : DataFrame of shape (569, 30)
    y : Series of shape (569,), name ``"diagnosis"``, values in {0, 1}
    """
    data = load_breast_cancer(as_frame=True)
    X = data.data.copy()
    y = (1 - data.target).rename("diagnosis").astype(int)
    return X, y


def split_indices(y: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """Stratified train/test row indices (25 % held out, ``random_state=0``)."""
    idx = np.arange(len(y))
    train, test = train_test_split(idx, test_size=TEST_SIZE, random_state=SEED, stratify=y)
    return np.sort(train), np.sort(test)


def binary_metrics(y_true: np.ndarray, proba_positive: np.ndarray) -> dict:
    """Held-out accuracy (threshold 0.5) and ROC AUC, rounded to 4 decimals."""
    pred = (proba_positive >= 0.5).astype(int)
    return {
        "accuracy": round(float(accuracy_score(y_true, pred)), 4),
        "roc_auc": round(float(roc_auc_score(y_true, proba_positive)), 4),
    }


def write_metadata(path: Path, metadata: dict) -> None:
    """Write ``metadata`` as indented JSON next to the model file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(metadata, indent=2) + "\n")
