"""Integrated Gradients of the user's PyTorch tabular model for one row, beside its SHAP values.

No page shows them yet; ``python -m app check`` does, through this service, on the same SHAP row
the Descriptive page shows.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

import explainers as ex

from workspace.errors import CandorError
from workspace.torch_files import is_torch_model
from ._core import row_cache, workspace
from .tabular import check_row, guarded, shap_row

IG_STEPS = 50


@dataclass(frozen=True)
class GradientView:
    """Integrated Gradients (from the training median) and SHAP of the explained output for one row."""

    ig: ex.Explanation
    shap: ex.Explanation
    spearman: float
    """Spearman ρ of |IG| with |SHAP| over the features."""
    units: str


def has_gradients() -> bool:
    """Whether the explained model is a PyTorch model (Integrated Gradients need its gradients)."""
    ws = workspace()
    return is_torch_model(ws.adapter.model)


@row_cache(maxsize=64)
def _ig_row(row: int) -> GradientView:
    from explainers.gradients import integrated_gradients

    if not has_gradients():
        raise CandorError("Integrated Gradients need a PyTorch model; this model has no gradients to follow")
    ws = workspace()
    a = ws.adapter
    k = ws.model.index  # the page's output
    baseline = np.nanmedian(ws.X.iloc[ws.train_idx].to_numpy(dtype=float), axis=0)
    ig = guarded(f"Integrated Gradients for row {row}", lambda: integrated_gradients(
        a.model.scalar_module(k), ws.X.iloc[row].to_numpy(dtype=float), baseline, feature_names=a.feature_names,
        target=a.output_names[k], output_space=a.output_space, n_steps=IG_STEPS))
    s = shap_row(row)
    return GradientView(ig, s, float(ex.spearman(np.abs(ig.values), np.abs(s.values))), a.units(k))


def gradient_view(row) -> GradientView:
    """Integrated Gradients of the explained output for one row, and their rank agreement with SHAP."""
    return _ig_row(check_row(row))
