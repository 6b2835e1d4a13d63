"""Which pages apply to the model being explained (the task is decided once, at load time).

The navbar shows only pages that apply; a page opened by its URL anyway says why it does not.
"""
from __future__ import annotations

from workspace.errors import CandorError
from ._core import workspace
from .attention import has_attention_model

_KINDS = {"margin": "decision_function margins", "label": "class labels only", "raw": "a regressor's predictions"}


def why_not(path: str) -> str | None:
    """Why the page at ``path`` does not apply to the current model, or ``None`` if it does."""
    ws = workspace()
    if path == "/attention" and not has_attention_model():
        return ("The Attention page explains the bundled tabular transformer; it has no counterpart for your "
                "model. The Text page explains text classifiers.")
    if path == "/surrogate" and not ws.is_classifier:
        return ("Rule surrogates (MUSE, CART) imitate a classifier's labels; this model is a regressor, so "
                "there are no labels to imitate.")
    if path == "/persuasive" and ws.output_kind != "probability":
        return ("The persuasive layer measures what a simplification costs in class probability (ERASER "
                "sufficiency and comprehensiveness) and verifies sentences about probabilities; this model "
                f"gives {_KINDS[ws.output_kind]}. The Descriptive page explains it in those units.")
    return None


def require(path: str) -> None:
    """Raise :class:`CandorError` saying why the page at ``path`` does not apply (computations it alone needs
    call this first, so they are never warmed, or run, for nothing)."""
    if (why := why_not(path)) is not None:
        raise CandorError(why)
