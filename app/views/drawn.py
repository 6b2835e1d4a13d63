"""What every viewer is sent alike, drawn once per process and workspace (issue 27).

A page's global views (the Descriptive page's mean |SHAP| and beeswarm, the Persuasive page's held-out curve, the
Surrogate page's frontier and chosen surrogate, the Persuasive page's rules) depend only on the workspace and the
callback's arguments, not on who asks; building their Plotly figures cost 13-80 ms of CPU a request (the
Descriptive global view 46 ms, its 183 kB of JSON 7 ms more), on every page opened by every viewer, with the
interpreter held. :func:`drawn_once` keeps each answer, figures as the dicts Dash sends, in a per-workspace
least-recently-used cache (:func:`app.services.row_cache`: a class switch or upload drops it). A drawing that
raises (:class:`~workspace.errors.CandorError`, a view not computed yet) is not kept: the callback says why and
the next request draws again.
"""
from __future__ import annotations

import functools

from app import services


def as_sent(value):
    """``value`` with every Plotly figure in it (a tuple of outputs, or one output) as the dict Dash sends."""
    if isinstance(value, tuple):
        return tuple(as_sent(v) for v in value)
    return value.to_plotly_json() if hasattr(value, "to_plotly_json") and hasattr(value, "layout") else value


def drawn_once(maxsize: int = 64):
    """Decorator: keep what ``fn(*args)`` draws, per workspace and hashable arguments (others draw each time).

    Parameters
    ----------
    maxsize : int, default=64
        Answers kept per process (least recently used dropped first).
    """
    def wrap(fn):
        kept = services.row_cache(maxsize=maxsize)(lambda *args: as_sent(fn(*args)))

        @functools.wraps(fn)
        def call(*args):
            try:
                hash(args)
            except TypeError:  # a list argument (a dropdown's values): drawn for this request only
                return as_sent(fn(*args))
            return kept(*args)

        call.cache_clear = kept.cache_clear
        return call
    return wrap
