"""The model's outputs on LIME's neighbourhoods, kept from one explained row to the next.

A neighbourhood's sampled rows (all but its first, the explained row itself) depend on its seed and size only:
:meth:`explainers._lime_sampler.LimeSpace.sample` draws every column from the training statistics, as lime's
``LimeTabularExplainer.__data_inverse`` does, and the row decides only which samples share its levels and bins (the
binary representation) and row 0. One thing more reaches the model: a column LIME bins for its missing values (or
because it is constant) is decoded with the row's own value where a sample falls in the row's bin
(:meth:`explainers.lime_explainer.LimeExplainer._model_fn`), so there the row's bin and value count too.

So the model's outputs on a neighbourhood's sampled rows are the same for every row that shares (seed, size, explained
output, binned columns' bins and values), and :class:`KeptOutputs` keeps them: once a neighbourhood has been sent to
the model, a later row sends only itself. The explanation is the one the model's calls would give (the same rows, the
same model), bit for bit for a model whose output on a row does not depend on the other rows of its call (trees,
forests and boosters do not; a BLAS product may differ in the last bits with the call's size). On the sample's
gradient boosting (150 trees, breast cancer's 30 columns) a what-if edit's LIME sent 29,000 rows to the model, about
90 of its 145 ms; keeping them, the edit's LIME takes 53 ms (issue 25).
"""
from __future__ import annotations

import os
import threading
import weakref
from collections import OrderedDict
from typing import Callable

import numpy as np

__all__ = ["KEPT_VALUES", "KeptOutputs", "outputs_in_calls"]

KEPT_VALUES = 400_000
"""Most outputs kept per explainer (float64: 3.2 MB), the least recently used dropped first: breast cancer's rounds of
1,000 and 4,000 samples and its held-out neighbourhood keep 29,000, an Adult row of 8,000 samples 48,000."""


def outputs_in_calls(fn: Callable[[np.ndarray], np.ndarray], rows: np.ndarray, cells: int) -> np.ndarray:
    """``fn(rows)`` in calls of at most ``cells`` cells (rows x columns), concatenated in order.

    Parameters
    ----------
    fn : callable
        ndarray (m, n_features) -> ndarray (m, ...), row by row.
    rows : ndarray of shape (n, n_features)
    cells : int

    Returns
    -------
    ndarray
        ``fn``'s outputs, shape (n, ...).
    """
    step = max(1, cells // max(rows.shape[1], 1))
    outs = [fn(rows[start:start + step]) for start in range(0, len(rows), step)]
    return outs[0] if len(outs) == 1 else np.concatenate(outs)


class KeptOutputs:
    """The model's outputs on neighbourhoods' sampled rows, by key (module docstring), at most ``max_values`` of them.

    Parameters
    ----------
    max_values : int
        Most outputs kept; past it the least recently used neighbourhoods are dropped. 0 keeps none.

    Notes
    -----
    Safe to share between threads (a lock guards the table); two threads that miss the same key both call the model
    and keep the first answer. A forked child (Candor's background jobs) gets a fresh lock: another thread may have
    held this one at the fork.
    """

    def __init__(self, max_values: int = KEPT_VALUES) -> None:
        self.max_values = int(max_values)
        self._kept: OrderedDict = OrderedDict()
        self._values, self._lock = 0, threading.Lock()
        _every.add(self)

    def __len__(self) -> int:
        return len(self._kept)

    @property
    def values(self) -> int:
        """Outputs kept now (float64 values)."""
        return self._values

    def get(self, key) -> np.ndarray | None:
        """The outputs kept under ``key``, or None."""
        with self._lock:
            found = self._kept.get(key)
            if found is not None:
                self._kept.move_to_end(key)
            return found

    def put(self, key, values: np.ndarray) -> None:
        """Keep ``values`` (copied, read-only) under ``key``, dropping the least recently used past ``max_values``."""
        values = np.array(values, dtype=float)
        if values.size > self.max_values:
            return
        values.flags.writeable = False
        with self._lock:
            if key in self._kept:
                return
            self._kept[key] = values
            self._values += values.size
            while self._values > self.max_values:
                self._values -= self._kept.popitem(last=False)[1].size

    def outputs(self, call: Callable[[np.ndarray], np.ndarray], inverses, keys, row_output: float, found) -> list:
        """Each neighbourhood's outputs: row 0 (the explained row) ``row_output``, the sampled rows kept or computed.

        Parameters
        ----------
        call : callable
            ndarray (m, n_features) -> ndarray (m,), the explained output (in bounded calls,
            :func:`outputs_in_calls`); it may write into its argument (a copy is passed).
        inverses : list of ndarray of shape (n, n_features), or of None
            The neighbourhoods (LIME's space), row 0 the explained row; the list is emptied once they are sent (the
            model's call then holds the only copy of them: Adult's rounds are up to 8 MB a copy). None where
            ``found`` holds the outputs.
        keys : sequence
            One key per neighbourhood (module docstring).
        row_output : float
            The explained output at the row.
        found : sequence
            Per neighbourhood, the outputs :meth:`get` returned for its key (None: not kept), read before sampling
            (a kept neighbourhood is drawn without its values).

        Returns
        -------
        list of ndarray of shape (n,)
            Per neighbourhood; those not kept were sent to the model in one call (and are kept now).
        """
        found = list(found)
        todo = [i for i, f in enumerate(found) if f is None]
        if todo:
            sizes = [len(inverses[i]) - 1 for i in todo]
            rows = np.concatenate([inverses[i][1:] for i in todo])
            inverses.clear()
            fresh, rows = np.asarray(call(rows), dtype=float), None
            for i, lo, size in zip(todo, np.cumsum([0, *sizes[:-1]]), sizes):
                found[i] = fresh[lo:lo + size].copy()
                self.put(keys[i], found[i])
        return [np.concatenate([[row_output], f]) for f in found]


_every: weakref.WeakSet = weakref.WeakSet()


def _fresh_locks() -> None:
    for kept in list(_every):
        kept._lock = threading.Lock()


os.register_at_fork(after_in_child=_fresh_locks)
