"""The tabular methods: what each is and how a store keeps it (the facts every layer may read).

One entry per method: its name (the ``method`` of its results), its title, its scope (``"local"``: one result per
row; ``"global"``: one result for the model), its result type, how a store keeps it, what each stored file holds,
and its Gilpin et al. (2018) label. :mod:`store.format` lists its files from here (``store/`` may not import
``app/``); how each method is *made* from a workspace and computed is the services' table
(``app/services/methods.py``), whose entries name these facts. Adding a method: an entry here, one there, its
explainer and its view (``docs/architecture.md``).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from .types import Explanation
from .types import PermutationImportance
from .types import DependenceSet

__all__ = ["MethodFacts", "TABULAR", "by_name"]

ROW_PARTS = ("values", "se", "base", "prediction", "feature_values")
"""The arrays of a method stored per row (``<name>_<part>.npy``, ``store/format.py``)."""


@dataclass(frozen=True)
class MethodFacts:
    """What a tabular method is and how a store keeps it.

    Parameters
    ----------
    name : str
        The method's name, as its results' ``method`` (also the store's file prefix).
    title : str
        Its name for people ("SHAP").
    scope : {"local", "global"}
        One result per row (an :class:`~explainers.Explanation`), or one for the model.
    result : type
        Its result type (a frozen dataclass with ``to_dict``; a global one also ``from_dict``).
    stored : {"rows", "document"} or None
        ``"rows"``: arrays per stored row (``<name>_values.npy``, ...) and its JSON in ``row_meta.parquet``;
        ``"document"``: one JSON file ``<name>.json`` (``result.to_dict()``); None: never stored.
    holds : dict of str to str
        What each stored file holds (the manifest's ``holds``), by part (:data:`ROW_PARTS`) or ``"json"``.
    gilpin : tuple of str
        (primary, subtype, scope, default metric) of Gilpin et al. (2018)'s taxonomy.
    """

    name: str
    title: str
    scope: Literal["local", "global"]
    result: type
    stored: Literal["rows", "document"] | None
    holds: dict = field(default_factory=dict)
    gilpin: tuple[str, str, str, str] = ("", "", "", "")

    def files(self) -> dict[str, str]:
        """The store's files of this method and what each holds (none if it is not stored)."""
        if self.stored == "rows":
            return {f"{self.name}_{part}.npy": self.holds[part] for part in ROW_PARTS}
        if self.stored == "document":
            return {f"{self.name}.json": self.holds["json"]}
        return {}


SHAP = MethodFacts(
    "shap", "SHAP", "local", Explanation, "rows",
    {"values": "float64 (N, d): per-row SHAP values",
     "se": "float64 (N, d): their standard errors (0 for exact backends)",
     "base": "float64 (N,): SHAP base value of each row",
     "prediction": "float64 (N,): the model output each SHAP explanation adds up to",
     "feature_values": "float64 (N, d): the stored rows as SHAP saw them (encoded)"},
    ("processing", "salience (feature attribution)", "local", "additivity gap; deletion/insertion AUC"))
LIME = MethodFacts(
    "lime", "LIME", "local", Explanation, "rows",
    {"values": "float64 (N, d): per-row LIME weights",
     "se": "float64 (N, d): their standard errors over LIME's seeded fits",
     "base": "float64 (N,): LIME intercept of each row",
     "prediction": "float64 (N,): the model output LIME explained",
     "feature_values": "float64 (N, d): the stored rows as LIME saw them (encoded)"},
    ("processing", "linear proxy model", "local", "local R²"))
PERMUTATION_IMPORTANCE = MethodFacts(
    "permutation_importance", "permutation importance", "global", PermutationImportance, "document",
    {"json": "permutation importance on the held-out rows: mean drop of the score per feature, its standard error "
             "and every repeat, the scoring, repeats and seed"},
    ("processing", "feature importance (score drop when a feature is shuffled)", "global",
     "standard error over repeats"))

PARTIAL_DEPENDENCE = MethodFacts(
    "partial_dependence", "partial dependence", "global", DependenceSet, "document",
    {"json": "partial dependence and ICE curves of the 3 features with the largest mean |SHAP| on the held-out rows "
             "(sampled rows, grid, every curve, the PDP's standard error, what the average hides)"},
    ("processing", "feature effect (partial dependence with ICE curves)", "global",
     "share of ICE curves against the PDP; centred ICE distance"))

TABULAR: tuple[MethodFacts, ...] = (SHAP, LIME, PERMUTATION_IMPORTANCE, PARTIAL_DEPENDENCE)
"""Every tabular method, in the order pages, stores and reports list them."""


def by_name(name: str) -> MethodFacts:
    """The entry of method ``name``.

    Raises
    ------
    KeyError
        If there is none, naming the known methods.
    """
    for m in TABULAR:
        if m.name == name:
            return m
    raise KeyError(f"no tabular method {name!r}; known: {', '.join(m.name for m in TABULAR)}")
