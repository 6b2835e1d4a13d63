"""What an outsider needs to recompute a store's values: the manifest's ``reproduce`` section and its row files.

SHAP's values are expectations over background rows: ``shap_background_rows.npy`` holds their positions in the
table (``ShapExplainer`` samples ``background_size`` of the training rows with ``seed``; these are the rows it
drew, in its order). LIME's sampling statistics (quartiles, level frequencies) come from training rows:
``lime_training_rows.npy`` holds their positions (all training rows, or the seeded sample the explainer takes
of a large table). The manifest says, per method, what is explained in which units (``output_space``,
``units``, the explained class) and with which settings, so that ``table.iloc[positions]`` and the model file
are all one needs (tests/store/test_reproduce.py recomputes a stored SHAP row that way, by brute force).
"""
from __future__ import annotations

import inspect
import sys
from importlib import metadata

import numpy as np
import pandas as pd

__all__ = ["LIBRARIES", "REPRODUCE_FILES", "library_versions", "lime_reproduction", "lime_training_positions",
           "reproduction", "shap_reproduction"]

REPRODUCE_FILES = ("shap_background_rows.npy", "lime_training_rows.npy")

LIBRARIES = ("numpy", "pandas", "scikit-learn", "shap", "lime", "pyarrow", "scipy")
"""The libraries whose versions a store records (the manifest's ``libraries``, and its chunks' key)."""


def library_versions() -> dict[str, str | None]:
    """Python's version and each of :data:`LIBRARIES`' installed versions (None when one is not installed): what a
    build records in its manifest and review reports print beside their figures."""
    found = {"python": sys.version.split()[0]}
    for name in LIBRARIES:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            found[name] = None
    return found


def _positions(table: pd.DataFrame, frame: pd.DataFrame) -> np.ndarray:
    """Positions in ``table`` of the rows of ``frame`` (taken from it by label), so ``table.iloc[p]`` is ``frame``."""
    pos = table.index.get_indexer(frame.index)
    if np.any(pos < 0):
        raise ValueError("a background row is not a row of the table")
    return pos.astype(np.int64)


def lime_training_positions(train_positions: np.ndarray, max_rows: int, seed: int) -> np.ndarray:
    """The training rows LIME's statistics come from: all, or the sorted seeded sample
    ``numpy.random.default_rng(seed).choice(n, max_rows, replace=False)`` when there are more than ``max_rows``
    (as :class:`explainers.LimeExplainer` takes it)."""
    train = np.asarray(train_positions, dtype=np.int64)
    if len(train) <= max_rows:
        return train
    return train[np.sort(np.random.default_rng(seed).choice(len(train), max_rows, replace=False))]


def shap_reproduction(table: pd.DataFrame, shap) -> tuple[dict, dict[str, np.ndarray]]:
    """SHAP's ``reproduce`` section and its background rows' positions in ``table`` (``ws.X``).

    Parameters
    ----------
    table : DataFrame
        The workspace's table, whose positions the array holds.
    shap : ShapExplainer

    Returns
    -------
    (dict, dict of str to ndarray)
    """
    bg = _positions(table, shap.background)
    section = {"output_space": shap.output_space, "units": shap.units, "target": shap.target_name,
               "algorithm": shap.algorithm, "exact": bool(shap.exact), "seed": shap.seed,
               "background_rows": "shap_background_rows.npy", "n_background": int(len(bg)),
               "how": "values are the Shapley values of the explained output at the row, interventional: a "
                      "coalition's value is the mean output over the background rows with the coalition's "
                      "columns set to the row's (table.iloc[background_rows]); base = mean output over them"
                      + ("; a boosted classifier is explained in log-odds (its decision function), "
                         "params['probability'] gives the probability beside" if shap.output_space == "log_odds"
                         else "")}
    return section, {"shap_background_rows.npy": bg}


def lime_reproduction(train_positions, lime) -> tuple[dict, dict[str, np.ndarray]]:
    """LIME's ``reproduce`` section and the positions of the rows its sampling statistics come from.

    Parameters
    ----------
    train_positions : array of int
        The training rows the explainer was given (``ws.train_idx``).
    lime : LimeExplainer

    Returns
    -------
    (dict, dict of str to ndarray)
    """
    max_rows = inspect.signature(type(lime)).parameters["max_training_rows"].default
    lime_rows = lime_training_positions(train_positions, max_rows, lime.seed)
    section = {"output_space": lime.output_space, "units": lime.units,
               "target": lime.class_names[lime.target_index], "mode": lime.mode, "seed": lime.seed,
               "num_samples": lime.num_samples, "repeats": lime.repeats, "kernel_width": lime.kernel_width,
               "training_rows": "lime_training_rows.npy", "n_training": int(len(lime_rows)),
               "how": "LIME's sampling statistics (quartile bins, level frequencies) come from "
                      "table.iloc[training_rows]: every training row, or the sorted seeded sample "
                      f"numpy.random.default_rng({lime.seed}).choice(n, {max_rows}, replace=False) of them; "
                      "each row's params give its seeds and neighbourhood size"}
    return section, {"lime_training_rows.npy": lime_rows}


def reproduction(table: pd.DataFrame, train_positions, shap, lime) -> tuple[dict, dict[str, np.ndarray]]:
    """The manifest's ``reproduce`` section and the arrays it names, for explainers ``shap`` and ``lime``
    (:func:`shap_reproduction` and :func:`lime_reproduction` together; the build asks each method's entry).

    Returns
    -------
    (dict, dict of str to ndarray)
    """
    (s, s_rows), (l, l_rows) = shap_reproduction(table, shap), lime_reproduction(train_positions, lime)
    return {"shap": s, "lime": l}, {**s_rows, **l_rows}
