"""Result types to and from what a store holds: arrays for the numbers, JSON for the rest.

One explanation splits into arrays (values, standard errors, base value, prediction, the row) and a
JSON object with everything else (method, names, source, params, fidelity); :func:`join_explanation`
puts them back into the same :class:`explainers.Explanation` (``to_dict()`` of both is equal, a test
checks). Rule surrogates (:mod:`explainers.muse` types) and head analyses (:mod:`explainers.text`'s
``HeadAnalysis``, the Text page's results cache) come back from their ``to_dict()`` JSON.
"""
from __future__ import annotations

import json

import numpy as np

from explainers.methods import by_name
from explainers.muse import AgreementDetail, Frontier, FrontierPoint, RuleSetQuantities, TwoLevelRuleSet
from explainers.types import Explanation, Fidelity, GlobalImportance, Predicate, Rule

_ARRAYS = ("values", "feature_values")


def split_explanation(e: Explanation) -> tuple[dict[str, np.ndarray | float], str]:
    """``(numbers, rest)``: ``values``, ``se`` (n_features,), ``base``, ``prediction``, ``feature_values``
    and the rest of the explanation as JSON text (``params["standard_error"]`` moves to ``se``)."""
    d = e.to_dict()
    params = dict(d.get("params") or {})
    se = params.pop("standard_error", None)
    rest = {k: v for k, v in d.items() if k not in (*_ARRAYS, "base_value", "prediction", "params")}
    rest["params"] = params
    rest["se_in_params"] = se is not None
    numbers = {"values": np.asarray(e.values, dtype=float),
               "se": np.zeros(len(e.values)) if se is None else np.asarray(se, dtype=float),
               "base": float(e.base_value), "prediction": float(e.prediction),
               "feature_values": np.asarray(e.feature_values, dtype=float)}
    return numbers, json.dumps(rest)


def join_explanation(values, se, base: float, prediction: float, feature_values, rest: str | dict) -> Explanation:
    """The :class:`~explainers.Explanation` that :func:`split_explanation` took apart."""
    meta = json.loads(rest) if isinstance(rest, str) else dict(rest)
    params = dict(meta.get("params") or {})
    if meta.get("se_in_params"):
        params["standard_error"] = tuple(float(v) for v in np.asarray(se, dtype=float))
    fid = meta.get("fidelity")
    return Explanation(method=meta["method"], feature_names=tuple(meta["feature_names"]),
                       values=np.array(values, dtype=float), base_value=float(base), prediction=float(prediction),
                       feature_values=np.array(feature_values, dtype=float), output_space=meta["output_space"],
                       target=meta["target"], source=meta["source"], fidelity=Fidelity(**fid) if fid else None,
                       params=params)


def explanation_to_json(e: Explanation) -> dict:
    """One explanation as one JSON object (a row added to a store on demand, a text attribution cached).

    ``feature_values`` stay as they are (numbers, or a text's words).
    """
    d = e.to_dict()
    params = dict(d.get("params") or {})
    se = params.pop("standard_error", None)
    rest = {k: v for k, v in d.items() if k not in (*_ARRAYS, "base_value", "prediction", "params")}
    return {"rest": {**rest, "params": params, "se_in_params": se is not None}, "values": d["values"],
            "se": [0.0] * len(d["values"]) if se is None else se, "base": d["base_value"],
            "prediction": d["prediction"], "feature_values": d["feature_values"]}


def explanation_from_json(d: dict) -> Explanation:
    """The inverse of :func:`explanation_to_json` (words come back as an object array, numbers as float).

    Raises
    ------
    KeyError, TypeError, ValueError
        If ``d`` is not such an object.
    """
    fv = d["feature_values"]
    fv = np.array(fv, dtype=object) if any(isinstance(v, str) for v in fv) else np.asarray(fv, dtype=float)
    e = join_explanation(d["values"], d["se"], d["base"], d["prediction"], np.zeros(len(fv)), d["rest"])
    return Explanation(**{**{f: getattr(e, f) for f in e.__dataclass_fields__}, "feature_values": fv})


def global_meta(g: GlobalImportance) -> dict:
    """The scalars of a :class:`~explainers.GlobalImportance` (its arrays are stored as ``.npy``)."""
    return {"feature_names": list(g.feature_names), "base_value": float(g.base_value), "output_space": g.output_space,
            "target": g.target, "source": g.source, "has_se": g.standard_error is not None}


def global_from_parts(meta: dict, values, feature_values, se) -> GlobalImportance:
    """The :class:`~explainers.GlobalImportance` of :func:`global_meta` and its arrays."""
    return GlobalImportance(tuple(meta["feature_names"]), values, np.asarray(feature_values), meta["base_value"],
                            meta["output_space"], meta["target"], meta["source"],
                            standard_error=np.asarray(se) if meta.get("has_se") else None)


def method_result_from_dict(method: str, d: dict):
    """A global method's stored result (``<method>.json``) from its ``to_dict()``, by its result type's own
    ``from_dict`` (the table of methods, :data:`explainers.methods.TABULAR`).

    Raises
    ------
    KeyError, TypeError, ValueError
        For an unknown method, or if ``d`` is not such a result.
    """
    return by_name(method).result.from_dict(d)


def _predicate(d: dict) -> Predicate:
    t = d["threshold"]
    return Predicate(d["feature"], d["op"], tuple(t) if isinstance(t, list) else t)


def _rule(d: dict) -> Rule:
    return Rule(tuple(map(_predicate, d["descriptor"])), tuple(map(_predicate, d["rule"])), d["label"],
                int(d["support"]), float(d["coverage"]), float(d["precision"]))


def quantities_from_dict(d: dict) -> RuleSetQuantities:
    """A :class:`~explainers.muse.RuleSetQuantities` from its ``to_dict()``."""
    return RuleSetQuantities(**d)


def rule_set_from_dict(d: dict) -> TwoLevelRuleSet:
    """A :class:`~explainers.muse.TwoLevelRuleSet` from its ``to_dict()`` (lists back to tuples)."""
    params = {k: tuple(v) if isinstance(v, list) else v for k, v in d["params"].items()}
    return TwoLevelRuleSet(d["method"], tuple(map(_rule, d["rules"])), d["default_label"], tuple(d["classes"]),
                           tuple(d["feature_names"]), quantities_from_dict(d["train"]), params)


def frontier_from_dict(d: dict) -> Frontier:
    """A :class:`~explainers.muse.Frontier` from its ``to_dict()``."""
    points = tuple(FrontierPoint(**{**p, "rule_set": rule_set_from_dict(p["rule_set"])}) for p in d["points"])
    return Frontier(points, **{k: v for k, v in d.items() if k != "points"})


def detail_from_dict(d: dict) -> AgreementDetail:
    """An :class:`~explainers.muse.AgreementDetail` from its ``to_dict()`` (arrays back to numpy)."""
    return AgreementDetail(**{**d, "classes": tuple(d["classes"]), "confusion": np.asarray(d["confusion"], dtype=int),
                              "per_class_agreement": np.asarray(d["per_class_agreement"], dtype=float)})


def _array(v, dtype) -> np.ndarray | None:
    return None if v is None else np.array(v, dtype=dtype)


def head_roles_from_dict(d: dict):
    """An :class:`explainers.text.HeadRoles` from its ``to_dict()``: arrays back to numpy (float, the offsets
    and denominators int), nested lists of labels back to tuples."""
    from explainers.text import HeadRoles  # imports torch: only where head analyses are read

    floats = ("confidence", "modal_share", "share_prev", "share_next", "rare_share", "syntactic_accuracy",
              "syntactic_baseline", "modal_se", "share_prev_se", "share_next_se")
    return HeadRoles(**{**d, **{k: _array(d[k], float) for k in floats},
                        "modal_offset": _array(d["modal_offset"], int),
                        "modal_eligible": _array(d["modal_eligible"], int),
                        "syntactic_best": tuple(map(tuple, d["syntactic_best"])),
                        "labels": tuple(tuple(map(tuple, row)) for row in d["labels"]),
                        "syntactic": {k: {**s, "accuracy": np.array(s["accuracy"], dtype=float)}
                                      for k, s in d["syntactic"].items()}})


def head_analysis_from_dict(d: dict):
    """An :class:`explainers.text.HeadAnalysis` (roles, importance, pruning curves) from its ``to_dict()``.

    Exact: ``to_dict()`` of the result equals ``d`` and every array equals the original's (NaN where it
    had NaN; float64 and int64 as :func:`explainers.attention.analyze_heads` makes them), a test checks.

    Raises
    ------
    KeyError, TypeError, ValueError
        If ``d`` is not such an object.
    """
    from explainers.text import HeadAnalysis, HeadImportance, PruningCurve

    imp = d["importance"]
    curves = tuple(PruningCurve(**{**c, "fraction_pruned": np.array(c["fraction_pruned"], dtype=float),
                                   "n_pruned": np.array(c["n_pruned"], dtype=int),
                                   "agreement": np.array(c["agreement"], dtype=float),
                                   "pruned_heads": tuple(c["pruned_heads"])}) for c in d["pruning"])
    return HeadAnalysis(
        roles=head_roles_from_dict(d["roles"]), pruning=curves, n_texts=d["n_texts"], seconds=d["seconds"],
        importance=None if imp is None else HeadImportance(**{**imp, "raw": np.array(imp["raw"], dtype=float),
                                                             "normalized": np.array(imp["normalized"], dtype=float)}),
        source=d["source"], word_roles=None if d["word_roles"] is None else head_roles_from_dict(d["word_roles"]))
