"""The command-line flags that name a model and its data: ``python -m app`` and ``python -m app build`` take the same."""
from __future__ import annotations

import argparse

from workspace.torch_options import add_torch_arguments


def add_model_arguments(p: argparse.ArgumentParser) -> None:
    """Add ``--model``, ``--data``, ``--target``, ``--features-file``, ``--target-class``, ``--trust-model-code``
    and the ``--torch-*`` flags to ``p``."""
    p.add_argument("--model", help="fitted scikit-learn estimator or Pipeline (.skops; .joblib/.pkl with "
                                   "--trust-model-code) or PyTorch tabular model (a state dict .pt/.pth/.safetensors "
                                   "with --torch-class; TorchScript with --trust-model-code)")
    p.add_argument("--data", help="CSV/TSV or Parquet with the model's feature columns and the target column")
    p.add_argument("--target", help="name of the target column in --data")
    p.add_argument("--features-file", metavar="FILE", help="YAML/JSON of the features' display names, descriptions "
                   "and value formats (default: <data>.features.yaml beside --data, if present)")
    p.add_argument("--target-class", help="class the pages explain against the rest (a multiclass model; default "
                                          "the last class; the navbar's class picker switches it)")
    p.add_argument("--trust-model-code", "--trust-pickle", dest="trust_pickle", action="store_true",
                   help="the model file may RUN CODE: allow .joblib/.pkl, TorchScript, and skops types outside "
                        "Candor's reviewed list; only for files you trust (never for uploads)")
    add_torch_arguments(p)
