"""Persuasive page services: top-k simplification of a row's SHAP explanation, for every k."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

import explainers as ex

from ._core import row_cache, workspace
from .tabular import background, check_row, predict_positive, shap_row


@dataclass(frozen=True)
class PersuasiveView:
    simplification: ex.Simplification
    curve: tuple[ex.Simplification, ...]


@row_cache(maxsize=256)
def _persuasive_row(row: int) -> tuple[ex.Simplification, ...]:
    ws = workspace()
    reference = np.median(ws.X.iloc[ws.train_idx].to_numpy(dtype=float), axis=0)
    return ex.simplify_top_k_all(shap_row(row), range(len(ws.X.columns) + 1), predict_fn=predict_positive,
                                 background=background().to_numpy(dtype=float), reference=reference,
                                 class_names=(ws.classes[0], ws.classes[1]))


def persuasive(row, k: int) -> PersuasiveView:
    """Top-k simplification of the row's SHAP explanation, and every k for the tradeoff curve."""
    all_k = _persuasive_row(check_row(row))
    k = int(min(max(int(k), 0), len(all_k) - 1))
    return PersuasiveView(all_k[k], all_k)
