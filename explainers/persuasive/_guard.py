"""Guardrail against misleading simplifications, the "what was dropped" table, and Gilpin labels.

Lakkaraju & Bastani (2020, "How do I fool you?", arXiv 1911.06473) show that
an explanation can hide a sensitive feature and still look faithful, and that
this raises trust in a biased model. The guardrail therefore reports, for a
persuasive view, every sensitive feature that is hidden or merged while
carrying more than ``max_share`` of total ``|attribution|``, and any hidden
top-ranked feature. Gilpin et al. (2018, arXiv 1806.00069) label each
explanation by what it explains (docs/methods.md, "Gilpin labels").
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ..methods import TABULAR
from ..types import Explanation, GlobalImportance, Simplification
from ._rules import RuleSimplification

__all__ = ["GuardrailNote", "DroppedFeature", "guardrail", "what_was_dropped", "GilpinLabel", "gilpin_label"]


@dataclass(frozen=True)
class GuardrailNote:
    """One warning: ``kind`` is ``"top_hidden"``, ``"sensitive_hidden"`` or ``"sensitive_merged"``."""

    kind: str
    feature: str
    share: float
    rank: int
    message: str


@dataclass(frozen=True)
class DroppedFeature:
    """A hidden feature: its attribution (output units), share of total ``|attribution|`` and rank (1-based)."""

    feature: str
    attribution: float
    share: float
    rank: int
    sensitive: bool


def _ranks(e: Explanation) -> dict[str, int]:
    order = np.lexsort((np.arange(e.values.size), -np.abs(e.values)))
    return {e.feature_names[j]: r + 1 for r, j in enumerate(order)}


def what_was_dropped(s: Simplification, sensitive: Sequence[str] = ()) -> tuple[DroppedFeature, ...]:
    """Every feature the simplification hides, largest ``|attribution|`` first."""
    e = s.parent
    total = float(np.abs(e.values).sum()) or 1.0
    ranks, idx = _ranks(e), {n: j for j, n in enumerate(e.feature_names)}
    rows = [DroppedFeature(f, float(e.values[idx[f]]), abs(float(e.values[idx[f]])) / total, ranks[f], f in set(sensitive))
            for f in s.dropped]
    return tuple(sorted(rows, key=lambda r: r.rank))


def guardrail(s: Simplification, sensitive: Sequence[str] = (), *, max_share: float = 0.05,
              top_guard: int = 1) -> tuple[GuardrailNote, ...]:
    """Warnings the persuasive view must show (Lakkaraju & Bastani 2020).

    Parameters
    ----------
    s : Simplification
    sensitive : sequence of str
        User-declared sensitive features (e.g. race, sex).
    max_share : float, default=0.05
        A hidden or merged sensitive feature carrying more than this share of
        total ``|attribution|`` is reported.
    top_guard : int, default=1
        Hiding any of the ``top_guard`` highest-ranked features is reported
        (the issue asks for the first; docs/methods.md, "Persuasive layer").

    Returns
    -------
    tuple of GuardrailNote

    References
    ----------
    Lakkaraju, Bastani (2020). "How do I fool you?": Manipulating User Trust
    via Misleading Black Box Explanations. AIES. arXiv 1911.06473.
    """
    e = s.parent
    total = float(np.abs(e.values).sum()) or 1.0
    ranks, idx = _ranks(e), {n: j for j, n in enumerate(e.feature_names)}
    share = {f: abs(float(e.values[idx[f]])) / total for f in e.feature_names}
    notes = []
    for f in s.dropped:
        if ranks[f] <= top_guard:
            notes.append(GuardrailNote("top_hidden", f, share[f], ranks[f],
                                       f"hidden: {f}, ranked {ranks[f]} by |attribution| ({share[f]:.0%} of the total)"))
        if f in set(sensitive) and share[f] > max_share:
            notes.append(GuardrailNote("sensitive_hidden", f, share[f], ranks[f],
                                       f"hidden: sensitive feature {f} carries {share[f]:.0%} of the total |attribution|"))
    for it in getattr(s, "items", ()):
        if len(it.members) > 1:
            for j in it.members:
                f = e.feature_names[j]
                if f in set(sensitive) and share[f] > max_share:
                    notes.append(GuardrailNote("sensitive_merged", f, share[f], ranks[f],
                                               f"merged: sensitive feature {f} ({share[f]:.0%} of the total "
                                               f"|attribution|) is shown only inside '{it.name}'"))
    return tuple(notes)


@dataclass(frozen=True)
class GilpinLabel:
    """Gilpin et al. (2018) category of an explanation (docs/methods.md, "Gilpin labels").

    ``primary`` in {processing, representation, explanation_producing};
    ``subtype`` from the table of docs/methods.md, "Gilpin labels"; ``scope`` local or global; ``persuasive``
    marks simplifications (which inherit the parent's label); ``modality``
    is ``"text"`` when the view is a templated sentence.
    """

    primary: str
    subtype: str
    scope: str
    persuasive: bool = False
    modality: str = "chart"
    default_metric: str = ""

    def text(self) -> str:
        extra = " · persuasive" if self.persuasive else ""
        return f"{self.primary} · {self.subtype} · {self.scope}{extra}"


_METHODS = {
    "shap_global": ("processing", "salience (feature attribution), averaged over rows", "global",
                    "additivity gap of each row"),
    "gradient": ("processing", "salience mapping", "local", "comp/suff, deletion AUC"),
    "gradient_x_input": ("processing", "salience mapping", "local", "comp/suff, deletion AUC"),
    "integrated_gradients": ("processing", "salience mapping", "local", "comp/suff, deletion AUC"),
    "cart": ("processing", "decision-tree proxy", "global", "agreement rate"),
    "cart_dl": ("processing", "decision-tree proxy", "global", "agreement rate"),
    "muse": ("processing", "automatic rule extraction (global proxy)", "global", "agreement rate"),
    "flat": ("processing", "automatic rule extraction (global proxy)", "global", "agreement rate"),
    "attention": ("explanation_producing", "attention network", "local",
                  "rank correlation with gradients and leave-one-out"),
    "error_tree": ("processing", "decision-tree proxy (of where the model is wrong)", "global",
                   "error rate of each leaf, Wilson interval"),
    "head_roles": ("representation", "role of individual units (heads)", "global",
                   "accuracy lost when the head is pruned (Michel et al. 2019)"),
    **{m.name: m.gilpin for m in TABULAR},  # the tabular methods' own entries (explainers/methods.py)
}


def gilpin_label(obj) -> GilpinLabel:
    """The label of an explanation, surrogate or simplification (simplifications inherit their parent's).

    ``obj`` may also be a method name, e.g. ``"attention"`` for raw attention weights.

    Raises
    ------
    ValueError
        If the method is not in that table.

    References
    ----------
    Gilpin, Bau, Yuan, Bajwa, Specter, Kagal (2018). Explaining Explanations:
    An Overview of Interpretability of Machine Learning. arXiv 1806.00069.
    """
    if isinstance(obj, (Simplification, RuleSimplification)):
        base = gilpin_label(obj.parent)
        text = bool(getattr(obj, "statement", "")) or any(n in ("template", "plain_language") for n, _ in obj.operators)
        return GilpinLabel(base.primary, base.subtype, base.scope, True, "text" if text else base.modality,
                           base.default_metric)
    if isinstance(obj, GlobalImportance):
        obj = "shap_global"
    method = obj if isinstance(obj, str) else getattr(obj, "method", None)
    key = "shap" if isinstance(method, str) and method.startswith("shap") and method != "shap_global" else method
    if key not in _METHODS:
        raise ValueError(f"no Gilpin label for method {method!r}; known: {sorted(_METHODS)}")
    p, sub, scope, metric = _METHODS[key]
    return GilpinLabel(p, sub, scope, False, "rules" if scope == "global" else "chart",
                       metric)
