"""The table of tabular methods: how each is made from the workspace, computed, stored and checked.

One :class:`TabularMethod` per method, in the order of :data:`explainers.methods.TABULAR` (what each method *is*
and how a store keeps it, readable by ``store/``). ``python -m app build`` (its per-row arrays, its documents, its
settings, what recomputing needs), ``python -m app check`` (its lines), the Descriptive page's global panel
and the report loop over :data:`TABLE` instead of naming SHAP and LIME (in the spirit of LIT's
``default_interpreters`` and alibi's per-method defaults). Adding a method: its facts, its entry here, its
explainer (``explainers/``) and its view (``app/views/methods.py``); ``docs/architecture.md`` says how.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

import explainers as ex
from explainers.methods import MethodFacts, by_name
from explainers.metrics import RankAgreement, compare_ranks, top_k
from explainers.numbers import gap_text, plain

from . import _core, dependence, importance, row_view, tabular


@dataclass(frozen=True)
class TabularMethod:
    """One tabular method as the services make, compute and store it.

    Parameters
    ----------
    facts : MethodFacts
        What it is and how a store keeps it (:mod:`explainers.methods`).
    explainer : callable
        The explainer made from the installed workspace, once per workspace (a :func:`~._core.lazy` getter).
    why_not : callable
        Its ``is_compatible`` for the installed workspace: why it does not apply (one line), or None.
    settings : callable
        Every setting its results depend on (the store's manifest ``explainers``, part of a build's chunk key).
    row : callable, optional
        A local method's result of one row (``row(r)``): the store's, else computed live and added to it.
    live_rows : callable, optional
        A local method's results of many rows (positions), each what the live path gives alone (a build's chunk;
        the rows' model predictions are checked once around the chunk by the caller).
    result : callable, optional
        A global method's result: the store's, else computed live once per workspace.
    reproduce : callable, optional
        What recomputing its stored values needs: (the manifest's ``reproduce`` entry, arrays by file name).
    lines : callable, optional
        ``lines(row)``: what ``python -m app check`` prints of it (one or more lines), through the pages' calls.
    """

    facts: MethodFacts
    explainer: Callable[[], object]
    why_not: Callable[[], str | None]
    settings: Callable[[], dict]
    row: Callable[[int], ex.Explanation] | None = None
    live_rows: Callable[[list[int]], list] | None = None
    result: Callable[[], object] | None = None
    reproduce: Callable[[], tuple[dict, dict]] | None = None
    lines: Callable[[int], tuple[str, ...]] | None = None

    @property
    def name(self) -> str:
        return self.facts.name

    @property
    def title(self) -> str:
        return self.facts.title


def _always() -> str | None:
    return None  # the Descriptive page's methods apply to every tabular model Candor loads


# ---- SHAP -----------------------------------------------------------------------------------------------------
def _shap_settings() -> dict:
    return {"background_size": tabular.BACKGROUND_SIZE, "seed": 0, "max_orderings": tabular.LOCAL_MAX_ORDERINGS,
            "global_rel_tol": tabular.GLOBAL_REL_TOL, "global_rows": tabular.GLOBAL_ROWS,
            # None: no clock budget (a build lifts it); never Infinity, which is not JSON
            "agnostic_budget_s": tabular.AGNOSTIC_BUDGET_S if np.isfinite(tabular.AGNOSTIC_BUDGET_S) else None}


def _shap_rows(rows: list[int]) -> list:
    """SHAP of ``rows``, each what :func:`tabular._live_shap_row` gives: an exact backend's chunk in one call
    (:func:`store.batch.shap_rows`), the global view's values of its rows wrapped as the live path wraps them."""
    from store.batch import shap_rows

    ws, shap = _core.workspace(), tabular._shap()
    X = ws.X.iloc[rows]
    at = {label: r for label, r in zip(X.index, rows)}
    known = {}
    if _core.is_ready("shap_all") and shap.exact:  # the live path wraps the global view's values of its rows
        g, where = tabular._shap_all()
        se = g.standard_error
        known = {label: (g.values[where[r]], g.base_value, None if se is None else se[where[r]])
                 for label, r in at.items() if r in where}
    return shap_rows(shap, X, known, alone=lambda label: tabular._live_shap_row(at[label]))


def _shap_reproduce() -> tuple[dict, dict]:
    from store.provenance import shap_reproduction

    return shap_reproduction(_core.workspace().X, tabular._shap())


def top_features(names, values, labels=(), k: int = 3) -> str:
    """``"name=label +0.12, ..."``: the ``k`` largest ``|values|`` (``labels``: the row's values as shown, or
    empty), as ``python -m app check`` prints them."""
    order = np.argsort(-np.abs(values), kind="stable")[:k]
    return ", ".join(f"{names[j]}={labels[j] if labels else ''} {plain(values[j], signed=True, trim=True)}"
                     .replace("= ", " ") for j in order)


def _shap_lines(row: int) -> tuple[str, ...]:
    e = row_view.local_view(row).shap  # the Descriptive page's row view
    p = e.params
    return (f"cost    SHAP {p['algorithm']}: {plain(p['model_rows_per_row'], trim=True)} model rows per explained "
            f"row, ~{plain(p['memory_mb'], trim=True)} MiB; background {p['background_size']:,} of "
            f"{p['background_rows_given']:,} rows",
            f"shap    row {row}, {e.target!r} ({p['units']}): prediction {plain(e.prediction, 4, trim=True)}, "
            f"additivity gap {gap_text(e.additivity_gap)}; "
            f"top: {top_features(e.feature_names, e.values, p.get('feature_labels'))}")


# ---- LIME -----------------------------------------------------------------------------------------------------
def _lime_settings() -> dict:
    return {"num_samples": tabular.LIME_SAMPLES, "seed": 0,  # the stopping rule's overrides, if any
            "limits": {k: str(v) for k, v in sorted(getattr(tabular, "LIME_LIMITS", {}).items())}}


def _lime_rows(rows: list[int]) -> list:
    X = _core.workspace().X.iloc[rows]
    return [tabular._lime().explain(X.iloc[[i]]) for i in range(len(rows))]  # model-bound: see store.batch


def _lime_reproduce() -> tuple[dict, dict]:
    from store.provenance import lime_reproduction

    return lime_reproduction(_core.workspace().train_idx, tabular._lime())


def _lime_lines(row: int) -> tuple[str, ...]:
    local = row_view.local_view(row)
    lime = local.lime
    return (f"lime    row {row}: local R2 {lime.fidelity.value:.3f} in-sample, {lime.params['heldout_r2']:.3f} "
            f"held-out; top: {top_features(lime.feature_names, lime.values, ())}; agreement with SHAP: Spearman "
            f"{local.agreement.spearman:.2f}",)


TABLE: tuple[TabularMethod, ...] = (
    TabularMethod(by_name("shap"), tabular._shap, _always, _shap_settings, row=tabular.shap_row,
                  live_rows=_shap_rows, reproduce=_shap_reproduce, lines=_shap_lines),
    TabularMethod(by_name("lime"), tabular._lime, _always, _lime_settings, row=tabular.lime_row,
                  live_rows=_lime_rows, reproduce=_lime_reproduce, lines=_lime_lines),
    TabularMethod(by_name("permutation_importance"), importance._explainer, importance.why_not, importance.settings,
                  result=importance.permutation_importance, lines=importance.lines),
    TabularMethod(by_name("partial_dependence"), dependence._explainer, dependence.why_not, dependence.settings,
                  result=dependence.partial_dependences, lines=dependence.lines),
)
"""Every tabular method, in the order of :data:`explainers.methods.TABULAR` (a test checks they agree)."""


def method(name: str) -> TabularMethod:
    """The entry of method ``name``.

    Raises
    ------
    KeyError
        If there is none.
    """
    for m in TABLE:
        if m.name == name:
            return m
    raise KeyError(f"no tabular method {name!r}; known: {', '.join(m.name for m in TABLE)}")


def stored_per_row() -> tuple[TabularMethod, ...]:
    """The methods a store keeps per row (:data:`store.format.METHODS`), in order."""
    return tuple(m for m in TABLE if m.facts.stored == "rows")


def global_methods() -> tuple[TabularMethod, ...]:
    """The methods with one result for the model (stored as documents)."""
    return tuple(m for m in TABLE if m.facts.scope == "global")


def importance_methods() -> tuple[TabularMethod, ...]:
    """The global methods that rank the features (a result with ``importances``), shown beside mean |SHAP|; partial
    dependence has its own page."""
    return tuple(m for m in global_methods() if "importances" in getattr(m.facts.result, "__dataclass_fields__", {}))


@dataclass(frozen=True)
class GlobalMethodView:
    """A global method's result beside global SHAP (the Descriptive page's global panel, the report).

    ``result`` is None when the method does not apply (``why_not`` says why). ``shap_importance`` is mean |SHAP|
    per feature (the global view's); ``agreement`` compares the two rankings (:func:`explainers.metrics.compare_ranks`,
    the method's negative importances counted as 0: a feature whose shuffling helps the score is not important);
    ``disagree`` names the features in one top-k but not the other (SHAP's first).
    """

    name: str
    title: str
    result: object | None
    why_not: str | None
    shap_importance: np.ndarray | None = None
    agreement: RankAgreement | None = None
    disagree: tuple[str, ...] = ()


def global_method_views() -> tuple[GlobalMethodView, ...]:
    """Every global method of :data:`TABLE` that ranks the features (:func:`importance_methods`), each beside mean |SHAP|.

    Raises
    ------
    CandorError
        As the methods' and global SHAP's services raise (a method that does not apply is not an error).
    """
    views = []
    for m in importance_methods():
        why = m.why_not()
        if why is not None:
            views.append(GlobalMethodView(m.name, m.title, None, why))
            continue
        r, shap = m.result(), np.asarray(tabular.global_importance().importance, dtype=float)
        ours = np.maximum(np.asarray(r.importances, dtype=float), 0.0)
        agreement = compare_ranks(shap, ours, methods=("mean |SHAP|", m.title))
        a, b = set(top_k(shap, agreement.k).tolist()), set(top_k(ours, agreement.k).tolist())
        disagree = tuple(r.feature_names[j] for j in [*sorted(a - b), *sorted(b - a)])
        views.append(GlobalMethodView(m.name, m.title, r, None, shap, agreement, disagree))
    return tuple(views)
