"""Attention page services: the tabular transformer's attention next to IG and SHAP."""
from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np

import explainers as ex

from workspace.errors import CandorError
from ._core import lazy, row_cache, workspace
from .tabular import background, check_row
from .text_loader import import_guard

GRADIENT_SHAP_SAMPLES = 300


@dataclass(frozen=True)
class TorchBundle:
    model: object
    forward: object
    median: np.ndarray
    background: np.ndarray
    metadata: dict


def _make_torch() -> TorchBundle | None:
    ws = workspace()
    if ws.transformer_paths is None:
        return None
    with import_guard():  # imported in a request thread now, not by the warm-up: a fork meanwhile waits
        import torch

        from explainers.gradients import ClassLogOdds
        from sample_models.tabular_transformer import load_tabular_transformer

        torch.set_num_threads(1)
        weights, config = ws.transformer_paths
        model = load_tabular_transformer(weights, config)
    train = ws.X.iloc[ws.train_idx].to_numpy(dtype=float)
    return TorchBundle(model, ClassLogOdds(model, 1), np.median(train, axis=0),
                       background().to_numpy(dtype=float), json.loads(config.read_text()))


_torch = lazy("torch", _make_torch)  # loaded when the Attention page first asks (issue 14)


@dataclass(frozen=True)
class AttentionView:
    attention: ex.AttentionMap
    cls: np.ndarray
    ig: ex.Explanation
    shap: ex.Explanation
    agreement: ex.AgreementReport
    metadata: dict


@row_cache(maxsize=256)
def _attention_row(row: int) -> AttentionView:
    from explainers.attention.aggregates import cls_row
    from explainers.attention.agreement import compare_attention_attribution
    from explainers.attention.extract import tabular_attention
    from explainers.gradients import gradient_shap, integrated_gradients

    ws = workspace()
    bundle = _torch()
    if bundle is None:
        raise CandorError("no attention model is loaded: the attention view needs the bundled tabular transformer")
    x = ws.X.iloc[row].to_numpy(dtype=float)
    names = tuple(map(str, ws.X.columns))
    attn = tabular_attention(bundle.model, x, names)
    cls = cls_row(attn.weights, layer=None, head_agg=None)[..., 1:]  # every layer and head; CLS-to-CLS left out
    ig = integrated_gradients(bundle.forward, x, bundle.median, feature_names=names, target=ws.positive_class)
    shp = gradient_shap(bundle.forward, x, bundle.background, feature_names=names, target=ws.positive_class,
                        nsamples=GRADIENT_SHAP_SAMPLES)
    return AttentionView(attn, cls, ig, shp, compare_attention_attribution(cls, ig, k=5), bundle.metadata)


def attention_view(row) -> AttentionView:
    """Attention, Integrated Gradients and SHAP of the tabular transformer for one row."""
    return _attention_row(check_row(row))


def has_attention_model() -> bool:
    return workspace().transformer_paths is not None
