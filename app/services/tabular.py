"""Model & data and Descriptive services: summary, table pages, SHAP and LIME per row.

The explainers work on the workspace's encoded raw table (category codes, NaN kept; the bundled sample's
numbers as they are) through its adapter, the data table shows the values as the user wrote them, and every
computation is guarded by a fingerprint of the model's predictions taken before and after it (:func:`guarded`).
"""
from __future__ import annotations

import dataclasses
import hashlib
import time

import numpy as np
import pandas as pd

import explainers as ex
from explainers.numbers import plain

from workspace.errors import CandorError, first_line
from ._core import built_store, is_ready, lazy, row_cache, state, workspace
from .whatif import EditedRow, edited_row, edited_status, row_frame

BACKGROUND_SIZE = 100
LIME_SAMPLES = 1000
LIME_LIMITS: dict = {}
"""Overrides of LIME's stopping rule (empty: the explainer's time budget; see :func:`reproducible_lime`)."""


def reproducible_lime(max_samples: int = 8000) -> None:
    """Make LIME stop by its tolerance or a sample count only, never by time (``python -m app build``).

    Live, LIME doubles its neighbourhood until its standard error is small or a time budget ends, so the
    result depends on the machine's load: two builds of one store differed by up to 0.05. A build is not
    waited on row by row, so it trades the time budget for a sample cap, and the same rows give the same
    store. Call before :func:`~app.services.init`.
    """
    LIME_LIMITS.update(time_budget_s=float("inf"), max_samples=int(max_samples))
GLOBAL_ROWS = {"tree": 5000, "linear": 20000}
"""Rows the all-rows SHAP computation covers per backend; others (permutation, kernel): see below."""
AGNOSTIC_BUDGET_S = 20.0
AGNOSTIC_ROWS = (10, 200)
"""Model-agnostic SHAP covers as many rows as fit ``AGNOSTIC_BUDGET_S`` seconds (from one timed row),
at least 10 and at most 200: a slow model (an SVC, HistGradientBoosting) gets a smaller global
sample, said on the page, instead of minutes of warm-up."""
PROBE_ROWS = 20
LOCAL_MAX_ORDERINGS = 16
"""Permutation SHAP of one row: antithetic orderings until every standard error is at most 0.25 % of |f(x) − base|
(the default tolerance), at most this many; an unconverged row says so, with its errors. At 16 (docs/methods.md) the
largest error on Adult's k-NN and MLP is below the former estimator's at 64 on 11 of 12 rows, for half the CPU."""
GLOBAL_REL_TOL = 0.05
"""The global view's looser tolerance (largest standard error at most 5 % of |f(x) − base|), stated on the page:
mean |SHAP| averages many rows, and start-up stays within ``AGNOSTIC_BUDGET_S``."""


def fingerprint(ws=None) -> str:
    """SHA-256 of the model's explained output on the first rows (changes if the model is refitted or mutated), through
    the whole model (a one-hot Pipeline's preprocessing too, :func:`explainers.model_adapter.whole_pipeline`)."""
    from explainers.model_adapter import whole_pipeline

    ws = ws or workspace()
    with whole_pipeline():
        out = np.round(np.asarray(ws.output(ws.X.iloc[:PROBE_ROWS]), dtype=float), 12)
    return hashlib.sha256(np.ascontiguousarray(out).tobytes()).hexdigest()


def guarded(job: str, fn, *args):
    """Run ``fn(*args)`` and check that the model's predictions are the same before and after.

    Raises
    ------
    CandorError
        If they differ (the explanation changed the user's model), or for any
        failure of ``fn``, named with ``job``.
    """
    st = state()
    ws = workspace()  # the same model before and after, even if another request switches class meanwhile
    last_ws, last = st.last_fingerprint
    before = last if last_ws is ws else fingerprint(ws)  # the previous guard's "after", if of this workspace
    try:
        result = fn(*args)
    except CandorError:
        raise
    except Exception as exc:  # the page shows one line and keeps running
        raise CandorError(f"{job} failed: {first_line(exc)}") from exc
    if workspace() is not ws:
        raise CandorError(f"the model or class was switched while computing {job}; reload the page")
    after = fingerprint(ws)
    if after != before:
        raise CandorError(f"the model's predictions changed while computing {job}; the model was mutated "
                          "(it is never re-fitted by Candor: please report this)")
    st.last_fingerprint = (ws, after)  # the next job's "before" (ServiceState.last_fingerprint)
    return result


def background() -> pd.DataFrame:
    """The seeded 100-row background sample of the training rows (what dropped features are set to)."""
    ws = workspace()
    train = ws.X.iloc[ws.train_idx]
    return train.sample(n=min(BACKGROUND_SIZE, len(train)), random_state=0)


def predict_positive(a: np.ndarray) -> np.ndarray:
    """The explained output (P(positive class) for probabilistic classifiers) of an array of rows, shape (n,)."""
    ws = workspace()
    return ws.output(pd.DataFrame(a, columns=ws.X.columns))


def _make_shap(space: str = "raw"):
    ws = workspace()
    return ex.ShapExplainer(ws.adapter, background=ws.X, background_rows=ws.train_idx, target_index=ws.model.index,
                            target_name=ws.positive_class, background_size=BACKGROUND_SIZE, seed=0, space=space,
                            max_orderings=LOCAL_MAX_ORDERINGS)


def _make_lime():
    ws = workspace()
    codec = ws.adapter.codec
    cats = {j: [codec.columns[j].label(i) for i in range(len(codec.columns[j].levels))] for j in codec.categorical}
    missing = tuple(np.flatnonzero(np.isnan(ws.X.to_numpy(dtype=float)).any(axis=0)))
    if ws.output_kind == "probability":
        return ex.LimeExplainer(lambda a: ws.model.predict_proba(pd.DataFrame(a, columns=ws.X.columns, copy=False)),
                                training_data=ws.X, training_rows=ws.train_idx, class_names=ws.classes,
                                num_samples=LIME_SAMPLES, seed=0, categorical_names=cats, missing_columns=missing,
                                **LIME_LIMITS)
    view = ws.model  # margins, labels or a regressor's output: LIME in regression mode on that number
    return ex.LimeExplainer(lambda a: view.adapter.outputs(pd.DataFrame(a, columns=ws.X.columns, copy=False)),
                            training_data=ws.X, training_rows=ws.train_idx, class_names=view.adapter.output_names,
                            target_index=view.index, mode="regression", output_space="raw", units=view.units(),
                            num_samples=LIME_SAMPLES, seed=0, categorical_names=cats, missing_columns=missing,
                            **LIME_LIMITS)


def _sample_order() -> np.ndarray:
    """Every row in the order a global sample takes them: held-out rows first, each part seeded-shuffled."""
    ws = workspace()
    rng = np.random.default_rng(0)
    return np.concatenate([rng.permutation(ws.test_idx), rng.permutation(ws.train_idx)])


def _global_rows() -> np.ndarray:
    """Rows a tree or linear backend covers in the global view: all of them, or a seeded sample."""
    ws = workspace()
    cap = GLOBAL_ROWS[_shap().algorithm]
    if len(ws.X) <= cap:
        return np.arange(len(ws.X))
    return np.sort(_sample_order()[:cap])


def _agnostic_rows() -> tuple[np.ndarray, str, ex.GlobalImportance]:
    """Model-agnostic SHAP: explain the first sampled row, time it, and take as many rows as fit the budget.

    Returns the rows (sorted), why a sample (for the page) and the first row's attributions (reused).
    """
    ws, _ = workspace(), _shap()  # the explainer is built before the clock starts
    order = _sample_order()
    t0 = time.perf_counter()
    first = guarded("SHAP for the global view", _explain_global, ws.X.iloc[order[:1]])
    seconds = time.perf_counter() - t0
    lo, hi = AGNOSTIC_ROWS
    cap = int(np.clip(AGNOSTIC_BUDGET_S / max(seconds, 1e-9), lo, hi))
    if len(ws.X) <= cap:
        return np.arange(len(ws.X)), "", first
    why = (f" (model-agnostic SHAP took {plain(seconds, 2, trim=True)} s for one row here: the sample fits a "
           f"{AGNOSTIC_BUDGET_S:.0f} s budget; other rows are explained when chosen)")
    return np.sort(order[:cap]), why, first


def _explain_global(X: pd.DataFrame) -> ex.GlobalImportance:
    """SHAP of many rows for the global view (sampled backends at :data:`GLOBAL_REL_TOL`)."""
    return _shap().explain_many(X, rel_tol=None if _shap().exact else GLOBAL_REL_TOL)


def _compute_all():
    stored = built_store() and built_store().global_importance()
    if stored:  # built by python -m app build: no recomputation
        return stored
    ws = workspace()
    if _shap().algorithm in GLOBAL_ROWS:
        rows, why = _global_rows(), ""
        g = guarded("SHAP for every row", _shap().explain_many, ws.X.iloc[rows])
    else:
        rows, why, first = _agnostic_rows()
        r0 = int(_sample_order()[0])
        rest = rows[rows != r0]
        g = guarded("SHAP for every row", _explain_global, ws.X.iloc[rest])
        at = int(np.searchsorted(rest, r0))  # put the timed row back in its place
        g = dataclasses.replace(g, values=np.insert(g.values, at, first.values[0], axis=0),
                                feature_values=np.insert(g.feature_values, at, first.feature_values[0], axis=0),
                                standard_error=np.insert(g.standard_error, at, first.standard_error[0], axis=0))
    if not _shap().exact:
        g = dataclasses.replace(g, source=f"{g.source}; global view to a looser tolerance: every standard error at "
                                          f"most {GLOBAL_REL_TOL * 100:.0f} % of |f(x) − base| (or the floor), "
                                          f"at most {LOCAL_MAX_ORDERINGS} orderings per row")
    if len(rows) < len(ws.X):
        g = dataclasses.replace(g, source=f"{g.source}; global view over a seeded sample of {len(rows):,} of "
                                          f"{len(ws.X):,} rows{why}")
    return g, {int(r): i for i, r in enumerate(rows)}


_shap = lazy("shap", lambda: guarded("the SHAP explainer", _make_shap))
_shap_players = lazy("shap_raw_players", lambda: guarded("the raw-column Shapley explainer", _make_shap, "raw_shapley"))
_shap_all = lazy("shap_all", _compute_all, warm=True)
_lime = lazy("lime", _make_lime)

model_labels = lazy("labels", lambda: workspace().model.predict(workspace().X), warm="first")
model_outputs = lazy("outputs", lambda: workspace().output(workspace().X), warm="first")
"""The explained output of every row (shape (n_rows,)), computed once in the warm-up: a row's status line then
costs no model call (a RandomForest(200) spends about 30 ms on one row). Warmed first, with the labels and
the summary: the landing page (model card, table, row status) reads them."""
_summary = lazy("model_summary", lambda: _model_summary(), warm="first")  # after the outputs, which it reads
_held_out = lazy("held_out_rows", lambda: frozenset(int(r) for r in workspace().test_idx))


def check_row(row) -> int:
    """Validate a row id from the UI; raises :class:`CandorError` naming the valid range."""
    import re
    import reprlib

    n = len(workspace().X)
    if isinstance(row, str) and re.fullmatch(r"\s*[0-9]{1,15}\s*", row):
        r = int(row)
    elif isinstance(row, (int, np.integer)) and not isinstance(row, bool):
        r = int(row)
    elif isinstance(row, (float, np.floating)) and float(row).is_integer():
        r = int(row)
    else:  # never int() on anything else: it takes '1_0', other scripts' digits and truncates 3.7
        raise CandorError(f"row must be a whole number between 0 and {n - 1}, got {reprlib.repr(row)}")
    if not 0 <= r < n:
        raise CandorError(f"row {r} does not exist; rows are numbered 0 to {n - 1}")
    return r


def row_key(row) -> int | EditedRow:
    """A table row's number, or an edited row (``{"row": N, "edits": {...}}``, :mod:`.whatif`), checked."""
    if isinstance(row, EditedRow):
        return row
    if isinstance(row, dict):
        return edited_row(check_row(row.get("row")), row.get("edits"))
    return check_row(row)


def row_count() -> int:
    """Number of rows of the explained table."""
    return len(workspace().X)


def default_row() -> int:
    """First held-out row."""
    return int(workspace().test_idx[0])


def _true_label(r: int) -> str:
    """The row's true class as the table has it (a multiclass model's real class, not "not c")."""
    ws = workspace()
    if ws.task == "multiclass" and ws.pair is not None:
        return ws.adapter.class_names[int(ws.pair.y[r])]
    return ws.classes[int(ws.y[r])]


def _outputs_of(rows) -> np.ndarray:
    """The explained output of ``rows`` (positions), from the warm-up's :data:`model_outputs` once it has them."""
    ws = workspace()
    return model_outputs()[np.asarray(rows)] if is_ready("outputs") else ws.output(ws.X.iloc[np.asarray(rows)])


def row_status(row) -> str:
    """"held-out · true malignant · P(malignant) 0.998" for the navbar (a regressor: true and predicted values)."""
    ws, r = workspace(), row_key(row)
    if isinstance(r, EditedRow):
        return edited_status(r)
    v = float(_outputs_of([r])[0])
    split = "held-out" if r in _held_out() else "train"
    if not ws.is_classifier:
        return f"{split} · true {ws.target} {plain(ws.y[r], 4, trim=True)} · predicted {plain(v, 4, trim=True)}"
    return f"{split} · true {_true_label(r)} · {ws.output_label} {v:.3f}"


def model_summary() -> ex.ModelSummary:
    """Task, classes and held-out metrics of the loaded model, computed once per workspace (the warm-up
    computes them after the model's outputs, so the landing page does not: 56 ms on Adult's 8,141 held-out rows).

    Probabilities: accuracy (threshold 0.5) and ROC AUC; margins: accuracy of ``predict`` and ROC
    AUC of the margin; labels only: accuracy; a regressor: R², MAE and RMSE (scikit-learn).
    """
    return _summary()


def _model_summary() -> ex.ModelSummary:
    from sklearn.metrics import accuracy_score, mean_absolute_error, mean_squared_error, r2_score  # at first use

    ws = workspace()
    yt = ws.y[ws.test_idx]
    out = _outputs_of(ws.test_idx)
    if not ws.is_classifier:
        metrics = {"r2": float(r2_score(yt, out)), "mae": float(mean_absolute_error(yt, out)),
                   "rmse": float(np.sqrt(mean_squared_error(yt, out)))}
        task = f"regression ({ws.output_label})"
    else:
        pred = (out >= 0.5).astype(int) if ws.output_kind == "probability" else ws.model.predict(ws.X.iloc[ws.test_idx])
        metrics = {"accuracy": float(accuracy_score(yt, pred))}
        if len(np.unique(yt)) == 2 and ws.output_kind in ("probability", "margin"):
            from explainers.permutation_importance import roc_auc  # the Performance page's AUC too (one home)

            metrics["roc_auc"] = roc_auc(yt, out)
        task = "binary classification"
        if ws.task == "multiclass":
            task = f"{len(ws.adapter.class_names)}-class classification ({ws.positive_class} vs rest)"
        if ws.output_kind != "probability":
            task += f", {ws.output_kind}s"
    return ex.ModelSummary(task=task, classes=ws.classes, target=ws.target, metrics=metrics,
                           n_train=len(ws.train_idx), n_test=len(ws.test_idx),
                           feature_names=tuple(map(str, ws.X.columns)),
                           source=ws.source + "".join(f"; {n}" for n in ws.notes))


def global_importance() -> ex.GlobalImportance:
    """SHAP attributions of every row, or of a seeded sample of big tables (mean |SHAP| is the importance)."""
    return _shap_all()[0]


def _stored_or_live(method: str, row: int, compute) -> ex.Explanation:
    """The store's explanation of ``row`` if it has one; else ``compute(row)``, then added to the store."""
    st = built_store() if not isinstance(row, EditedRow) else None  # an edited row: always live, never stored
    found = st.explanation(method, row) if st is not None else None
    if found is not None:
        return found
    e = compute(row)
    if st is not None:
        st.add(method, row, e)
    return e


def _live_shap_row(row: int | EditedRow) -> ex.Explanation:
    x = row_frame(row)
    if is_ready("shap_all") and _shap().exact and not isinstance(row, EditedRow):
        g, where = _shap_all()
        if row in where:
            se = None if g.standard_error is None else g.standard_error[where[row]]  # > 0 on repaired tree rows
            return _shap().from_row(x, g.values[where[row]], g.base_value, standard_error=se)
    # never wait for the global view (seconds to minutes) to show one row; exact backends give the same
    # values either way; sampled ones are computed alone, to the row's own (tighter) tolerance, seeded per row
    return guarded(f"SHAP for row {row}", _shap().explain, x)


@row_cache(maxsize=2048)
def _shap_row(row: int) -> ex.Explanation:
    return _stored_or_live("shap", row, _live_shap_row)


def shap_row(row) -> ex.Explanation:
    """SHAP explanation of one row (exact backends: read from the all-rows computation once it is done)."""
    return _shap_row(row_key(row))


def raw_players_offered() -> bool:
    """True when the default SHAP of a raw column is the sum of its one-hot children's SHAP values (a tree
    Pipeline), so that the Descriptive page offers the Shapley value with raw columns as players."""
    if built_store() is not None:  # what the build's explainer said: no explainer built to serve a store
        return bool(built_store().info("shap_sums_children"))
    return _shap().sums_children


@row_cache(maxsize=256)
def _shap_players_row(row: int | EditedRow) -> ex.Explanation:
    return guarded(f"raw-column Shapley values for row {row}", _shap_players().explain, row_frame(row))


def shap_players_row(row) -> ex.Explanation:
    """Shapley values of one row with raw columns as players (exact enumeration, or converged sampling).

    Raises
    ------
    CandorError
        If the model's default SHAP already has raw columns as players (nothing else to compute).
    """
    r = row_key(row)
    if not raw_players_offered():
        raise CandorError("this model's SHAP values already have the raw columns as players")
    return _shap_players_row(r)


def _live_lime_row(row: int | EditedRow) -> ex.Explanation:
    return guarded(f"LIME for row {row}", _lime().explain, row_frame(row))


@row_cache(maxsize=512)
def _lime_row(row: int) -> ex.Explanation:
    return _stored_or_live("lime", row, _live_lime_row)


def lime_row(row) -> ex.Explanation:
    """LIME explanation of one row (interactive profile, seeded)."""
    return _lime_row(row_key(row))


def display_codec():
    """The workspace's :class:`~explainers._codec.TabularCodec` (levels, dates and formats for display; the sample's
    numbers are shown as numbers)."""
    return workspace().adapter.codec

