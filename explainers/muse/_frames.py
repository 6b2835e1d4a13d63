"""Tables and labels as the rule surrogates read them (no scikit-learn here: the frontier's pure functions and a
server's first page import this, issue 23)."""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import pandas as pd


def as_frame(X: Any, feature_names: Sequence[str] | None = None) -> pd.DataFrame:
    """``X`` as a DataFrame; arrays get ``feature_names`` or ``x0, x1, ...``.

    Raises
    ------
    ValueError
        If ``X`` is not 2-D or ``feature_names`` has the wrong length.
    """
    if isinstance(X, pd.DataFrame):
        return X.set_axis([str(c) for c in X.columns], axis=1)
    arr = np.asarray(X)
    if arr.ndim != 2:
        raise ValueError(f"X must be 2-D, got shape {arr.shape}")
    names = list(feature_names) if feature_names is not None else [f"x{i}" for i in range(arr.shape[1])]
    if len(names) != arr.shape[1]:
        raise ValueError(f"{len(names)} feature names for {arr.shape[1]} columns")
    return pd.DataFrame(arr, columns=names)


def _py(v: Any) -> Any:
    return v.item() if isinstance(v, np.generic) else v
