"""The persuasive layer's result: a :class:`Simplification` of a descriptive explanation, with what it cost."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._attribution import Explanation
from ._json import _jsonable


@dataclass(frozen=True)
class Simplification:
    """A persuasive view of a descriptive explanation, with what it cost: the one simplification type of
    the attribution operators (:mod:`explainers.persuasive`).

    The persuasive layer never stands alone (Herman 2017, arXiv 1711.07414):
    ``parent`` is the descriptive object it was derived from, ``previous`` the step before.

    Parameters
    ----------
    parent : Explanation
    operators : tuple of (str, dict)
        The operator chain, in application order, with parameters.
    kept : tuple of str
        Features shown.
    dropped : tuple of str
        Features hidden.
    values : ndarray of shape (n_features,)
        The simplified attributions (zeros for dropped features).
    statement : str
        Plain-language text rendered from what is shown.
    fidelity_before, fidelity_after : dict of str to float
        Fidelity measures of the parent and of the simplification.
    complexity_before, complexity_after : dict of str to int
        Complexity proxies (items, words, numbers, chunks) of both.
    items : tuple of Item
        What the reader sees, most important first.
    previous : Simplification or None
        The step this one was derived from (None for the identity view).
    sentences : tuple
        Verified sentences (:class:`~explainers.persuasive.SentenceCheck`) after the summary step.
    """

    parent: Explanation
    operators: tuple
    kept: tuple[str, ...]
    dropped: tuple[str, ...]
    values: np.ndarray
    statement: str
    fidelity_before: dict
    fidelity_after: dict
    complexity_before: dict
    complexity_after: dict
    items: tuple = ()
    previous: "Simplification | None" = None
    sentences: tuple = ()

    def to_dict(self) -> dict:
        return _jsonable(self)
