"""The per-row part of ``python -m app build``: what a chunk computes (:class:`RowTask`), in this process or on a Dask
worker, and the build's other work run beside it while Dask workers compute the rows (:func:`beside_rows`).

A Dask worker is a fresh process: :func:`worker_workspace` loads the build's selection there once, and the build's
stopping rules are set there as in the build's own process (:func:`app.cli.build._without_clock_budgets`).
"""
from __future__ import annotations

import concurrent.futures
import dataclasses
import importlib

import numpy as np
from threadpoolctl import threadpool_limits

from store.codec import split_explanation


def _budget_modules():
    return tuple(importlib.import_module(f"app.services.{name}") for name in ("tabular", "persuasive", "cohorts"))


def build_budgets() -> dict:
    """The stopping rules the services read that a build sets (:func:`app.cli.build._without_clock_budgets`), as they
    stand in this process: LIME's limits and each budget in seconds, by name. Picklable: a Dask worker is given them
    (:func:`worker_workspace`)."""
    tabular, persuasive, cohorts = _budget_modules()
    return {"lime_limits": dict(tabular.LIME_LIMITS), "agnostic_budget_s": tabular.AGNOSTIC_BUDGET_S,
            "global_budget_s": persuasive.GLOBAL_BUDGET_S, "story_budget_s": cohorts.STORY_BUDGET_S}


def set_budgets(budgets: dict) -> None:
    """Set the stopping rules :func:`build_budgets` read, in this process."""
    tabular, persuasive, cohorts = _budget_modules()
    tabular.LIME_LIMITS.clear()
    tabular.LIME_LIMITS.update(budgets["lime_limits"])
    tabular.AGNOSTIC_BUDGET_S = budgets["agnostic_budget_s"]
    persuasive.GLOBAL_BUDGET_S = budgets["global_budget_s"]
    cohorts.STORY_BUDGET_S = budgets["story_budget_s"]


def worker_workspace(selection: dict, budgets: dict) -> None:
    """Make this process ready to compute the build's rows: the build's stopping rules (``budgets``, from
    :func:`build_budgets`) and, in a process with no workspace installed (a Dask worker), ``selection``'s workspace
    loaded and installed."""
    from .. import services

    set_budgets(budgets)  # a Dask worker's own modules: the build's stopping rules
    if services.state().workspace is None:  # a fresh process (a Dask worker): load what the build explains
        from ..services.selection import Selection

        services.init(Selection(**selection).load(), warm=False)


@dataclasses.dataclass
class RowTask:
    """``task(start, stop)`` for :func:`store.engine.run_chunks`: every per-row stored method (the table of
    methods: SHAP and LIME) of ``rows[start:stop]``.

    Picklable (a Dask worker gets it): a process with no workspace installed loads ``selection``'s first.

    Returns
    -------
    dict of str to ndarray
        ``<method>_values``, ``<method>_se``, ``<method>_feature_values`` (n, d); ``<method>_base``,
        ``<method>_prediction``, ``prediction`` (n,); ``<method>_meta`` (n,) JSON text (unicode array).
    """

    rows: np.ndarray
    selection: dict
    budgets: dict

    def __call__(self, start: int, stop: int) -> dict[str, np.ndarray]:
        from ..services import methods, tabular

        worker_workspace(self.selection, self.budgets)
        rows = [int(r) for r in self.rows[start:stop]]
        stored = methods.stored_per_row()
        with threadpool_limits(1):  # see build(): OpenMP and BLAS pools spinning on a shared machine
            what = f"{' and '.join(m.title for m in stored)} for rows {rows[0]}-{rows[-1]}"
            found, prediction = tabular.guarded(what, _explain_rows, rows)
        out: dict[str, list] = {"prediction": list(prediction)}
        for method in stored:
            for e in found[method.name]:
                numbers, rest = split_explanation(e)
                for k, v in numbers.items():
                    out.setdefault(f"{method.name}_{k}", []).append(v)
                out.setdefault(f"{method.name}_meta", []).append(rest)
        return {k: np.asarray(v) for k, v in out.items()}


def _explain_rows(rows: list[int]) -> tuple[dict[str, list], np.ndarray]:
    """Each per-row stored method's results of ``rows`` (positions), what its live row function gives
    (``TabularMethod.live_rows``: SHAP's chunk in batches, :mod:`store.batch`), by method name; and the rows'
    explained output. The rows' model predictions are checked once around the whole chunk (``tabular.guarded``).
    """
    from .. import services
    from ..services import methods

    found = {m.name: m.live_rows(rows) for m in methods.stored_per_row()}
    ws = services.workspace()
    return found, np.asarray(ws.output(ws.X.iloc[rows]), dtype=float)


def beside_rows(rows, before, after, *, parallel: bool) -> tuple:
    """``(before(), rows(), after())``: with ``parallel``, ``before`` then ``after`` run in a thread of this process
    while ``rows`` waits for Dask workers; else one after another, in that order.

    While the workers compute the rows this process only waits for their chunks and writes them, so the build's
    work that needs no row (the global SHAP view, the global methods, the Persuasive curve, the surrogates: 60 s of
    the Adult build's 623 s with one core idle) is done meanwhile. The thread computes through this process's
    services, as before (waiting for chunks touches none of them), with one OpenMP and one BLAS thread. If ``rows``
    raises, the thread is waited for (it writes whole files only), then the error propagates.
    """
    if not parallel:
        first = before()
        return first, rows(), after()

    def beside():
        with threadpool_limits(1):  # OpenMP's limit is per thread: set it in this one too
            return before(), after()

    with concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="candor-build") as pool:
        done = pool.submit(beside)
        computed = rows()
        first, last = done.result()
    return first, computed, last
