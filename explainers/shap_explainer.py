"""SHAP attributions for scikit-learn models (Lundberg & Lee 2017, arXiv 1705.07874).

Backend dispatch follows docs/methods.md, "SHAP": exact interventional Tree
SHAP for tree ensembles (Lundberg et al. 2020, arXiv 1905.04610) — also the
final tree of a Pipeline, explained in its transformed space and grouped back
to raw columns by a signed sum per row — Linear SHAP for plain linear models,
and the model-agnostic Permutation explainer (or Kernel, on request) in the raw
feature space otherwise. Internally every backend yields values of shape
(n_rows, n_features, n_outputs) with explicit output names (class labels), so
multiclass values are never mistaken for interaction values.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import shap

from ._codec import TabularCodec
from ._grouping import group_signed_sum
from ._permutation import n_permutations, permutation_shap
from .model_adapter import ModelAdapter, OutputAttributions, OutputView
from .model_kinds import is_linear_model, is_tree_model
from .types import Explanation, GlobalImportance

__all__ = ["ShapExplainer", "estimate_cost"]

KMEANS_K = 20


def permutation_evals(n_features: int) -> int:
    """Coalitions evaluated per row by permutation SHAP (each against every background row)."""
    return n_permutations(n_features) * (n_features + 1)


def estimate_cost(n_features: int, n_background: int, algorithm: str, n_outputs: int = 1) -> dict:
    """Model evaluations and peak memory of explaining one row, before the job starts.

    Returns
    -------
    dict
        ``model_rows_per_row`` (rows the model predicts per explained row) and
        ``memory_mb`` (float64 masked rows held at once, in MiB; permutation SHAP calls the model on
        at most 20,000 rows at a time, :func:`explainers._permutation.permutation_shap`).
    """
    evals = {"permutation": permutation_evals(n_features), "kernel": 2 * n_features + 2048}.get(algorithm, 1)
    rows = evals * n_background
    if algorithm == "permutation":
        walk = rows // max(1, n_permutations(n_features))
        batch = min(walk, max(n_background, 20_000 // max(1, n_background) * n_background))
    else:
        batch = rows
    mem = batch * (n_features + n_outputs) * 8 / 2**20 if algorithm in ("permutation", "kernel") \
        else n_background * n_features * 8 / 2**20
    return {"model_rows_per_row": int(rows), "memory_mb": round(float(mem), 1)}


class ShapExplainer:
    """SHAP attributions of one explained output (a class probability, a margin or a regression output).

    Parameters
    ----------
    model : fitted classifier with ``predict_proba``, or a ModelAdapter / OneVsRest
        A bare model must give probabilities; wrap it in
        :class:`~explainers.model_adapter.ModelAdapter` to explain margins,
        labels, regressors, Pipelines or non-numeric columns.
    background : DataFrame of shape (n_background_rows, n_features)
        Rows the expectations are taken over (encoded rows for an adapter);
        ``background_size`` rows are sampled from it with ``seed``.
    target_index : int, default=1
        Index of the explained output among the model's outputs (class order).
    target_name : str, default="class 1"
    background_size : int, default=100
    seed : int, default=0
    algorithm : {"auto", "tree", "linear", "permutation", "kernel"}, default="auto"
        ``kernel`` summarises the background with k-means (20 weighted centroids).
    space : {"raw", "transformed"}, default="raw"
        For a Pipeline ending in a tree: group one-hot children back to raw
        columns (default) or keep the transformed features.

    Raises
    ------
    TypeError
        If a bare ``model`` has no ``predict_proba``.
    """

    def __init__(self, model, *, background: pd.DataFrame, target_index: int = 1, target_name: str = "class 1",
                 background_size: int = 100, seed: int = 0, algorithm: str = "auto", space: str = "raw") -> None:
        if isinstance(model, OutputView):  # incl. OneVsRest
            adapter, want = model.adapter, model.adapter.output_names[model.index]
        elif isinstance(model, ModelAdapter):
            adapter, want = model, model.output_names[min(target_index, len(model.output_names) - 1)]
        else:
            if not hasattr(model, "predict_proba"):
                raise TypeError(f"{type(model).__name__} has no predict_proba; SHAP needs class probabilities "
                                "(wrap it in explainers.ModelAdapter to explain margins)")
            adapter = ModelAdapter(model, TabularCodec(background))
            want = adapter.output_names[target_index]
        self.model, self.adapter, self.seed = model, adapter, seed
        self.feature_names = adapter.feature_names
        n = min(background_size, len(background))
        self.background = background.sample(n=n, random_state=seed) if len(background) > n else background
        self.target_name, self._columns = target_name, background.columns
        self._init_backend(algorithm, space, n)
        self.cost = estimate_cost(len(self.feature_names), n if self.algorithm != "kernel" else KMEANS_K,
                                  self.algorithm, len(self.output_names))
        self.params = {"background_size": n, "background_rows_given": len(background), "seed": seed,
                       "algorithm": self.algorithm, "space": space, **self.cost}
        if want not in self.output_names:
            raise ValueError(f"output {want!r} is not explained by this backend (outputs: {self.output_names})")
        self.target_index = self.output_names.index(want)
        self.units = self._units[self.target_index]
        summary = "" if len(background) <= n else f" sampled from {len(background)}"
        self.source = (f"SHAP {shap.__version__} {self._kind}, {n} background rows{summary} (seed {seed}); "
                       f"units: {self.units}")

    def _init_backend(self, algorithm: str, space: str, n: int) -> None:
        a, bg = self.adapter, self.background
        self._tree = a.tree_view() if algorithm in ("auto", "tree") else None
        self._margin, self._groups, self._kind = False, None, ""
        if self._tree is not None:
            out = "probability" if a.kind == "probability" else "raw"
            try:
                self._backend = shap.TreeExplainer(self._tree.model, data=self._tree.transform(bg),
                                                   feature_perturbation="interventional", model_output=out)
                self.algorithm, self.output_space = "tree", ("probability" if out == "probability" else "raw")
                grouped = not np.array_equal(self._tree.groups, np.arange(len(self.feature_names)))
                if grouped and space == "raw":
                    self._groups = self._tree.groups
                elif grouped:
                    self.feature_names = self._tree.names
                self._kind = "TreeExplainer, interventional" + (
                    f", {len(self._tree.groups)} transformed features summed per raw column (signed)"
                    if self._groups is not None else "")
            except Exception as exc:  # shap refuses e.g. multiclass GradientBoosting: fall back, say so
                self._tree, self._kind = None, f"(TreeExplainer refused: {str(exc)[:80]}) "
        if self._tree is not None:
            pass
        elif algorithm in ("auto", "linear") and is_linear_model(a.model) and a.task != "multiclass" \
                and not a.codec.categorical:
            self._backend = shap.LinearExplainer(a.model, shap.maskers.Independent(a.raw(bg), max_samples=n))
            self._margin = a.task != "regression"
            self.algorithm = "linear"
            self.output_space = "log_odds" if self._margin else "raw"
            self._kind = "LinearExplainer (margin), independent masker"
        elif algorithm == "kernel":
            summary = shap.kmeans(bg.to_numpy(dtype=float), min(KMEANS_K, len(bg)))
            self._backend = shap.KernelExplainer(a.outputs, summary, seed=self.seed)
            self.algorithm, self.output_space = "kernel", a.output_space
            self._kind += f"KernelExplainer, background summarised by k-means to {min(KMEANS_K, len(bg))} rows"
        else:
            self._backend = None
            self.algorithm, self.output_space = "permutation", a.output_space
            self._kind += (f"permutation SHAP ({n_permutations(len(a.feature_names))} antithetic orderings, "
                           "Štrumbelj & Kononenko 2014), independent masker, raw feature space")
        probe = self._explained_outputs(bg.iloc[:1])
        k = probe.shape[1]
        self.output_names = tuple(a.output_names[-k:]) if len(a.output_names) >= k else tuple(a.output_names)
        self._units = tuple(
            f"log-odds of class {c!r}" if self._margin else a.units(a.output_names.index(c)) for c in self.output_names)
        self.units = self._units[-1]

    def _explained_outputs(self, X: pd.DataFrame) -> np.ndarray:
        """The outputs the backend decomposes, shape (n_rows, n_explained_outputs)."""
        a = self.adapter
        if self._margin:
            return np.asarray(a.model.decision_function(a.raw(X)), dtype=float).reshape(len(X), -1)[:, -1:]
        out = a.outputs(X)
        if self._tree is not None and out.shape[1] == 2 and a.task == "binary" and \
                np.ndim(self._backend.expected_value) == 0:
            return out[:, 1:]
        return out

    def _values3(self, X: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, int]:
        """Values (n_rows, n_features, n_outputs), base values (n_outputs,) and the rows recomputed.

        The explainer's ``params`` never change after ``__init__``: what one call did (rows whose
        Tree SHAP was redone) is returned with that call's result, never accumulated on ``self``.
        """
        recomputed = 0
        if self.algorithm == "permutation":
            bg, n_perm = self.background.to_numpy(dtype=float), n_permutations(len(self.adapter.feature_names))
            pairs = [permutation_shap(self.adapter.outputs, row, bg, n_perm=n_perm, seed=self.seed)
                     for row in X.to_numpy(dtype=float)]
            vals, base = np.stack([p[0] for p in pairs]), pairs[0][1]
        elif self.algorithm == "kernel":
            vals = np.asarray(self._backend.shap_values(X.to_numpy(dtype=float), silent=True), dtype=float)
            base = np.asarray(self._backend.expected_value, dtype=float).ravel()
        else:
            inputs = self._tree.transform(X) if self._tree is not None else self.adapter.raw(X)
            vals = np.asarray(self._backend.shap_values(inputs), dtype=float)
            base = np.asarray(self._backend.expected_value, dtype=float).ravel()
        if vals.ndim == 2:
            vals = vals[:, :, None]
        if self._groups is not None:
            vals = group_signed_sum(vals, self._groups, len(self.adapter.feature_names))
        if self.algorithm == "tree" and len(self.feature_names) == X.shape[1]:
            vals, recomputed = self._repair_tree_rows(X, vals, base)
        return vals, base, recomputed

    def _repair_tree_rows(self, X: pd.DataFrame, vals: np.ndarray, base: np.ndarray) -> tuple[np.ndarray, int]:
        """Recompute rows where Tree SHAP is not additive with permutation SHAP (exactly additive).

        shap 0.51's tree traversal disagrees with scikit-learn's on a few random
        forests (gaps of one tree's vote, e.g. 1/30); those rows are redone in the
        raw space; their count is returned (the result's ``params["tree_rows_recomputed"]``).
        """
        gap = np.abs(base + vals.sum(axis=1) - self._explained_outputs(X)).max(axis=1)
        bad = np.flatnonzero(gap > 1e-6)
        if bad.size:
            bg, n_perm = self.background.to_numpy(dtype=float), n_permutations(len(self.feature_names))
            k = vals.shape[2]
            f = lambda Z: self._explained_outputs(pd.DataFrame(Z, columns=X.columns))[:, -k:]  # noqa: E731
            vals = vals.copy()
            for i in bad:
                v, b = permutation_shap(f, X.to_numpy(dtype=float)[i], bg, n_perm=n_perm, seed=self.seed)
                vals[i] = v  # additive around the background mean, which equals the tree base value
        return vals, int(bad.size)

    def explain_outputs(self, X: pd.DataFrame) -> OutputAttributions:
        """Attributions of every row of ``X`` for every explained output.

        Returns
        -------
        OutputAttributions
            ``values`` of shape (n_rows, n_features, n_outputs), output names are the class labels.
        """
        vals, base, recomputed = self._values3(X)
        return OutputAttributions(self.feature_names, vals, base, self.output_names, self.output_space,
                                  self._units, self.source, {**self.params, "tree_rows_recomputed": recomputed})

    def explain_many(self, X: pd.DataFrame) -> GlobalImportance:
        """Attributions for every row of ``X`` for the target output.

        Parameters
        ----------
        X : DataFrame of shape (n_rows, n_features)

        Returns
        -------
        GlobalImportance
            ``values`` of shape (n_rows, n_features) in ``output_space`` units.
        """
        vals, base, _ = self._values3(X)
        fv = self._tree.transform(X) if self._tree is not None and len(self.feature_names) != X.shape[1] else X
        return GlobalImportance(self.feature_names, vals[:, :, self.target_index], np.asarray(fv, dtype=float),
                                float(base[self.target_index]), self.output_space, self.target_name, self.source)

    def explain(self, x: pd.DataFrame) -> Explanation:
        """Attribution of one row (a one-row DataFrame).

        Returns
        -------
        Explanation
            ``values`` of shape (n_features,); ``additivity_gap`` is reported.

        Raises
        ------
        ValueError
            If ``x`` does not have exactly one row.
        """
        if len(x) != 1:
            raise ValueError(f"explain takes one row, got {len(x)}")
        vals, base, recomputed = self._values3(x)
        return self.from_row(x, vals[0, :, self.target_index], float(base[self.target_index]),
                             tree_rows_recomputed=recomputed)

    def from_row(self, x: pd.DataFrame, values: np.ndarray, base_value: float, *,
                 tree_rows_recomputed: int = 0) -> Explanation:
        """Wrap precomputed attributions of the one-row frame ``x`` as an :class:`Explanation`."""
        fv = x.to_numpy(dtype=float)[0]
        if len(self.feature_names) != fv.size:
            fv = np.asarray(self._tree.transform(x), dtype=float)[0]
        labels = self.adapter.codec.labels(x.to_numpy(dtype=float)[0]) if fv.size == x.shape[1] else ()
        return Explanation(
            method="shap", feature_names=self.feature_names, values=values, base_value=base_value,
            prediction=float(self._explained_outputs(x)[0, self.target_index]), feature_values=fv,
            output_space=self.output_space, target=self.target_name, source=self.source,
            params={**self.params, "units": self.units, "feature_labels": labels,
                    "tree_rows_recomputed": tree_rows_recomputed},
        )
