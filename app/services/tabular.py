"""Model & data and Descriptive services: summary, table pages, SHAP and LIME per row."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from sklearn.metrics import accuracy_score, roc_auc_score

import explainers as ex
from explainers.metrics import RankAgreement

from ..errors import CandorError
from ._core import lazy, row_cache, workspace

BACKGROUND_SIZE = 100
LIME_SAMPLES = 1000


def background() -> pd.DataFrame:
    """The seeded 100-row background sample of the training rows (what dropped features are set to)."""
    ws = workspace()
    train = ws.X.iloc[ws.train_idx]
    return train.sample(n=min(BACKGROUND_SIZE, len(train)), random_state=0)


def predict_positive(a: np.ndarray) -> np.ndarray:
    """P(positive class) for an array of rows, shape (n,)."""
    ws = workspace()
    return ws.model.predict_proba(pd.DataFrame(a, columns=ws.X.columns))[:, 1]


def _make_shap():
    ws = workspace()
    return ex.ShapExplainer(ws.model, background=ws.X.iloc[ws.train_idx], target_index=1,
                            target_name=ws.positive_class, background_size=BACKGROUND_SIZE, seed=0)


def _make_lime():
    ws = workspace()
    return ex.LimeExplainer(lambda a: ws.model.predict_proba(pd.DataFrame(a, columns=ws.X.columns)),
                            training_data=ws.X.iloc[ws.train_idx], class_names=ws.classes,
                            num_samples=LIME_SAMPLES, seed=0)


_shap = lazy("shap", _make_shap)
_shap_all = lazy("shap_all", lambda: _shap().explain_many(workspace().X), warm=True)
_lime = lazy("lime", _make_lime)
model_labels = lazy("labels", lambda: workspace().model.predict(workspace().X), warm=True)


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
    return _shap_all()


@row_cache(maxsize=2048)
def _shap_row(row: int) -> ex.Explanation:
    g = global_importance()
    return _shap().from_row(workspace().X.iloc[[row]], g.values[row], g.base_value)


def shap_row(row) -> ex.Explanation:
    """SHAP explanation of one row (read from the all-rows computation)."""
    return _shap_row(check_row(row))


@row_cache(maxsize=512)
def _lime_row(row: int) -> ex.Explanation:
    return _lime().explain(workspace().X.iloc[[row]])


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
