"""Counterfactuals of one row and the story test (docs/methods.md, "Counterfactuals and the story test").

:class:`CounterfactualExplainer` finds a few diverse, minimal changes of whole features (raw columns, one-hot blocks
as one) that flip the model's decision, within the training rows' ranges and levels, holding immutable features
fixed, with a stated budget of model evaluations (Wachter, Mittelstadt & Russell 2017; Mothilal, Sharma & Tan 2020
for the distance and diversity). DiCE was not used: ``pip install --dry-run dice-ml`` (0.12) would add XGBoost,
LightGBM and a 351 MB NVIDIA NCCL wheel to the pinned environment.

:func:`story_test` is Candor's own: it runs the search twice, once free to change only the features a persuasive
story names and once free to change any feature, and says whether the story's features alone can flip the decision,
at what distance, and what share of the cheapest counterfactuals need a feature the story hides.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import replace
from typing import Callable, Mapping, Sequence

import numpy as np

from ..intervals import wilson
from ..numbers import plain
from ..types._counterfactual import Change, Counterfactual, Counterfactuals, StoryTest
from ._search import Budget, Problem, minimise, search
from ._space import Feature, search_space

__all__ = ["CounterfactualExplainer", "story_test", "search_space", "Feature", "DISTANCE"]

DISTANCE = ("L1 over the features changed: a number's change divided by its median absolute deviation over the "
            "training rows (Wachter et al. 2017), a category's or one-hot block's change counts 1 (Mothilal et al. 2020)")


class CounterfactualExplainer:
    """Diverse, minimal counterfactuals of a row, found by a deterministic beam search under a budget.

    Parameters
    ----------
    predict : callable
        Encoded rows, ndarray of shape (n, n_columns), to the explained output, shape (n,).
    training : ndarray of shape (n_rows, n_columns)
        Encoded training rows: every value a counterfactual takes is within their range or among their levels.
    feature_names : sequence of str, length n_columns
    threshold : float, default=0.5
        The decision: positive when the output is at least ``threshold``.
    categorical : sequence of int, default=()
        Positions of category columns (their values are level codes).
    groups : mapping of str to sequence of str, optional
        One-hot blocks, each changed as one feature.
    labels : callable, optional
        ``labels(column position, encoded value) -> str``, the display of a value (a codec's); numbers otherwise.
    output_name : str, default="output"
        How the decision is written, e.g. ``"P(>50K)"``.
    n : int, default=5
        Counterfactuals shown.
    budget : int, default=4000
        The most rows the model scores in one search.
    n_values, beam, per_feature, max_changes, pool, batch : int
        Candidate values of a number (12), states grown per step (16), values tried per feature when growing (3),
        most features changed (4), finds to keep minimising (24), most rows in one model call (1000).
    """

    def __init__(self, predict: Callable, training, feature_names: Sequence[str], *, threshold: float = 0.5,
                 categorical: Sequence[int] = (), groups: Mapping[str, Sequence[str]] | None = None,
                 labels: Callable | None = None, output_name: str = "output", n: int = 5, budget: int = 4000,
                 n_values: int = 12, beam: int = 16, per_feature: int = 3, max_changes: int = 4, pool: int = 24,
                 batch: int = 1000) -> None:
        self.predict, self.threshold, self.labels, self.output_name = predict, float(threshold), labels, output_name
        self.feature_names = tuple(str(f) for f in feature_names)
        self.features = search_space(training, self.feature_names, categorical=categorical, groups=groups,
                                     n_values=n_values)
        self.n, self.budget, self.beam, self.per_feature = int(n), int(budget), int(beam), int(per_feature)
        self.max_changes, self.pool, self.batch = int(max_changes), int(pool), int(batch)

    @property
    def names(self) -> tuple[str, ...]:
        """The features the search changes (one-hot blocks by their name)."""
        return tuple(f.name for f in self.features)

    def explain(self, x, *, immutable: Sequence[str] = (), allowed: Sequence[str] | None = None,
                progress: Callable | None = None) -> Counterfactuals:
        """Counterfactuals of the encoded row ``x`` (shape (n_columns,)).

        Parameters
        ----------
        immutable : sequence of str
            Features held fixed (names of :attr:`names`).
        allowed : sequence of str, optional
            The only features that may change (less the immutable ones); None: every feature.
        progress : callable, optional
            ``progress(rows scored, budget)`` after each model call.

        Raises
        ------
        ValueError
            On a feature name that is not one of :attr:`names`.
        """
        x = np.asarray(x, dtype=float).reshape(-1).copy()
        names = self.names
        unknown = [f for f in [*immutable, *(allowed or ())] if str(f) not in names]
        if unknown:
            raise ValueError(f"not features of this table: {', '.join(map(str, unknown))}")
        fixed = {str(f) for f in immutable}
        may = set(names) if allowed is None else {str(f) for f in allowed}
        movable = tuple(i for i, f in enumerate(self.features) if f.name in may and f.name not in fixed)
        budget = Budget(self.predict, self.budget, self.batch, progress)
        output = float(budget.score(x[None])[0])
        p = Problem(x, self.features, movable, self.threshold, output >= self.threshold)
        finds = search(p, budget, pool=self.pool, beam=self.beam, per_feature=self.per_feature,
                       max_changes=self.max_changes)
        finds = sorted(finds, key=lambda t: (p.cost(t[0]), len(t[0]), t[0]))[:self.pool]
        pool = self._distinct(p, minimise(p, budget, finds))
        t = plain(self.threshold, trim=True)
        above, below = f"{self.output_name} ≥ {t}", f"{self.output_name} < {t}"
        return Counterfactuals(
            names, output, above if p.positive else below, below if p.positive else above, pool[:self.n], tuple(pool),
            tuple(sorted(fixed)), None if allowed is None else tuple(sorted(may)), self.budget, budget.n_rows,
            budget.n_calls, budget.exhausted, DISTANCE,
            f"beam search over whole features ({len(movable)} of {len(names)} may change, up to {self.max_changes} at "
            f"once), each find minimised; {budget.n_rows:,} of {self.budget:,} model evaluations in {budget.n_calls} "
            f"calls{', budget spent' if budget.exhausted else ''}; deterministic")

    def _distinct(self, p: Problem, finds) -> list[Counterfactual]:
        """The cheapest find of each set of changed features, cheapest first."""
        best: dict[frozenset, tuple] = {}
        for st, s in finds:
            key = frozenset(f for f, _ in st)
            c = p.cost(st)
            if key not in best or (c, st) < (best[key][0], best[key][1]):
                best[key] = (c, st, s)
        ordered = sorted(best.values(), key=lambda t: (t[0], len(t[1]), t[1]))
        return [self._counterfactual(p, st, s, c) for c, st, s in ordered]

    def _counterfactual(self, p: Problem, state, output: float, cost: float) -> Counterfactual:
        changes = []
        for f, v in state:
            feat = self.features[f]
            here = p.x[list(feat.columns)]
            changes.append(Change(feat.name, self._text(feat, here), self._text(feat, np.array(v)),
                                  float(feat.cost(here, np.array(v))[0])))
        return Counterfactual(p.row(state), tuple(changes), cost, float(output))

    def _text(self, feat: Feature, v: np.ndarray) -> str:
        if feat.kind == "one-hot":
            on = [self.feature_names[j] for j, a in zip(feat.columns, v) if a == 1]
            return ", ".join(n[len(feat.name) + 1:] if n.startswith(feat.name) else n for n in on) or "none"
        if self.labels is not None:
            return self.labels(feat.columns[0], float(v[0]))
        return plain(float(v[0]), 4, trim=True)


def _with_finds(free: Counterfactuals, only: Counterfactuals, n: int) -> Counterfactuals:
    """The unrestricted search's counterfactuals with the story-only search's added (each is one the unrestricted
    search could have found: its beam can miss what the narrower one finds), one per set of changed features."""
    best: dict[frozenset, Counterfactual] = {}
    for c in (*free.pool, *only.pool):
        key = frozenset(c.changed)
        if key not in best or c.distance < best[key].distance:
            best[key] = c
    pool = tuple(sorted(best.values(), key=lambda c: (c.distance, c.n_changed, c.changed)))
    added = sum(any(c is o for o in only.pool) for c in pool)
    return replace(free, pool=pool, shown=pool[:n],
                   source=free.source + (f"; with {added} found by the story-only search" if added else ""))


def story_test(explainer: CounterfactualExplainer, x, story: Sequence[str], *, immutable: Sequence[str] = (),
               k: int = 10, progress: Callable | None = None) -> StoryTest:
    """Can the features a story names flip the row's decision alone, and do the cheapest flips need hidden ones?

    Parameters
    ----------
    explainer : CounterfactualExplainer
    x : ndarray of shape (n_columns,)
        The encoded row.
    story : sequence of str
        The features the story names (of ``explainer.names``).
    immutable : sequence of str
        Features both searches hold fixed.
    k : int, default=10
        How many of the unrestricted search's cheapest counterfactuals (one per set of changed features) the share
        counts.
    progress : callable, optional
        ``progress(done, total)`` over both searches (total: twice the budget).

    Returns
    -------
    StoryTest
    """
    story = tuple(dict.fromkeys(str(f) for f in story))
    b = explainer.budget
    first = (lambda d, t: progress(d, 2 * b)) if progress else None
    second = (lambda d, t: progress(b + d, 2 * b)) if progress else None
    only = explainer.explain(x, immutable=immutable, allowed=story, progress=first)
    free = _with_finds(explainer.explain(x, immutable=immutable, progress=second), only, explainer.n)
    cheapest = free.pool[:int(k)]
    need = [cf for cf in cheapest if set(cf.changed) - set(story)]
    share, low, high = wilson(len(need), len(cheapest))
    counts = Counter(f for cf in need for f in cf.changed if f not in story)
    hidden = tuple(f for f, _ in sorted(counts.items(), key=lambda t: (-t[1], explainer.names.index(t[0]))))
    return StoryTest(story, only, free, len(cheapest), len(need), share, low, high, hidden)
