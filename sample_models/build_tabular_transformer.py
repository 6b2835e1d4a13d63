"""Build the bundled tabular transformer on the breast cancer data (CPU, seeded).

Run ``python -m sample_models.build_tabular_transformer``. Uses the same
train/test split as the gradient-boosting sample; writes
``artifacts/tabular_transformer.safetensors`` and ``tabular_transformer.json``.
"""
from __future__ import annotations

import sys

import numpy as np
import torch
from safetensors.torch import save_file

from .common import ARTIFACTS, BREAST_CANCER_SOURCE, SEED, binary_metrics, breast_cancer, split_indices, write_metadata
from .tabular_transformer import TabularTransformer

WEIGHTS_PATH = ARTIFACTS / "tabular_transformer.safetensors"
META_PATH = ARTIFACTS / "tabular_transformer.json"
EPOCHS = 100
LABEL_SMOOTHING = 0.1


def build() -> dict:
    """Train with AdamW (label smoothing 0.1 keeps the logits moderate, so gradient paths are smooth), write weights and metadata."""
    torch.manual_seed(SEED)
    torch.set_num_threads(1)
    X, y = breast_cancer()
    train, test = split_indices(y)
    xt = torch.tensor(X.to_numpy()[train], dtype=torch.float32)
    yt = torch.tensor(y.to_numpy()[train])
    model = TabularTransformer(n_features=X.shape[1])
    model.mean.copy_(xt.mean(0))
    model.scale.copy_(xt.std(0))
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=1e-3)
    gen = torch.Generator().manual_seed(SEED)
    model.train()
    for _ in range(EPOCHS):
        for batch in torch.randperm(len(xt), generator=gen).split(64):
            opt.zero_grad()
            loss = torch.nn.functional.cross_entropy(model(xt[batch]), yt[batch], label_smoothing=LABEL_SMOOTHING)
            loss.backward()
            opt.step()
    model.eval()
    with torch.no_grad():
        proba = torch.softmax(model(torch.tensor(X.to_numpy()[test], dtype=torch.float32)), -1)[:, 1].numpy()
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    save_file({k: v.contiguous() for k, v in model.state_dict().items()}, str(WEIGHTS_PATH))
    meta = {
        "model": "TabularTransformer (one token per feature + CLS, pre-LN, explicit softmax attention)",
        "library": f"torch {torch.__version__}",
        "config": model.config,
        "training": {"optimizer": "AdamW(lr=3e-3, weight_decay=1e-3)", "epochs": EPOCHS,
                     "label_smoothing": LABEL_SMOOTHING,
                     "batch_size": 64, "seed": SEED},
        "model_file": WEIGHTS_PATH.name,
        "data": BREAST_CANCER_SOURCE,
        "feature_names": list(X.columns),
        "classes": ["benign", "malignant"],
        "heldout_metrics": binary_metrics(y.to_numpy()[test], np.asarray(proba)),
    }
    write_metadata(META_PATH, meta)
    return meta


if __name__ == "__main__":
    meta = build()
    print(f"wrote {WEIGHTS_PATH.name}: held-out {meta['heldout_metrics']}", file=sys.stderr)
