"""What a loaded model offers the explainers, and what each method family needs of it.

:class:`Capabilities` is computed once per workspace (``app/services/applicable.py``). Each
method family says whether it applies with an ``is_compatible(capabilities) -> str | None``
function next to it, the way LIT's ``Interpreter.is_compatible(model, dataset)`` does: ``None``
when it applies, otherwise the reason, in one or two sentences a user can read:

- rule surrogates: :func:`explainers.muse.is_compatible` (a classifier's labels to imitate);
- the persuasive layer: :func:`explainers.persuasive.is_compatible` (class probabilities);
- tabular attention: :func:`explainers.attention.is_compatible` (a tabular transformer; asking loads no torch).
"""
from __future__ import annotations

from dataclasses import dataclass

OUTPUT_WORDS = {"probability": "class probabilities", "margin": "decision_function margins",
                "label": "class labels only", "raw": "a regressor's predictions"}
"""How each output kind is named in a reason."""


@dataclass(frozen=True)
class Capabilities:
    """What the explained model and its workspace offer.

    Attributes
    ----------
    task : {"binary", "multiclass", "regression"}
    output_kind : {"probability", "margin", "label", "raw"}
        Units of the explained output (``raw``: a regressor's prediction).
    n_classes : int
        Classes of the model (0 for a regressor); a multiclass model is explained one class against the rest.
    has_attention_model : bool
        A tabular transformer over the same features is loaded (the bundled sample's).
    """

    task: str
    output_kind: str
    n_classes: int = 0
    has_attention_model: bool = False

    @property
    def is_classifier(self) -> bool:
        return self.task != "regression"

