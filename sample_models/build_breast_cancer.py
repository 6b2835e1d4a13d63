"""Build the bundled gradient-boosting classifier on the breast cancer data.

Run ``python -m sample_models.build_breast_cancer``. Writes
``artifacts/breast_cancer_gb.skops`` (skops, no pickle) and
``artifacts/breast_cancer_gb.json`` (data source, licence, feature names,
target, split and held-out metrics).
"""
from __future__ import annotations

import sys

import skops.io as sio
import sklearn
from sklearn.ensemble import GradientBoostingClassifier

from .common import (
    ARTIFACTS,
    BREAST_CANCER_SOURCE,
    SEED,
    TEST_SIZE,
    binary_metrics,
    breast_cancer,
    split_indices,
    write_metadata,
)

MODEL_PATH = ARTIFACTS / "breast_cancer_gb.skops"
META_PATH = ARTIFACTS / "breast_cancer_gb.json"


def build() -> dict:
    """Fit the model, write it and its metadata, and return the metadata."""
    X, y = breast_cancer()
    train, test = split_indices(y)
    model = GradientBoostingClassifier(n_estimators=150, max_depth=3, random_state=SEED)
    model.fit(X.iloc[train], y.iloc[train])
    proba = model.predict_proba(X.iloc[test])[:, 1]
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    sio.dump(model, MODEL_PATH)
    meta = {
        "model": "GradientBoostingClassifier(n_estimators=150, max_depth=3, random_state=0)",
        "library": f"scikit-learn {sklearn.__version__}",
        "model_file": MODEL_PATH.name,
        "data": BREAST_CANCER_SOURCE,
        "feature_names": list(X.columns),
        "target": "diagnosis",
        "classes": ["benign", "malignant"],
        "split": {"test_size": TEST_SIZE, "random_state": SEED, "stratified": True,
                  "test_indices": test.tolist()},
        "heldout_metrics": binary_metrics(y.iloc[test].to_numpy(), proba),
    }
    write_metadata(META_PATH, meta)
    return meta


if __name__ == "__main__":
    meta = build()
    print(f"wrote {MODEL_PATH.name}: held-out {meta['heldout_metrics']}", file=sys.stderr)
