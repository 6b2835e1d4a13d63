"""What the Surrogate page shows for the settings in its controls (issue 25: links that reproduce what they show).

A link names settings (``/surrogate?foi=age&foi=sex&max_rules=5``) that :mod:`app.shell.url_state` puts in the
controls; the page shows the fit of those settings, not the default fit: read from the shared cache when it holds
it (:func:`link_plan` ``"cached"``), else fitted as the page's one background job (``"fit"``, for a user who may fit:
an analyst), else the default fit (``"refused"``). Whenever the surrogate or frontier shown is not of the controls'
settings, :func:`settings_note` says so in one line, and what would fit them.
"""
from __future__ import annotations

from dataclasses import dataclass

from workspace.errors import CandorError
from .surrogates import DEFAULT_BUDGETS, is_cached, muse_params, result_keys

__all__ = ["LinkPlan", "link_plan", "linked_muse_key", "settings_note", "describe"]


@dataclass(frozen=True)
class LinkPlan:
    """How the page opens for its controls' settings.

    Attributes
    ----------
    kind : {"default", "cached", "fit", "refused", "invalid"}
        ``default``: the controls are the defaults (the default fit, from the store or the warm-up);
        ``cached``: their MUSE and frontier are in the cache (shown as they are); ``fit``: fit them (a background
        job); ``refused``: not cached and the user may not fit (the default fit is shown, the note says why);
        ``invalid``: the controls are not valid settings (the default fit is shown, the note says why).
    muse_key, frontier_key : str or None
        The cache keys of the controls' MUSE and frontier (None for ``invalid``).
    """

    kind: str
    muse_key: str | None = None
    frontier_key: str | None = None


def _params(foi, max_rules, max_width, max_nbhd, lambdas) -> dict:
    return muse_params(foi, max_rules, max_width, max_nbhd, lambdas)


def _defaults() -> dict:
    return muse_params()


def link_plan(foi, max_rules, max_width, max_nbhd, lambdas, may_fit: bool) -> LinkPlan:
    """How the Surrogate page opens for the controls' settings (a link's, or the defaults).

    Parameters
    ----------
    foi, max_rules, max_width, max_nbhd, lambdas
        The controls' values (features of interest as names).
    may_fit : bool
        Whether this request's user may start a fit (the analyst role).
    """
    try:
        params = _params(foi, max_rules, max_width, max_nbhd, lambdas)
    except CandorError:
        return LinkPlan("invalid")
    muse_key, frontier_key = result_keys(params)
    if params == _defaults():
        return LinkPlan("default", muse_key, frontier_key)
    if is_cached(muse_key) and is_cached(frontier_key):
        return LinkPlan("cached", muse_key, frontier_key)
    return LinkPlan("fit" if may_fit else "refused", muse_key, frontier_key)


def linked_muse_key(foi=None, max_rules=None, max_width=None, max_nbhd=None, lambdas=None) -> str | None:
    """The key of the controls' MUSE when they are not the defaults and it is cached now, else None."""
    plan = link_plan(foi, max_rules, max_width, max_nbhd, lambdas, may_fit=False)
    return plan.muse_key if plan.kind in ("cached", "refused") and is_cached(plan.muse_key) else None


def describe(params: dict) -> str:
    """The settings of ``params`` that differ from the defaults, as a reader names them ("the defaults" if none)."""
    parts = []
    if params["features_of_interest"]:
        parts.append("features of interest " + ", ".join(params["features_of_interest"]))
    for name, label in (("max_rules", "{} rules"), ("max_width", "width {}"), ("max_neighborhoods", "{} neighborhoods")):
        if params[name] != DEFAULT_BUDGETS[name]:
            parts.append(label.format(params[name]))
    if params["lambdas"] != _defaults()["lambdas"]:
        parts.append("λ " + ", ".join("auto" if v is None else f"{v:g}" for v in params["lambdas"]))
    return "; ".join(parts) or "the defaults"


def settings_note(key, frontier_key, foi, max_rules, max_width, max_nbhd, lambdas, *, may_fit: bool,
                  fitting: bool = False) -> str | None:
    """One line when the surrogate (``key``) or frontier (``frontier_key``) shown is not of the controls' settings.

    Parameters
    ----------
    key : str or None
        The shown surrogate's key: a MUSE fit's, or ``"<frontier key>|<method>|<budget>"``.
    frontier_key : str or None
        The shown frontier's key.
    foi, max_rules, max_width, max_nbhd, lambdas
        The controls' values.
    may_fit : bool
        Whether the user may fit (the line then says "Fit MUSE fits them", else which role can).
    fitting : bool
        A fit is running (the line then says so).

    Returns
    -------
    str or None
        None when nothing is shown yet or what is shown is of the controls' settings.
    """
    if not key and not frontier_key:
        return None
    default_muse, default_frontier = result_keys(_defaults())
    try:
        params = _params(foi, max_rules, max_width, max_nbhd, lambdas)
    except CandorError as err:
        shown = [k for k in (key, frontier_key) if k]
        whose = "the default fit" if all(_of(k, default_muse, default_frontier) for k in shown) else "another fit"
        return f"The view shows {whose}: the settings above cannot be fitted ({err})."
    muse_key, wanted_frontier = result_keys(params)
    off = [(name, k) for name, k in (("surrogate", key), ("frontier", frontier_key))
           if k and not _of(k, muse_key, wanted_frontier)]
    if not off:
        return None
    what = " and ".join(name for name, _ in off)
    whose = "the default fit" if all(_of(k, default_muse, default_frontier) for _, k in off) else "another fit"
    tail = ("they are being fitted" if fitting else "Fit MUSE fits them" if may_fit else
            "fitting them needs the analyst role")
    return (f"The {what} shown {'are' if len(off) > 1 else 'is'} {whose}, not of the settings above "
            f"({describe(params)}): {tail}.")


def _of(key: str, muse_key: str, frontier_key: str) -> bool:
    """Whether the shown ``key`` (a MUSE fit, a frontier, or a frontier's point) is of these settings' results."""
    return key in (muse_key, frontier_key) or key.partition("|")[0] == frontier_key
