"""Counterfactuals of the shown row and the story test of its persuasive story (the Persuasive page's job).

One call, :func:`story_view`, runs both searches of :func:`explainers.counterfactuals.story_test` on the row: the
features the page's story names (its items at the page's k, rounding and grouping) against any feature, holding the
features the user marks immutable; the second search's counterfactuals are the page's list. The searches run on the
encoded rows the pages explain, changing whole raw columns (a codec's categories by level; a one-hot block of a
pre-encoded table as one column), within the training rows' ranges and levels.
"""
from __future__ import annotations

from dataclasses import dataclass

import explainers.persuasive as xp
from explainers.counterfactuals import CounterfactualExplainer, story_test
from explainers.types import StoryTest
from workspace.errors import CandorError

from ._core import lazy, workspace
from .persuasive import persuasive_view
from .tabular import predict_positive, row_key
from .whatif import EditedRow, row_frame

BUDGET = 4000
"""Model evaluations (rows scored) each of the story test's two searches may spend: 8,000 in all. On Adult's
HistGradientBoosting Pipeline the two searches ended by themselves after 806-2,088 (5 rows), 0.6-2.8 CPU s a row (one
row 5.6 s at load average 12 on 2 cores), 1-2 s wall when the machine was quieter (``python -m benchmarks.tablestakes``)."""
SHOWN = 5
"""Counterfactuals listed."""
K_CHEAPEST = 10
"""How many of the unrestricted search's cheapest counterfactuals the story test's share counts."""
THRESHOLDS = {"probability": 0.5, "margin": 0.0, "label": 0.5}
"""The decision a counterfactual flips, by the kind of explained output: positive at or above it."""


@dataclass(frozen=True)
class StoryView:
    """The story test of the row's story, with the settings it ran under.

    ``test.any_feature.shown`` is the page's list of counterfactuals.
    """

    row: int | EditedRow
    test: StoryTest
    settings: dict


def why_not() -> str | None:
    """Why counterfactuals do not apply to the installed model (one line), or None."""
    ws = workspace()
    if not ws.is_classifier or ws.output_kind not in THRESHOLDS:
        return "counterfactuals flip a classifier's decision; this model is a regressor"
    return None


def _one_hot_blocks() -> dict[str, list[str]]:
    """One-hot blocks of a pre-encoded table: 0/1 columns sharing a prefix, at most one 1 in every training row."""
    ws = workspace()
    X = ws.X.iloc[ws.train_idx]
    cats = {ws.X.columns[j] for j in ws.adapter.codec.categorical}
    blocks = xp.one_hot_groups(X[[c for c in X.columns if c not in cats]])
    return {g: cols for g, cols in blocks.items() if (X[cols].to_numpy(dtype=float).sum(axis=1) <= 1).all()}


def _make_explainer() -> CounterfactualExplainer:
    if (why := why_not()) is not None:
        raise CandorError(why)
    ws = workspace()
    codec = ws.adapter.codec
    return CounterfactualExplainer(
        predict_positive, ws.X.iloc[ws.train_idx].to_numpy(dtype=float), [str(c) for c in ws.X.columns],
        threshold=THRESHOLDS[ws.output_kind], categorical=codec.categorical, groups=_one_hot_blocks(),
        labels=lambda j, v: codec.columns[j].text(v), output_name=ws.output_label, n=SHOWN, budget=BUDGET)


explainer = lazy("counterfactual_explainer", _make_explainer)


def features() -> tuple[str, ...]:
    """The features a counterfactual changes (one-hot blocks as one): the immutable picker's choices."""
    return explainer().names


def _story_features(view, names: tuple[str, ...]) -> tuple[str, ...]:
    """The search's features the story's items name (a one-hot column's block stands for it)."""
    parent = view.simplification.parent
    block_of = {c: g for g, cols in _one_hot_blocks().items() for c in cols}
    out = []
    for item in view.simplification.items:
        for j in item.members:
            name = str(parent.feature_names[j])
            out.append(block_of.get(name, name))
    return tuple(n for n in dict.fromkeys(out) if n in names)


def story_view(row, k: int, rounding: str = "exact", grouping: bool = False, sensitive=(), immutable=(),
               progress=None) -> StoryView:
    """The story test of the row's persuasive story at the page's controls, holding ``immutable`` fixed.

    Parameters
    ----------
    row : int-like, EditedRow or dict
        A table row, or an edited one (:func:`~.tabular.row_key`): the searches start from the row as shown.
    k, rounding, grouping, sensitive
        The Persuasive page's controls (:func:`app.services.persuasive_view`): they decide the story.
    immutable : sequence of str
        Features held fixed (of :func:`features`).
    progress : callable, optional
        ``progress(done, total)`` in model evaluations over both searches.

    Raises
    ------
    CandorError
        On a bad row or control, an unknown feature, or a model that is not a classifier.
    """
    r = row_key(row)
    cf = explainer()
    fixed = tuple(sorted(str(f) for f in (immutable or ())))
    unknown = [f for f in fixed if f not in cf.names]
    if unknown:
        raise CandorError(f"immutable features must be features of the table; unknown: {', '.join(unknown)}")
    view = persuasive_view(r, k, rounding, grouping, sensitive)
    story = _story_features(view, cf.names)
    x = row_frame(r).iloc[0].to_numpy(dtype=float)
    test = story_test(cf, x, story, immutable=fixed, k=K_CHEAPEST, progress=progress)
    return StoryView(r, test, {**view.settings, "immutable": fixed, "budget": cf.budget, "k_cheapest": K_CHEAPEST})


def verdict(test: StoryTest) -> str:
    """One sentence: can the story's features alone flip the decision, and do the cheapest flips need hidden ones."""
    only, free = test.story_only, test.any_feature
    if not free.found:
        return (f"No counterfactual found within {free.budget:,} model evaluations, with any feature free: the story "
                "test says nothing for this row.")
    alone = (f"The story's features alone flip the decision (cheapest distance {only.cheapest:.2f}, against "
             f"{free.cheapest:.2f} with any feature)" if only.found else
             f"The story's features alone did not flip the decision: none found in {only.n_evaluated:,} model "
             "evaluations" + (", the whole budget" if only.exhausted else
                              f", where the search ended within its budget of {only.budget:,}"))
    share = (f"{test.n_need_hidden} of the {test.k} cheapest counterfactuals found change a feature the story hides"
             + (f" ({', '.join(test.hidden_needed[:3])})" if test.hidden_needed else ""))
    return f"{alone}; {share}."

