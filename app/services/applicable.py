"""Which method families, and so which pages, apply to the model being explained.

The workspace's :class:`~explainers.capabilities.Capabilities` are computed once (the task is
decided at load time); each family says what it needs with its own ``is_compatible`` (next to the
family in :mod:`explainers`). A page declares the family it shows
(``dash.register_page(..., requires="persuasive")``); the navbar shows only pages whose family
applies, a page opened by its URL anyway says why it does not, and services guard computations
only one family needs with :func:`require`.
"""
from __future__ import annotations

from explainers import attention, cohorts, muse, persuasive
from explainers.capabilities import Capabilities

from workspace.errors import CandorError
from ._core import lazy, workspace

FAMILIES = {
    "surrogate": muse.is_compatible,
    "persuasive": persuasive.is_compatible,
    "attention": attention.is_compatible,
    "cohorts": cohorts.is_compatible,
}
"""Method family → its ``is_compatible(capabilities) -> str | None``."""

SEE_ALSO = {
    "persuasive": "The Descriptive page explains it in those units.",
    "attention": "The Text page explains text classifiers.",
}
"""Where to look instead, added after the family's reason."""


def _capabilities() -> Capabilities:
    ws = workspace()
    n_classes = 0
    if ws.is_classifier:
        n_classes = len(ws.adapter.class_names)
    return Capabilities(task=ws.task, output_kind=ws.output_kind, n_classes=n_classes,
                        has_attention_model=ws.transformer_paths is not None)


capabilities = lazy("capabilities", _capabilities)
"""The current workspace's :class:`~explainers.capabilities.Capabilities` (computed once per workspace)."""


def why_not(family: str | None) -> str | None:
    """Why the method ``family`` (a page's ``requires``) does not apply to the current model, or ``None``.

    ``None`` as the family (a page that needs nothing beyond a model) always applies.

    Raises
    ------
    KeyError
        For a family no explainer declares.
    """
    if family is None:
        return None
    why = FAMILIES[family](capabilities())
    if why is not None and family in SEE_ALSO:
        why = f"{why} {SEE_ALSO[family]}"
    return why


def require(family: str) -> None:
    """Raise :class:`CandorError` saying why ``family`` does not apply (computations it alone needs
    call this first, so they are never warmed, or run, for nothing)."""
    if (why := why_not(family)) is not None:
        raise CandorError(why)
