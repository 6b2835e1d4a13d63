"""Counterfactuals of one row (changes that flip the model's decision) and the story test built on them."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._json import _jsonable


@dataclass(frozen=True)
class Change:
    """One feature's change in a counterfactual.

    Parameters
    ----------
    feature : str
        The feature (a raw column, or a one-hot block as one column).
    before, after : str
        Display text of the row's value and of the counterfactual's.
    cost : float
        Its share of the distance: ``|after - before| / scale`` for a number, 1 for a category or a one-hot block.
    """

    feature: str
    before: str
    after: str
    cost: float


@dataclass(frozen=True)
class Counterfactual:
    """A row that differs from the explained one in a few features and that the model decides otherwise.

    Parameters
    ----------
    values : ndarray of shape (n_columns,)
        The counterfactual row, encoded as the explained row (what the model was called on).
    changes : tuple of Change
        Every feature changed, in the table's order.
    distance : float
        Sum of the changes' costs (MAD-scaled L1 for numbers, 0/1 for categories: Wachter et al. 2017, Mothilal et
        al. 2020).
    output : float
        The model's output for ``values``.
    """

    values: np.ndarray
    changes: tuple[Change, ...]
    distance: float
    output: float

    @property
    def changed(self) -> tuple[str, ...]:
        """Names of the features changed."""
        return tuple(c.feature for c in self.changes)

    @property
    def n_changed(self) -> int:
        """The number of features changed (a one-hot block counts once)."""
        return len(self.changes)


@dataclass(frozen=True)
class Counterfactuals:
    """A few diverse, minimal counterfactuals of one row, found within a stated budget of model evaluations.

    Parameters
    ----------
    feature_names : tuple of str
        The features the search could change or hold (one-hot blocks as one name).
    output : float
        The model's output for the explained row.
    decision, wanted : str
        The row's decision (e.g. ``"P(yes) >= 0.5"``) and the one every counterfactual reaches.
    shown : tuple of Counterfactual
        Up to ``n`` counterfactuals, cheapest first, each changing a different set of features.
    pool : tuple of Counterfactual
        Every distinct counterfactual found and minimised, cheapest first (``shown`` is drawn from it).
    immutable : tuple of str
        Features held fixed.
    allowed : tuple of str or None
        The only features the search could change (None: any not immutable).
    budget, n_evaluated, n_calls : int
        The most rows the model could score, the rows it scored, and the calls (batches) that scored them.
    exhausted : bool
        True when the search stopped because the budget was spent.
    distance : str
        How the distance is computed, one line.
    source : str
        How the search ran, one line.
    """

    feature_names: tuple[str, ...]
    output: float
    decision: str
    wanted: str
    shown: tuple[Counterfactual, ...]
    pool: tuple[Counterfactual, ...]
    immutable: tuple[str, ...]
    allowed: tuple[str, ...] | None
    budget: int
    n_evaluated: int
    n_calls: int
    exhausted: bool
    distance: str
    source: str

    @property
    def found(self) -> bool:
        """True when at least one counterfactual was found."""
        return bool(self.pool)

    @property
    def cheapest(self) -> float | None:
        """The smallest distance found (None when none was found)."""
        return self.pool[0].distance if self.pool else None

    def to_dict(self) -> dict:
        return _jsonable(self)


@dataclass(frozen=True)
class StoryTest:
    """Whether the features a persuasive story names can flip the row's decision on their own (Candor's story test).

    Parameters
    ----------
    story : tuple of str
        The features the story names.
    story_only : Counterfactuals
        The search that may change only the story's features (less the immutable ones).
    any_feature : Counterfactuals
        The search that may change any feature not immutable, its pool joined with ``story_only``'s (each of those is
        one it could have found), so its cheapest is never dearer than the story's.
    k : int
        How many of ``any_feature``'s cheapest counterfactuals the share looks at (fewer when fewer were found).
    n_need_hidden : int
        How many of those change at least one feature the story hides.
    share, share_low, share_high : float
        ``n_need_hidden / k`` and its 95 % Wilson interval (NaN when nothing was found).
    hidden_needed : tuple of str
        The hidden features those counterfactuals change, most often first.
    """

    story: tuple[str, ...]
    story_only: Counterfactuals
    any_feature: Counterfactuals
    k: int
    n_need_hidden: int
    share: float
    share_low: float
    share_high: float
    hidden_needed: tuple[str, ...]

    @property
    def story_flips(self) -> bool:
        """True when changing only the story's features flips the decision (within the budget)."""
        return self.story_only.found

    @property
    def distance_ratio(self) -> float | None:
        """The story's cheapest distance over the unrestricted cheapest (≥ 1; None unless both searches found one)."""
        a, b = self.story_only.cheapest, self.any_feature.cheapest
        return None if a is None or b is None or b <= 0 else a / b

    def to_dict(self) -> dict:
        return _jsonable(self)
