"""What the Model & data page reports about a model: :class:`ModelSummary`."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ModelSummary:
    """What the Model & data page reports about a model.

    Parameters
    ----------
    task : str
        ``"binary classification"`` etc.
    classes : tuple of str
    target : str
        Target column name.
    metrics : dict of str to float
        Held-out metrics (accuracy, ROC AUC).
    n_train, n_test : int
    feature_names : tuple of str
    source : str
        Where model and data came from.
    """

    task: str
    classes: tuple[str, ...]
    target: str
    metrics: dict
    n_train: int
    n_test: int
    feature_names: tuple[str, ...]
    source: str
