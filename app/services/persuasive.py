"""Persuasive page services: the operator chain on a row's SHAP explanation, its cost, and the tradeoffs.

One call, :func:`persuasive_view`, returns everything the page shows for one choice
of operators: the persuasive view (group → top-k → round → verified sentences),
the guardrail notes, what was dropped, Gilpin labels, and the row's
fidelity-vs-complexity curve over every k with the same operators (the
measures it plots only, batched in one model call per row).
:func:`persuasive_global` averages the top-k curve over held-out rows
(computed once per workspace, warmed in the background).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, replace

import numpy as np

import explainers.persuasive as xp
from explainers.numbers import plain

from workspace.errors import CandorError
from .applicable import require
from ._core import built_store, lazy, row_cache, workspace
from .tabular import background, predict_positive, row_key, shap_row
from .whatif import EditedRow, row_frame

ROUNDING = {"exact": None, "0.01": 0.01, "0.05": 0.05, "0.1": 0.1, "qualitative": "qualitative",
            "direction": "direction"}
SENSITIVE_SHARE = 0.05
TOP_GUARD = 1
GLOBAL_ROWS = 40
GLOBAL_MIN_ROWS = 10
GLOBAL_BUDGET_S = 20.0
"""The global curve averages the first :data:`GLOBAL_ROWS` held-out rows, or, when their SHAP takes longer,
as many as are explained within ``GLOBAL_BUDGET_S`` seconds (at least ``GLOBAL_MIN_ROWS``), stated with the
seconds a row took: model-agnostic SHAP of Adult's HistGradientBoosting Pipeline takes about 5 CPU seconds a
row, so 40 rows held the warm-up for minutes on a loaded machine (issue 14)."""
MAX_K = 40
"""Largest k the Persuasive page offers and measures (the k slider stops there on wide tables)."""
NEIGHBORHOOD = 500
CURVE_MEASURES = ("mass_retained", "spearman", "sufficiency", "comprehensiveness", "r2_restricted")
"""What the row's tradeoff plots for every k (``app.views.figures_persuasive.ROW_MEASURES``); the rest only for the choice."""
GLOBAL_MEASURES = ("sufficiency", "comprehensiveness", "spearman", "mass_retained")
"""What the page's global view averages over held-out rows, each with its standard error."""


@dataclass(frozen=True)
class PersuasiveView:
    """What the Persuasive page shows for one row and one choice of operators.

    ``curve`` holds, for every k, the same operators' :data:`CURVE_MEASURES` and complexity
    (:func:`explainers.persuasive.tradeoff_curve`, one batched model call);
    ``simplification`` the current choice with every measure and its verified sentences.
    """

    simplification: xp.Simplification
    curve: tuple[xp.CurvePoint, ...]
    guardrail: tuple[xp.GuardrailNote, ...]
    dropped: tuple[xp.DroppedFeature, ...]
    descriptive_label: xp.GilpinLabel
    persuasive_label: xp.GilpinLabel
    sensitive: tuple[str, ...]
    settings: dict


@dataclass(frozen=True)
class GlobalCurve:
    """Top-k measures averaged over held-out rows: arrays of shape (n_features + 1,) indexed by k.

    ``std_error`` holds each measure's standard error over the rows (same keys as the fields).
    """

    k: np.ndarray
    sufficiency: np.ndarray
    comprehensiveness: np.ndarray
    spearman: np.ndarray
    mass_retained: np.ndarray
    n_rows: int
    source: str
    std_error: dict


def _train() -> np.ndarray:
    ws = workspace()
    return ws.X.iloc[ws.train_idx].to_numpy(dtype=float)


def _categorical() -> dict[int, tuple[str, ...]]:
    """Level names by code of the table's categorical columns (none for the bundled sample)."""
    codec = workspace().adapter.codec
    return {j: tuple(codec.columns[j].label(float(i)) for i in range(len(codec.columns[j].levels)))
            for j in codec.categorical}


def _correlated_groups() -> dict[str, list[str]]:
    try:
        return xp.correlated_groups(workspace().X.iloc[workspace().train_idx])
    except ValueError as err:  # too many columns correlated together to cluster: one line on the page
        raise CandorError(f"grouping correlated features: {err}") from None


def _tree_expectations():
    from explainers.tree_shap import HybridOutputs

    view = workspace().model
    return HybridOutputs.of(view.adapter, view.index) if hasattr(view, "adapter") else None


_hybrid = lazy("persuasive_hybrid_outputs", _tree_expectations)


class _ExplainedOutput:
    """:func:`~.tabular.predict_positive`, and for a gradient boosting model the same expectations over the
    background computed in its trees without building the hybrid rows (``expected_outputs``, read by
    :func:`explainers.persuasive.masked_outputs`; :class:`explainers.tree_shap.HybridOutputs`): equal bit for bit,
    about 4x faster on Adult's pipeline (50 sets: 23 -> 5 ms)."""

    def __call__(self, a):
        return predict_positive(a)

    def expected_outputs(self, x, keep_sets, background_rows):
        hybrid = _hybrid()
        return None if hybrid is None else hybrid(x, keep_sets, background_rows)


explained_output = _ExplainedOutput()


_groups = lazy("persuasive_groups", _correlated_groups)
_medians = lazy("persuasive_medians", lambda: xp.reference_values(_train(), _categorical()))


@row_cache(maxsize=64)
def _row_context(row: int | EditedRow) -> xp.Context:
    ws = workspace()
    return xp.make_context(explained_output, _train(), background().to_numpy(dtype=float),
                           row_frame(row).iloc[0].to_numpy(dtype=float), (ws.classes[0], ws.classes[1]),
                           num_samples=NEIGHBORHOOD, seed=0, categories=_categorical(), reference=_medians(),
                           codec=ws.adapter.codec)


def _context(row: int | EditedRow, full: bool) -> xp.Context:
    """The row's context; ``full=False`` skips AOPC and the curves (the per-k sweep)."""
    ctx = _row_context(row)
    return ctx if full else replace(ctx, full=False)


def _parse(rounding) -> object:
    key = "exact" if rounding in (None, "") else str(rounding)
    if key not in ROUNDING:
        raise CandorError(f"rounding must be one of {', '.join(ROUNDING)}, got {rounding!r}")
    return ROUNDING[key]


@row_cache(maxsize=128)
def _row_curve(row: int | EditedRow, rounding: str, grouping: bool, sensitive: tuple[str, ...]):
    groups = _groups() if grouping else None
    return xp.tradeoff_curve(shap_row(row), _context(row, False), rounding=_parse(rounding), groups=groups,
                             sensitive=sensitive, measures=CURVE_MEASURES, max_k=MAX_K)


@row_cache(maxsize=256)
def _choice(row: int | EditedRow, k: int, rounding: str, grouping: bool, sensitive: tuple[str, ...]):
    groups = _groups() if grouping else None
    return xp.simplify(shap_row(row), _context(row, True), k=k, rounding=_parse(rounding), groups=groups,
                       sensitive=sensitive)


def persuasive_view(row, k: int, rounding: str = "exact", grouping: bool = False, sensitive=()) -> PersuasiveView:
    """The persuasive view of the row's SHAP explanation for one choice of operators.

    Parameters
    ----------
    row : int-like, EditedRow or dict
        A table row, or an edited one (:func:`~.tabular.row_key`).
    k : int
        Items shown; clipped to ``[0, number of items]`` (items = features, or groups when grouping).
    rounding : {"exact", "0.01", "0.05", "0.1", "qualitative", "direction"}
    grouping : bool
        Merge features with Spearman ``|ρ| >= 0.8`` on the training rows (O3).
    sensitive : sequence of str
        Features the guardrail watches.

    Raises
    ------
    CandorError
        On a bad row, rounding or sensitive feature name.
    """
    r = row_key(row)
    names = set(workspace().X.columns)
    sens = tuple(sorted(str(f) for f in (sensitive or ())))
    unknown = [f for f in sens if f not in names]
    if unknown:
        raise CandorError(f"sensitive features must be columns of the data; unknown: {', '.join(unknown)}")
    key = "exact" if rounding in (None, "") else str(rounding)
    _parse(key)
    curve = _row_curve(r, key, bool(grouping), sens)
    k = int(min(max(int(k), 0), len(curve) - 1))
    s = _choice(r, k, key, bool(grouping), sens)
    return PersuasiveView(s, curve, xp.guardrail(s, sens, max_share=SENSITIVE_SHARE, top_guard=TOP_GUARD),
                          xp.what_was_dropped(s, sens), xp.gilpin_label(s.parent), xp.gilpin_label(s), sens,
                          {"k": k, "rounding": key, "grouping": bool(grouping), "max_share": SENSITIVE_SHARE,
                           "top_guard": TOP_GUARD})


def global_curve_to_json(c: GlobalCurve) -> dict:
    """``c`` as a JSON object (what a store holds in ``persuasive_global.json``)."""
    arrays = {f: np.asarray(getattr(c, f)).tolist() for f in ("k", *GLOBAL_MEASURES)}
    return {**arrays, "n_rows": int(c.n_rows), "source": c.source,
            "std_error": {k: np.asarray(v).tolist() for k, v in c.std_error.items()}}


def global_curve_from_json(d: dict) -> GlobalCurve:
    """The :class:`GlobalCurve` of :func:`global_curve_to_json`."""
    return GlobalCurve(np.asarray(d["k"]), *(np.asarray(d[m], dtype=float) for m in
                                             ("sufficiency", "comprehensiveness", "spearman", "mass_retained")),
                       int(d["n_rows"]), d["source"], {k: np.asarray(v, dtype=float) for k, v in d["std_error"].items()})


def _make_global() -> GlobalCurve:
    require("persuasive")  # not warmed (minutes of model calls) for nothing
    stored = built_store() and built_store().json("persuasive_global.json")
    if stored:
        return global_curve_from_json(stored)
    ws = workspace()
    candidates = [int(r) for r in ws.test_idx[:GLOBAL_ROWS]]
    bg = background().to_numpy(dtype=float)
    explanations, contexts, started = [], [], time.perf_counter()
    for r in candidates:  # row by row: stop once the budget is spent (and the minimum reached)
        explanations.append(shap_row(r))
        contexts.append(xp.make_context(explained_output, _train(), bg, ws.X.iloc[r].to_numpy(dtype=float),
                                        (ws.classes[0], ws.classes[1]), num_samples=0, full=False,
                                        categories=_categorical(), reference=_medians()))
        spent = time.perf_counter() - started
        if len(explanations) >= GLOBAL_MIN_ROWS and spent > GLOBAL_BUDGET_S:
            break
    why = "" if len(explanations) == len(candidates) else (
        f" (SHAP took {plain(spent / len(explanations), 2, trim=True)} s a row here: the rows explained within a "
        f"{GLOBAL_BUDGET_S:.0f} s budget, at least {GLOBAL_MIN_ROWS}, of the first {len(candidates)})")
    avg = xp.average_curve(explanations, contexts, measures=GLOBAL_MEASURES, max_k=MAX_K)
    m, se = avg.measures, avg.std_error
    return GlobalCurve(avg.k, m["sufficiency"], m["comprehensiveness"], m["spearman"], m["mass_retained"],
                       avg.n_rows, f"top-k of SHAP (the page's chain, exact values), averaged over the first "
                       f"{avg.n_rows} held-out rows{why}; dropped features take the {len(bg)} background rows' values",
                       {k: se[k] for k in GLOBAL_MEASURES})


_global = lazy("persuasive_global", _make_global, warm=True)


def persuasive_max_k() -> int:
    """The largest k the page offers (:data:`MAX_K`)."""
    return MAX_K


def persuasive_global() -> GlobalCurve:
    """Top-k sufficiency, comprehensiveness, Spearman ρ and mass retained, averaged over held-out rows."""
    return _global()


STORY_K = 3
"""The story the Persuasive page opens with: its k slider starts at 3 (fewer on a narrower table)."""


def opening_k() -> int:
    """The k the Persuasive page's slider starts at: :data:`STORY_K`, fewer on a narrower table."""
    return min(STORY_K, len(workspace().X.columns), MAX_K)


def story_point(row: int, k: int = STORY_K, measures=("sufficiency", "mass_retained")) -> xp.CurvePoint:
    """The page's opening story of one row (top-k of SHAP, exact values, no grouping) with ``measures``.

    One batched model call, no neighborhood (as the global curve's rows): the Cohorts page averages these
    over a cohort's held-out rows. ``k`` is clipped to the row's items.
    """
    ws = workspace()
    ctx = xp.make_context(explained_output, _train(), background().to_numpy(dtype=float),
                          ws.X.iloc[row].to_numpy(dtype=float), (ws.classes[0], ws.classes[1]), num_samples=0,
                          full=False, categories=_categorical(), reference=_medians())
    curve = xp.tradeoff_curve(shap_row(row), ctx, measures=measures, max_k=k)
    return curve[-1]
