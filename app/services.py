"""The only place :mod:`app` calls :mod:`explainers`.

It holds the loaded :class:`~app.loading.Workspace`, builds each explainer
once (thread-safe, on first use or in the warm-up thread started by
:func:`init`), and memoizes per-row results keyed by ``(row, params)``.
Callbacks call exactly one function here and render what it returns.
"""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from functools import lru_cache
from typing import Callable

import numpy as np
import pandas as pd
from sklearn.metrics import accuracy_score, roc_auc_score

import explainers as ex
from explainers.metrics import RankAgreement

from .errors import CandorError
from .loading import Workspace

BACKGROUND_SIZE = 100
LIME_SAMPLES = 1000
SURROGATE_LEAVES = 8
GRADIENT_SHAP_SAMPLES = 300


class _Lazy:
    """A value computed once, on first access, under a lock."""

    def __init__(self, factory: Callable[[], object]) -> None:
        self._factory, self._lock, self._value, self._done = factory, threading.Lock(), None, False

    def get(self):
        if not self._done:
            with self._lock:
                if not self._done:
                    self._value, self._done = self._factory(), True
        return self._value


_ws: Workspace | None = None
_lazy: dict[str, _Lazy] = {}
first_request = threading.Event()
"""Set by the server on its first request; background warm-up waits for it so the first page is not slowed."""


def workspace() -> Workspace:
    if _ws is None:
        raise RuntimeError("services.init(workspace) has not been called")
    return _ws


def init(ws: Workspace, *, warm: bool | str = True) -> None:
    """Install ``ws`` as the workspace every page explains.

    ``warm=True`` computes the global results in a background thread,
    ``warm="sync"`` computes them before returning, ``False`` leaves them lazy.
    """
    global _ws
    _ws = ws
    for fn in (_row_cached, _lime_row, _persuasive_row, _attention_row):
        fn.cache_clear()
    _lazy.clear()
    _lazy.update(
        shap=_Lazy(_make_shap), shap_all=_Lazy(lambda: _lazy["shap"].get().explain_many(ws.X)),
        lime=_Lazy(_make_lime), labels=_Lazy(lambda: ws.model.predict(ws.X)),
        surrogate=_Lazy(_make_surrogate), curve=_Lazy(_make_curve), torch=_Lazy(_make_torch),
    )
    if warm == "sync":
        _warm()
    elif warm:
        threading.Thread(target=_warm, kwargs={"wait": True}, name="candor-warm", daemon=True).start()


def _warm(wait: bool = False) -> None:
    if wait:
        first_request.wait(timeout=15)
        time.sleep(1.0)  # the first page's own callbacks arrive just after the HTML
    for key in ("shap_all", "labels", "surrogate", "curve", "torch"):
        try:
            _lazy[key].get()
        except Exception:  # surfaced again, with its message, when a page asks for it
            pass


# ----------------------------------------------------------------- construction
def _background() -> pd.DataFrame:
    ws = workspace()
    train = ws.X.iloc[ws.train_idx]
    return train.sample(n=min(BACKGROUND_SIZE, len(train)), random_state=0)


def _predict_positive(a: np.ndarray) -> np.ndarray:
    ws = workspace()
    return ws.model.predict_proba(pd.DataFrame(a, columns=ws.X.columns))[:, 1]


def _make_shap() -> ex.ShapExplainer:
    ws = workspace()
    return ex.ShapExplainer(ws.model, background=ws.X.iloc[ws.train_idx], target_index=1,
                            target_name=ws.positive_class, background_size=BACKGROUND_SIZE, seed=0)


def _make_lime() -> ex.LimeExplainer:
    ws = workspace()
    return ex.LimeExplainer(lambda a: ws.model.predict_proba(pd.DataFrame(a, columns=ws.X.columns)),
                            training_data=ws.X.iloc[ws.train_idx], class_names=ws.classes,
                            num_samples=LIME_SAMPLES, seed=0)


def _model_labels() -> np.ndarray:
    return _lazy["labels"].get()


def _make_surrogate() -> ex.Surrogate:
    ws = workspace()
    labels = _model_labels()
    s = ex.TreeRuleSurrogate(max_leaf_nodes=SURROGATE_LEAVES).fit(ws.X.iloc[ws.train_idx], labels[ws.train_idx])
    names = {c: n for c, n in zip(ws.model.classes_, ws.classes)}
    return s.to_surrogate(ws.X.iloc[ws.test_idx], labels[ws.test_idx], label_names=names)


def _make_curve() -> ex.SurrogateCurve:
    ws = workspace()
    labels = _model_labels()
    return ex.tree_surrogate_curve(ws.X.iloc[ws.train_idx], labels[ws.train_idx],
                                   ws.X.iloc[ws.test_idx], labels[ws.test_idx])


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
    import json

    import torch

    from explainers.gradients import ClassLogOdds
    from sample_models.tabular_transformer import load_tabular_transformer

    torch.set_num_threads(1)
    weights, config = ws.transformer_paths
    model = load_tabular_transformer(weights, config)
    train = ws.X.iloc[ws.train_idx].to_numpy(dtype=float)
    return TorchBundle(model, ClassLogOdds(model, 1), np.median(train, axis=0),
                       _background().to_numpy(dtype=float), json.loads(config.read_text()))


# ----------------------------------------------------------------- page services
def check_row(row) -> int:
    """Validate a row id from the UI; raises :class:`CandorError` naming the valid range."""
    n = len(workspace().X)
    try:
        r = int(row)
    except (TypeError, ValueError):
        raise CandorError(f"row must be a whole number between 0 and {n - 1}, got {row!r}") from None
    if not 0 <= r < n:
        raise CandorError(f"row {r} does not exist; rows are numbered 0 to {n - 1}")
    return r


def default_row() -> int:
    """First held-out row."""
    return int(workspace().test_idx[0])


def model_summary() -> ex.ModelSummary:
    """Task, classes and held-out metrics computed now from the loaded model."""
    ws = workspace()
    Xt, yt = ws.X.iloc[ws.test_idx], ws.y[ws.test_idx]
    proba = ws.model.predict_proba(Xt)[:, 1]
    metrics = {"accuracy": float(accuracy_score(yt, (proba >= 0.5).astype(int)))}
    if len(np.unique(yt)) == 2:
        metrics["roc_auc"] = float(roc_auc_score(yt, proba))
    return ex.ModelSummary(task="binary classification", classes=ws.classes, target=ws.target, metrics=metrics,
                           n_train=len(ws.train_idx), n_test=len(ws.test_idx),
                           feature_names=tuple(map(str, ws.X.columns)), source=ws.source)


def data_page(page: int, page_size: int) -> tuple[list[dict], int]:
    """One page of the data table as records (only these rows reach the browser).

    Returns
    -------
    records : list of dict
        ``id`` (row number), ``split``, the true label, P(positive class) and the features.
    page_count : int
    """
    ws = workspace()
    n = len(ws.X)
    page_count = max(1, -(-n // page_size))
    page = min(max(int(page or 0), 0), page_count - 1)
    rows = np.arange(page * page_size, min(n, (page + 1) * page_size))
    chunk = ws.X.iloc[rows]
    proba = ws.model.predict_proba(chunk)[:, 1]
    is_test = np.isin(rows, ws.test_idx)
    frame = pd.DataFrame({"id": rows, "split": np.where(is_test, "held-out", "train"),
                          ws.target: [ws.classes[i] for i in ws.y[rows]],
                          f"P({ws.positive_class})": np.round(proba, 3)})
    frame = pd.concat([frame, chunk.round(4).reset_index(drop=True)], axis=1)
    return frame.to_dict("records"), page_count


def global_importance() -> ex.GlobalImportance:
    """SHAP attributions of every row (mean |SHAP| is the global importance)."""
    return _lazy["shap_all"].get()


@lru_cache(maxsize=2048)
def _row_cached(row: int) -> ex.Explanation:
    ws = workspace()
    g = global_importance()
    return _lazy["shap"].get().from_row(ws.X.iloc[[row]], g.values[row], g.base_value)


def shap_row(row) -> ex.Explanation:
    """SHAP explanation of one row (read from the all-rows computation)."""
    return _row_cached(check_row(row))


@lru_cache(maxsize=512)
def _lime_row(row: int) -> ex.Explanation:
    return _lazy["lime"].get().explain(workspace().X.iloc[[row]])


def lime_row(row) -> ex.Explanation:
    """LIME explanation of one row (interactive profile, seeded)."""
    return _lime_row(check_row(row))


@dataclass(frozen=True)
class LocalView:
    shap: ex.Explanation
    lime: ex.Explanation
    agreement: RankAgreement


def local_view(row, k: int = 5) -> LocalView:
    """SHAP and LIME for one row and their rank agreement (Spearman, top-k overlap)."""
    s, l = shap_row(row), lime_row(row)
    return LocalView(s, l, ex.rank_agreement(s, l, k))


def surrogate() -> tuple[ex.Surrogate, ex.SurrogateCurve]:
    """The CART rule surrogate and its fidelity-vs-complexity sweep."""
    return _lazy["surrogate"].get(), _lazy["curve"].get()


@dataclass(frozen=True)
class PersuasiveView:
    simplification: ex.Simplification
    curve: tuple[ex.Simplification, ...]


@lru_cache(maxsize=256)
def _persuasive_row(row: int) -> tuple[ex.Simplification, ...]:
    ws = workspace()
    expl = shap_row(row)
    background = _background().to_numpy(dtype=float)
    reference = np.median(ws.X.iloc[ws.train_idx].to_numpy(dtype=float), axis=0)
    return ex.simplify_top_k_all(expl, range(len(ws.X.columns) + 1), predict_fn=_predict_positive,
                                 background=background, reference=reference,
                                 class_names=(ws.classes[0], ws.classes[1]))


def persuasive(row, k: int) -> PersuasiveView:
    """Top-k simplification of the row's SHAP explanation, and every k for the tradeoff curve."""
    all_k = _persuasive_row(check_row(row))
    k = int(min(max(int(k), 0), len(all_k) - 1))
    return PersuasiveView(all_k[k], all_k)


@dataclass(frozen=True)
class AttentionView:
    attention: ex.AttentionMap
    cls: np.ndarray
    ig: ex.Explanation
    shap: ex.Explanation
    agreement: ex.AgreementReport
    metadata: dict


@lru_cache(maxsize=256)
def _attention_row(row: int) -> AttentionView:
    from explainers.attention import cls_attention, tabular_attention
    from explainers.compare import compare_attention_attribution
    from explainers.gradients import gradient_shap, integrated_gradients

    ws = workspace()
    bundle = _lazy["torch"].get()
    if bundle is None:
        raise CandorError("no attention model is loaded: the attention view needs the bundled tabular transformer")
    x = ws.X.iloc[row].to_numpy(dtype=float)
    names = tuple(map(str, ws.X.columns))
    attn = tabular_attention(bundle.model, x, names)
    cls = cls_attention(attn)
    ig = integrated_gradients(bundle.forward, x, bundle.median, feature_names=names, target=ws.positive_class)
    shp = gradient_shap(bundle.forward, x, bundle.background, feature_names=names, target=ws.positive_class,
                        nsamples=GRADIENT_SHAP_SAMPLES)
    return AttentionView(attn, cls, ig, shp, compare_attention_attribution(cls, ig), bundle.metadata)


def attention_view(row) -> AttentionView:
    """Attention, Integrated Gradients and SHAP of the tabular transformer for one row."""
    return _attention_row(check_row(row))


def has_attention_model() -> bool:
    return workspace().transformer_paths is not None


def random_row(seed: int) -> int:
    """A row chosen with ``numpy.random.default_rng(seed)`` (reproducible per click count)."""
    return int(np.random.default_rng(seed).integers(len(workspace().X)))


def row_status(row) -> str:
    """"held-out · true malignant · P(malignant) 0.998" for the navbar."""
    ws = workspace()
    r = check_row(row)
    p = float(ws.model.predict_proba(ws.X.iloc[[r]])[0, 1])
    split = "held-out" if r in set(ws.test_idx.tolist()) else "train"
    return f"{split} · true {ws.classes[ws.y[r]]} · P({ws.positive_class}) {p:.3f}"
