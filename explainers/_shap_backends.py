"""Which SHAP backend explains a model, and the method line that says so (docs/methods.md, "SHAP").

:func:`select_backend` is the dispatch of :class:`~explainers.shap_explainer.ShapExplainer`: exact
interventional Tree SHAP for a tree ensemble (also the final tree of a Pipeline, in its transformed space),
Linear SHAP for a linear model's margin (plain, or at the end of a Pipeline whose steps act column by
column), and otherwise Kernel SHAP (on request, :mod:`explainers._shapley_kernel`), exact enumeration of
every coalition (:mod:`explainers._shapley_exact`) or the converged permutation estimate
(:mod:`explainers._permutation`) in the raw feature space.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ._shapley_exact import EXACT_MAX_MODEL_ROWS, EXACT_MAX_PLAYERS, exact_fits
from ._shapley_kernel import KERNEL_REPEATS, KMEANS_K, kernel_explainer
from ._shapley_support import linear_pipeline_view, pct
from .model_adapter import ModelAdapter, TreeView
from .model_kinds import is_linear_model, tree_shap_refusal
from .tree_shap import TreeShap, supports

__all__ = ["Backend", "select_backend", "own_tree_kind", "OWN_TREE"]

OWN_TREE = "exact interventional Tree SHAP (Candor's, by leaves; Lundberg et al. 2020)"
"""The method line's name for :mod:`explainers.tree_shap`."""


def own_tree_kind(explainer: TreeShap, n_transformed: int, summed: bool, grouped: bool) -> str:
    """The method's part of the source line for :mod:`explainers.tree_shap`: what is exact, in which units."""
    units = {"probability": "in probability (the forest's mean of trees)",
             "raw": "in the model's prediction",
             "margin": ("in log-odds (the boosted model's margin, whose Shapley values are exact; the "
                        "probability is shown beside)" if len(explainer.expected_value) == 1 else
                        "in per-class scores before the softmax (the boosted model's margin)")}[explainer.output]
    how = (f", {n_transformed} transformed features summed per raw column (signed): a raw column's value is the "
           "sum of its one-hot children's SHAP values, not the Shapley value of the column" if summed else
           ", raw columns as players (one-hot children move together: each value is the raw column's Shapley "
           "value)" if grouped else "")
    return f"{OWN_TREE} {units}{how}"


@dataclass(frozen=True)
class Backend:
    """The SHAP backend chosen for one model and explained output.

    Parameters
    ----------
    algorithm : {"tree", "linear", "kernel", "exact", "permutation"}
    output_space : {"probability", "log_odds", "raw"}
    explainer : shap explainer or None
        shap's Tree, Linear or Kernel explainer; None for exact enumeration and permutation SHAP.
    kind : str
        The method's part of the source line (what ran, and why a tree was refused).
    players : str
        What the values are attributed to ("raw columns", "transformed features" ...).
    feature_names : tuple of str
        The players' names.
    tree : TreeView or None
        The tree ensemble explained by Tree SHAP.
    view : TreeView or None
        The transform feeding the explained estimator (tree or linear Pipeline), if not the raw columns.
    margin : bool
        True when Linear SHAP explains the model's ``decision_function`` (log-odds).
    groups : ndarray of int or None
        Raw column of each transformed feature, when values are summed back to raw columns.
    """

    algorithm: str
    output_space: str
    explainer: Any
    kind: str
    players: str
    feature_names: tuple[str, ...]
    tree: TreeView | None = None
    view: TreeView | None = None
    margin: bool = False
    groups: np.ndarray | None = None


def select_backend(adapter: ModelAdapter, background: pd.DataFrame, *, algorithm: str, space: str, n: int,
                   want: str, seed: int, rel_tol: float, max_orderings: int, _not_tree: str = "") -> Backend:
    """The backend that explains output ``want`` of ``adapter`` over ``background`` (``n`` rows).

    ``algorithm``, ``space``, ``seed``, ``rel_tol`` and ``max_orderings`` are
    :class:`~explainers.shap_explainer.ShapExplainer`'s parameters of those names.

    ``_not_tree`` (internal) is the reason the exact tree path was not used, when it was tried and refused.

    Raises
    ------
    ValueError
        If ``algorithm="exact"`` exceeds its budget.
    """
    a, bg = adapter, background
    # Linear SHAP explains the margin of the last class only: another class falls back to sampling
    margin_ok = a.task != "multiclass" and want == a.output_names[-1]
    tree = a.tree_view() if algorithm in ("auto", "tree") and not _not_tree else None
    view, margin, groups, kind = None, False, None, _not_tree
    players, names = "raw columns", a.feature_names
    grouped = tree is not None and not np.array_equal(tree.groups, np.arange(len(names)))
    own = tree is not None and supports(tree.model) and a.kind in ("probability", "raw")
    refused = tree_shap_refusal(tree.model) if tree is not None and not own else None
    if refused:
        tree, kind = None, f"(TreeExplainer not used: {refused}) "
    if own:
        chosen, view = "tree", tree
        players_grouped = grouped and space == "raw_shapley"
        try:
            explainer = TreeShap(tree.model, tree.transform(bg), groups=tree.groups if players_grouped else None)
        except ValueError as exc:  # a forest too large for the exact path: sampled, and the method line says why
            return select_backend(adapter, background, algorithm=algorithm, space=space, n=n, want=want, seed=seed,
                                  rel_tol=rel_tol, max_orderings=max_orderings,
                                  _not_tree=f"(exact Tree SHAP not used: {exc}) ")
        output_space = {"probability": "probability", "raw": "raw"}.get(explainer.output, "log_odds")
        if explainer.output == "margin" and len(explainer.expected_value) > 1:
            output_space = "raw"  # per-class scores before the softmax: no one class's log-odds
        if grouped and space == "raw":
            groups = tree.groups
            players = "transformed features (raw column value = sum of one-hot children's SHAP values)"
        elif players_grouped:
            players = "raw columns (a column's one-hot children move together)"
        elif grouped:
            names, players = tree.names, "transformed features"
        kind = own_tree_kind(explainer, len(tree.groups), groups is not None, players_grouped)
    elif tree is not None and grouped and space == "raw_shapley":
        tree = None  # the signed sum is not the raw column's Shapley value: enumerate or sample
    elif tree is not None:
        import shap  # only here and for linear models: Candor's own Tree SHAP needs none of it (2 s, 80 MB)

        out = "probability" if a.kind == "probability" else "raw"
        try:
            explainer = shap.TreeExplainer(tree.model, data=tree.transform(bg),
                                           feature_perturbation="interventional", model_output=out)
            chosen, output_space = "tree", ("probability" if out == "probability" else "raw")
            view = tree
            if grouped and space == "raw":
                groups = tree.groups
                players = "transformed features (raw column value = sum of one-hot children's SHAP values)"
            elif grouped:
                names, players = tree.names, "transformed features"
            kind = "TreeExplainer, interventional" + (
                f", {len(tree.groups)} transformed features summed per raw column (signed): a raw "
                "column's value is the sum of its one-hot children's SHAP values, not the Shapley value of "
                "the column"
                if groups is not None else "")
        except Exception as exc:  # shap refuses e.g. multiclass GradientBoosting: fall back, say so
            tree, kind = None, f"(TreeExplainer refused: {str(exc)[:80]}) "
    lin = linear_pipeline_view(a) if algorithm in ("auto", "linear") and tree is None and margin_ok else None
    if tree is not None:
        pass
    elif algorithm in ("auto", "linear") and is_linear_model(a.model) and margin_ok and not a.codec.categorical:
        import shap

        explainer = shap.LinearExplainer(a.model, shap.maskers.Independent(a.raw(bg), max_samples=n))
        margin = a.task != "regression"
        chosen = "linear"
        output_space = "log_odds" if margin else "raw"
        kind = "LinearExplainer (margin), independent masker"
    elif lin is not None:
        import shap

        view = lin
        explainer = shap.LinearExplainer(lin.model, shap.maskers.Independent(lin.transform(bg), max_samples=n))
        margin, chosen = a.task != "regression", "linear"
        output_space = "log_odds" if margin else "raw"
        if space == "transformed":
            names, players = lin.names, "transformed features"
        else:
            groups = lin.groups
        kind = (f"LinearExplainer (margin) on the Pipeline's {len(lin.groups)} transformed features, "
                "independent masker" + ("" if space == "transformed" else
                                        "; summed per raw column, which is the exact Shapley value of "
                                        "the raw column (the margin is additive in raw columns)"))
    elif algorithm == "kernel":
        explainer = kernel_explainer(a.outputs, bg, seed)
        chosen, output_space = "kernel", a.output_space
        kind += (f"KernelExplainer, background summarised by k-means to {min(KMEANS_K, len(bg))} rows; "
                 f"mean of {KERNEL_REPEATS} seeded runs, standard error = their spread / "
                 f"sqrt({KERNEL_REPEATS})")
    elif algorithm == "exact" or (space == "raw_shapley" and algorithm == "auto"
                                  and exact_fits(len(a.feature_names), n)):
        d = len(a.feature_names)
        if not exact_fits(d, n):
            raise ValueError(f"exact Shapley values of {d} columns over {n} background rows need "
                             f"{2 ** d * n:,} model rows; the budget is {EXACT_MAX_MODEL_ROWS:,} rows and "
                             f"{EXACT_MAX_PLAYERS} columns")
        explainer = None
        chosen, output_space = "exact", a.output_space
        kind += (f"exact Shapley values, all {2 ** d:,} coalitions of the {d} raw columns enumerated "
                 "(Shapley 1953), independent masker")
    else:
        explainer = None
        chosen, output_space = "permutation", a.output_space
        kind += (f"permutation SHAP (antithetic orderings until every standard error is at most "
                 f"{pct(rel_tol)} of |f(x) − base| or 0.1 % of f's standard deviation over the "
                 f"background, at most {max_orderings} orderings; Štrumbelj & Kononenko 2014), "
                 "independent masker, raw feature space")
    return Backend(chosen, output_space, explainer, kind, players, names, tree, view, margin, groups)
