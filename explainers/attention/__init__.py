"""Attention of transformer models, tabular and text: one home for reading it and comparing it.

* :mod:`~explainers.attention.extract`: :func:`tabular_attention` -> :class:`explainers.types.AttentionMap`,
  :func:`extract_attention` (text) -> :class:`explainers.text.TextAttention` (torch);
* :mod:`~explainers.attention.aggregates`: :func:`cls_row`, :func:`mean_over_queries`, :func:`rollout`,
  and the text front end :func:`attention_scores`, :func:`to_level` (numpy only);
* :mod:`~explainers.attention.agreement`: :func:`head_agreement` and the one
  :func:`compare_attention_attribution` (per-token attention or a TextAttention);
* :mod:`~explainers.attention.roles`: head roles of Voita et al. (2019) (:class:`RoleAccumulator`,
  :func:`head_roles`, numpy only);
* :mod:`~explainers.attention.head_importance`: :func:`analyze_heads` over a dataset (roles, head
  importance of Michel et al. 2019 and the pruning curve; torch).

Names are imported on first use (PEP 562), so the numpy-only readings do not load torch.
"""
from .._lazy import lazy_names

_LAZY = {
    "tabular_attention": ".extract", "extract_attention": ".extract",
    "cls_row": ".aggregates", "mean_over_queries": ".aggregates", "rollout": ".aggregates",
    "attention_scores": ".aggregates", "to_level": ".aggregates",
    "head_agreement": ".agreement", "compare_attention_attribution": ".agreement",
    "RoleAccumulator": ".roles", "head_roles": ".roles", "rarest_position": ".roles",
    "DEFAULT_RELATIONS": ".roles",
    "analyze_heads": ".head_importance", "AnalysisCancelled": ".head_importance",
    "normalize_per_layer": ".head_importance", "pruning_order": ".head_importance",
    "DEFAULT_PRUNING_FRACTIONS": ".head_importance",
}


def is_compatible(capabilities) -> str | None:
    """Why tabular attention does not apply to a model with these
    :class:`~explainers.capabilities.Capabilities`, or ``None``: it reads a tabular transformer that
    computes explicit attention (the bundled one)."""
    if capabilities.has_attention_model:
        return None
    return "The Attention page explains the bundled tabular transformer; it has no counterpart for your model."


__getattr__ = lazy_names(__name__, _LAZY)


def __dir__():
    return sorted(list(globals()) + list(_LAZY))


__all__ = sorted([*_LAZY, "is_compatible"])
