"""Permutation feature importance of the installed model on its held-out rows (a global method of the table).

Scored on the explained output against the true target, as the model card scores it
(:func:`~.tabular.model_summary`): ROC AUC for probabilities and margins with both classes among the held-out rows,
R² for a regressor, accuracy at 0.5 for labels (or probabilities of a one-class held-out split). Computed once per
workspace in the warm-up, after global SHAP, or read from a store (``permutation_importance.json``).
"""
from __future__ import annotations

import numpy as np

import explainers as ex
from explainers.numbers import plain
from workspace.errors import CandorError

from ._core import built_store, lazy, workspace
from .tabular import guarded

N_REPEATS = 10
"""Shuffles per feature (scikit-learn's default ``n_repeats=5`` doubled: the standard errors shown are over them)."""
SEED = 0
MAX_MODEL_CELLS = 2_000_000_000
"""Most cells permutation importance may send the model (:meth:`~explainers.PermutationImportanceExplainer.model_cells`:
the width squared x shuffles x held-out rows). Adult one-hot (108 columns, 8,141 held-out rows) needs 0.95 billion; a
10,000-column table with 50 held-out rows 50 billion (minutes of ``check``): past the budget the method says so in
one line, naming the width, instead of being computed."""


def scoring() -> str | None:
    """How the installed model's explained output is scored: ``"roc_auc"``, ``"r2"``, ``"accuracy"``, or None."""
    ws = workspace()
    if not ws.is_classifier:
        return "r2"
    if ws.output_kind in ("probability", "margin") and len(np.unique(ws.y[ws.test_idx])) == 2:
        return "roc_auc"
    return "accuracy" if ws.output_kind in ("probability", "label") else None


def why_not() -> str | None:
    """Why permutation importance does not apply to the installed model (one line), or None."""
    s = scoring()
    if s is None:
        return ("permutation importance scores the explained output: a margin needs both classes among the "
                "held-out rows (ROC AUC)")
    ws = workspace()
    why = ex.PermutationImportanceExplainer.is_compatible(ws.y[ws.test_idx], s)
    cells = _explainer().model_cells(len(ws.test_idx), ws.X.shape[1])
    if why is None and cells > MAX_MODEL_CELLS:
        why = (f"permutation importance is not computed at {ws.X.shape[1]:,} columns: {N_REPEATS} shuffles of "
               f"{len(ws.test_idx):,} held-out rows per column, each {ws.X.shape[1]:,} wide, would send the model "
               f"{cells:,} cells (its budget: {MAX_MODEL_CELLS:,})")
    return why


def settings() -> dict:
    """What the result depends on (the store's manifest ``explainers``)."""
    return {"n_repeats": N_REPEATS, "seed": SEED, "rows": "held-out"}


def _make():
    ws = workspace()
    return ex.PermutationImportanceExplainer(ws.output, scoring=scoring(), n_repeats=N_REPEATS, seed=SEED,
                                             target=ws.positive_class)


_explainer = lazy("permutation_explainer", _make)


def _compute() -> ex.PermutationImportance:
    st = built_store()
    found = st.result("permutation_importance") if st is not None else None
    if found is not None:  # built by python -m app build: no recomputation
        return found
    why = why_not()
    if why is not None:
        raise CandorError(why)
    ws = workspace()
    X, y = ws.X.iloc[ws.test_idx], ws.y[ws.test_idx]
    return guarded("permutation importance", lambda: _explainer().explain(X, y, rows="held-out rows"))


permutation_importance = lazy("permutation_importance", _compute, warm=True)
"""The installed model's :class:`~explainers.PermutationImportance` on its held-out rows (the store's, if it has it)."""


def lines(_row: int) -> tuple[str, ...]:
    """What ``python -m app check`` prints: the score, the largest importances with their standard errors."""
    r = permutation_importance()
    order = np.argsort(-r.importances, kind="stable")[:3]
    top = ", ".join(f"{r.feature_names[j]} {plain(r.importances[j], signed=True, trim=True)} ± "
                    f"{plain(r.standard_error[j], trim=True)}" for j in order)
    return (f"permimp {r.n_rows:,} held-out rows, {r.scoring} {plain(r.baseline_score, 4, trim=True)}, "
            f"{r.n_repeats} shuffles per feature: largest drops {top}",)
