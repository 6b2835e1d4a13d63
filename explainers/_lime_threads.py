"""LIME's neighbourhoods drawn on two threads: the calling thread and one pool thread, created once a process.

A neighbourhood (:meth:`explainers._lime_sampler.LimeSpace.sample`) is numpy and scipy work on arrays of thousands of
values, most of it in loops that release the GIL (the uniforms, the truncated normals' inverse CDF, the gathers): two
neighbourhoods drawn on two threads took 14 ms where one after the other took 20 (4,000 x 30, breast cancer). The
model's call does not: scikit-learn's gradient boosting walks its trees holding the GIL (two halves of a round on two
threads: 49 ms against 44 in one call), so only the draws are shared out. Each neighbourhood has its own
``RandomState(seed)`` and goes to its own slot, so which thread drew it changes nothing (bit for bit; tests compare).
"""
from __future__ import annotations

import functools
import os
import threading
from concurrent.futures import ThreadPoolExecutor

__all__ = ["draw_all", "MIN_CELLS"]

MIN_CELLS = 32_768
"""Smaller neighbourhoods (samples x features) are drawn in the calling thread: about a millisecond each (Adult's 14
columns at 1,000 samples), where sharing them out cost as much as it saved (Adult's LIME a row: 52.6 against 49.8 CPU
ms, no faster)."""


@functools.cache
def _pool() -> ThreadPoolExecutor:
    """The one helper thread of the process (requests share it; a request that finds it busy draws alone)."""
    return ThreadPoolExecutor(max_workers=1, thread_name_prefix="candor-lime-draws")


if hasattr(os, "register_at_fork"):  # a forked worker (gunicorn --preload) makes its own: the parent's thread is not in it
    os.register_at_fork(after_in_child=_pool.cache_clear)


def draw_all(space, row_t, n: int, seeds, threads: int = 1) -> list:
    """``space.sample(row_t, n, s)`` for each seed of ``seeds``, in their order.

    Parameters
    ----------
    space : LimeSpace
    row_t : ndarray of shape (n_features,)
        The explained row in LIME's space.
    n : int
        Samples a neighbourhood.
    seeds : sequence of int
    threads : int, default=1
        1: drawn one after the other in the calling thread. 2 or more: the calling thread and the process's one pool
        thread take the seeds in turn (two threads at most); if the pool thread is busy with another request's draws,
        the calling thread draws every one itself rather than wait. Neighbourhoods of fewer than :data:`MIN_CELLS`
        cells are drawn in the calling thread whatever ``threads``.

    Returns
    -------
    list of (binary, inverse)
        As :meth:`LimeSpace.sample` returns them, one per seed in the order of ``seeds``.
    """
    seeds = list(seeds)
    if threads < 2 or len(seeds) < 2 or n * len(row_t) < MIN_CELLS:
        return [space.sample(row_t, n, s) for s in seeds]
    out: list = [None] * len(seeds)
    todo, lock = iter(range(len(seeds))), threading.Lock()

    def work() -> None:
        while True:
            with lock:
                k = next(todo, None)
            if k is None:
                return
            out[k] = space.sample(row_t, n, seeds[k])

    helper = _pool().submit(work)
    try:
        work()
    finally:  # wait for the draws the helper took (its slots of ``out``), unless it never started
        error = None if helper.cancel() else helper.exception()
    if error is not None:
        raise error
    return out
