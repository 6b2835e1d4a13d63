"""What one model call may take and what a failing call raises, carried by each adapter
(:class:`explainers.model_adapter.ModelAdapter`), and the calling thread's OpenMP limit they may ask for."""
from __future__ import annotations

import threading
import weakref
from dataclasses import dataclass

__all__ = ["CallLimits", "ModelFailed", "ModelTimeout"]


class ModelTimeout(TimeoutError):
    """A model call went past its deadline (:attr:`CallLimits.seconds`)."""


class ModelFailed(RuntimeError):
    """The model raised while predicting (after it loaded and passed its first rows); the message is one line."""


@dataclass(frozen=True)
class CallLimits:
    """What one call of the model may take, and what a call that fails raises: carried by each adapter.

    Parameters
    ----------
    seconds : float or None, default=None
        Wall-clock seconds per call of :meth:`ModelAdapter.outputs` / :meth:`ModelAdapter.predict`
        (None or 0: no deadline), checked between batches of rows.
    timeout : exception class, default ModelTimeout
        Raised (``timeout(message)``) past the deadline, e.g. an application's own error type that its pages
        show as a message.
    failed : exception class, default ModelFailed
        Raised (one line: the rows, the model's own first line; the model's exception as ``__cause__``)
        when the model raises.
    openmp_threads : int or None, default=None
        OpenMP threads the model may use in the thread that calls it (HistGradientBoosting, LightGBM), set in each
        calling thread before its first call (:func:`_openmp_limited`); None leaves them as they are. OpenMP's limit
        is per thread: a server that sets it once (``workspace.limits.one_openmp_thread``) sets it in that thread
        only, and its request threads ran two threads spinning against each other and the machine's load.
    """

    seconds: float | None = None
    timeout: type[Exception] = ModelTimeout
    failed: type[Exception] = ModelFailed
    openmp_threads: int | None = None


_thread = threading.local()


def _openmp_limited(adapter, n: int | None) -> None:
    """Limit the calling thread's OpenMP runtimes to ``n`` threads, once per thread and adapter (None: nothing).

    OpenMP keeps its thread count per thread, so it is set in each thread that calls the model, at its first call for
    this adapter (a new workspace's model may have loaded another runtime: LightGBM's). On a shared 2-core machine an
    edit on Adult's HistGradientBoosting pipeline spent 2.7 CPU s with two OpenMP threads a call (a hundred parallel
    regions each) and 0.2 s with one (load 9).
    """
    if n is None:
        return
    seen = getattr(_thread, "openmp", None)
    if seen is not None and seen[0]() is adapter and seen[1] == n:
        return
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=int(n), user_api="openmp")  # this thread's, kept: lists the loaded libraries once
    _thread.openmp = (weakref.ref(adapter), n)
