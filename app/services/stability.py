"""Descriptive page, rank stability card: rerun one row's SHAP over background resamples and LIME over seeds.

The page's SHAP draws its 100-row background with seed 0; here it is redrawn with seeds 0..R-1
(for permutation SHAP the orderings change with the seed too). The page's LIME (mean of seeded
fits) is rerun with seeds whose neighborhoods do not overlap, at the neighborhood size the shown
explanation reached. :func:`explainers.stability.rerun_stability` compares the reruns' ranks.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Callable

import explainers as ex
from explainers.stability import RankStability, rerun_stability

from workspace.errors import CandorError

from . import tabular
from ._core import row_cache, workspace
from .whatif import EditedRow, row_frame

__all__ = ["RERUNS", "StabilityView", "stability_view"]

RERUNS = 10
"""Reruns per method (45 pairs)."""


@dataclass(frozen=True)
class StabilityView:
    """Rank stability of one row's SHAP and LIME; ``row`` (a table row or an edited one) and ``k`` as asked."""

    row: int | EditedRow
    k: int
    shap: RankStability
    lime: RankStability
    shap_source: str
    lime_source: str


def _shap_for_seed(x):
    ws = workspace()

    def explain(seed: int) -> ex.Explanation:
        return ex.ShapExplainer(ws.adapter, background=ws.X, background_rows=ws.train_idx, target_index=ws.model.index,
                                target_name=ws.positive_class, background_size=tabular.BACKGROUND_SIZE,
                                seed=seed).explain(x)
    return explain


def _compute(row: int | EditedRow, k: int, progress=None) -> StabilityView:
    ws = workspace()
    x = row_frame(row)
    n = int(tabular.lime_row(row).params["num_samples"])  # the size the shown LIME reached
    lime = tabular._lime()
    step = (lambda offset: (lambda done, _total: progress(offset + done, 2 * RERUNS))) if progress else \
        (lambda offset: None)
    n_bg = min(tabular.BACKGROUND_SIZE, len(ws.train_idx))
    shap_varied = (f"the {n_bg}-row background redrawn from the training rows with seeds 0–{RERUNS - 1}"
                   if len(ws.train_idx) > n_bg else
                   f"seeds 0–{RERUNS - 1}; the background is all {n_bg} training rows, so only the seed varies")
    shap = tabular.guarded(f"SHAP stability for row {row}", partial(
        rerun_stability, _shap_for_seed(x), range(RERUNS), k, method="shap", varied=shap_varied, progress=step(0)))
    seeds = lime.independent_seeds(RERUNS)
    lime_varied = (f"{lime.repeats} fits of {n} samples per rerun, seeds {seeds[0]}, {seeds[1]}, … {seeds[-1]}, "
                   "no neighborhood shared")
    lime_st = tabular.guarded(f"LIME stability for row {row}", partial(
        rerun_stability, lambda s: lime.explain(x, seed=s, num_samples=n), seeds, k, method="lime",
        varied=lime_varied, progress=step(RERUNS)))
    return StabilityView(row, lime_st.k, shap, lime_st, tabular._shap().source, lime.source)


_cached = row_cache(maxsize=64)(_compute)


def stability_view(row, k: int = 5, progress: Callable[[int, int], None] | None = None) -> StabilityView:
    """Rank stability of the chosen row's SHAP (over background resamples) and LIME (over seeds).

    Parameters
    ----------
    row : int-like, EditedRow or dict
        A table row, or an edited one (``{"row", "edits"}``), checked by :func:`app.services.tabular.row_key`: the
        reruns explain the row as shown.
    k : int, default=5
        The top-k size the Descriptive page uses.
    progress : callable, optional
        ``progress(done, total)`` after each of the ``2 * RERUNS`` reruns (the job's progress bar).

    Raises
    ------
    CandorError
        For a bad row or a failure of either explainer (one line).
    """
    r = tabular.row_key(row)
    try:
        k = int(k)
    except (TypeError, ValueError):
        raise CandorError(f"k must be a whole number of features, got {k!r}") from None
    if k < 1:
        raise CandorError(f"k must be at least 1, got {k}")
    return _cached(r, k) if progress is None else _compute(r, k, progress)
