"""SHAP attributions for scikit-learn models (Lundberg & Lee 2017, arXiv 1705.07874).

Backend dispatch follows docs/methods.md, "SHAP": exact interventional Tree
SHAP for tree ensembles (Lundberg et al. 2020, arXiv 1905.04610) — also the
final tree of a Pipeline, explained in its transformed space and grouped back
to raw columns as the sum of the one-hot children's SHAP values — Linear SHAP
for linear models, plain or at the end of a Pipeline whose steps act column by
column (there the grouped sum *is* the raw column's Shapley value: the margin is
additive in raw columns), and the model-agnostic permutation estimate, run
until its standard errors meet a stated tolerance (or Kernel, on request) in
the raw feature space otherwise. ``space="raw_shapley"`` asks for Shapley
values with raw columns as players where the default is not already that:
exact enumeration of every coalition when it fits the budget, else the
converged permutation estimate. Internally every backend yields values of shape
(n_rows, n_features, n_outputs) with explicit output names (class labels), so
multiclass values are never mistaken for interaction values, and standard
errors of the same shape (0 for exact backends).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ._grouping import group_signed_sum
from ._permutation import MAX_ORDERINGS, REL_TOL, permutation_shap_rows
from ._shap_backends import select_backend
from ._shapley_exact import exact_shapley
from ._shapley_kernel import KMEANS_K, repeated_kernel_shap
from ._shapley_support import estimate_cost, pct, permutation_evals  # noqa: F401
from .model_adapter import ModelAdapter, OutputAttributions
from .numbers import plain
from .tree_shap import TreeShap
from .types import Explanation, GlobalImportance

__all__ = ["ShapExplainer", "estimate_cost"]


def _shap_version() -> str:
    """shap's version for method lines, read from its metadata (importing shap costs 2 s and 80 MB)."""
    from importlib.metadata import version

    return version("shap")

REPAIR_GAP = 1e-4
"""Tree SHAP rows whose values miss ``f(x) - base`` by more than this (output units) are redone by
permutation SHAP. shap 0.51 misses by one tree's vote on a few forests (1/30, 1/200); float32 split
thresholds leave every row of some forests 5e-5 off, far below any shown digit, and are left alone. Regression
trees fitted with unequal sample weights never get here: their Tree SHAP values are wrong even where they add up,
so they are not explained by Tree SHAP at all (:func:`explainers.model_kinds.tree_shap_refusal`)."""


class ShapExplainer:
    """SHAP attributions of one explained output (a class probability, a margin or a regression output).

    Parameters
    ----------
    adapter : ModelAdapter
        The model behind :class:`~explainers.model_adapter.ModelAdapter` (its task, outputs, units and
        codec): ``ModelAdapter.for_table(model, X)`` for a model fitted on the numeric table ``X``; a
        dashboard's :class:`~explainers.model_adapter.OutputView` gives its ``adapter`` and ``index``.
    background : DataFrame of shape (n_background_rows, n_features)
        Encoded rows the expectations are taken over; ``background_size`` rows are sampled from it
        with ``seed`` (``DataFrame.sample``).
    background_rows : ndarray of int, optional
        Positions in ``background`` of the rows to sample from (a table's training rows): the same rows as
        ``background.iloc[background_rows]`` would give, without copying them all (Adult's 24,420 training rows: a
        21 MB copy at start for 100 rows kept). Default: every row.
    target_index : int, default=1
        Index of the explained output among the adapter's outputs (class order; the last output when
        the adapter has fewer, e.g. a regressor or a binary margin).
    target_name : str, default="class 1"
    background_size : int, default=100
    seed : int, default=0
    algorithm : {"auto", "tree", "linear", "permutation", "kernel", "exact"}, default="auto"
        ``kernel`` summarises the background with k-means (20 weighted centroids) and reports the
        mean of 4 seeded runs with their spread / 2 as standard error; ``exact``
        enumerates every coalition of the raw columns (at most 14 of them, and
        ``2**n_features * background_size`` model rows at most 2,000,000).
    space : {"raw", "transformed", "raw_shapley"}, default="raw"
        For a Pipeline ending in a tree: report the sum of each raw column's one-hot children's
        SHAP values (``"raw"``, fast, additive, but not the column's Shapley value when the model
        has interactions), keep the transformed features, or compute Shapley values with raw
        columns as players (``"raw_shapley"``: exact enumeration when it fits the budget above,
        else the converged permutation estimate with its standard errors).
    rel_tol : float, default=0.0025
        Permutation SHAP runs until every standard error (of the target output) is at most
        ``max(rel_tol * |f(x) - base|, 0.001 * std of f over the background)``, output units.
    max_orderings : int, default=512
        Budget of permutation SHAP orderings per row.
    time_budget_s : float, optional
        Also stop permutation SHAP for a row after this many seconds (the values then depend on the
        machine's speed).

    Raises
    ------
    TypeError
        If ``adapter`` is not a :class:`~explainers.model_adapter.ModelAdapter` (a bare model, a view).
    ValueError
        If ``space`` or ``algorithm`` is unknown, or ``algorithm="exact"`` exceeds its budget.
    """

    def __init__(self, adapter: ModelAdapter, *, background: pd.DataFrame, target_index: int = 1,
                 target_name: str = "class 1", background_size: int = 100, seed: int = 0, algorithm: str = "auto",
                 space: str = "raw", rel_tol: float = REL_TOL, max_orderings: int = MAX_ORDERINGS,
                 time_budget_s: float | None = None, background_rows: np.ndarray | None = None) -> None:
        if space not in ("raw", "transformed", "raw_shapley"):
            raise ValueError(f"space must be 'raw', 'transformed' or 'raw_shapley', got {space!r}")
        if algorithm not in ("auto", "tree", "linear", "permutation", "kernel", "exact"):
            raise ValueError(f"unknown SHAP algorithm {algorithm!r}")
        if not isinstance(adapter, ModelAdapter):
            raise TypeError(f"SHAP explains a ModelAdapter, got {type(adapter).__name__}; wrap a fitted model as "
                            "ModelAdapter.for_table(model, X) (a view: pass view.adapter, target_index=view.index)")
        want = adapter.output_names[min(target_index, len(adapter.output_names) - 1)]
        self.adapter, self.seed = adapter, seed
        self.rel_tol, self.max_orderings, self.time_budget_s = float(rel_tol), int(max_orderings), time_budget_s
        self.feature_names = adapter.feature_names
        rows = np.arange(len(background)) if background_rows is None else np.asarray(background_rows, dtype=np.intp)
        given = len(rows)
        n = min(background_size, given)
        if given > n:  # DataFrame.sample's positions (pandas' own draw, on a Series of positions: no copy of the rows)
            rows = rows[pd.Series(np.arange(given)).sample(n=n, random_state=seed).to_numpy()]
        self.background = background if background_rows is None and given <= n else background.iloc[rows]
        self.target_name, self._columns = target_name, background.columns
        self._init_backend(algorithm, space, n, want)
        self.cost = estimate_cost(len(self.feature_names), n if self.algorithm != "kernel" else KMEANS_K,
                                  self.algorithm, len(self.output_names))
        self.params = {"background_size": n, "background_rows_given": given, "seed": seed,
                       "algorithm": self.algorithm, "space": space, "players": self.players, **self.cost}
        if self.algorithm == "permutation":
            self.params.update(rel_tol=self.rel_tol, max_orderings=self.max_orderings)
        if want not in self.output_names:
            raise ValueError(f"output {want!r} is not explained by this backend (outputs: {self.output_names})")
        self.target_index = self.output_names.index(want)
        self.units = self._units[self.target_index]
        summary = "" if given <= n else f" sampled from {given}"
        self._tail = f"{n} background rows{summary} (seed {seed}); units: {self.units}"
        made_by = "SHAP (Candor)" if isinstance(self._backend, TreeShap) else f"SHAP {_shap_version()}"
        self.source = f"{made_by} {self._kind}, {self._tail}"

    @property
    def sums_children(self) -> bool:
        """True when a raw column's value is the sum of its one-hot children's SHAP values (a tree Pipeline,
        ``space="raw"``): not the raw column's Shapley value; ``space="raw_shapley"`` computes that."""
        return self._groups is not None and self.algorithm == "tree"

    @property
    def exact(self) -> bool:
        """True when the values are exact (standard error 0): tree, linear and enumeration backends."""
        return self.algorithm in ("tree", "linear", "exact")

    def _init_backend(self, algorithm: str, space: str, n: int, want: str) -> None:
        """Take the backend :func:`~explainers._shap_backends.select_backend` chooses, and the outputs it explains."""
        a, b = self.adapter, select_backend(self.adapter, self.background, algorithm=algorithm, space=space, n=n,
                                            want=want, seed=self.seed, rel_tol=self.rel_tol,
                                            max_orderings=self.max_orderings)
        self._backend, self._tree, self._view = b.explainer, b.tree, b.view
        self._margin, self._groups = b.margin, b.groups
        self.algorithm, self.output_space, self._kind, self.players = b.algorithm, b.output_space, b.kind, b.players
        self.feature_names = b.feature_names
        probe = self._explained_outputs(self.background.iloc[:1])
        k = probe.shape[1]
        self.output_names = tuple(a.output_names[-k:]) if len(a.output_names) >= k else tuple(a.output_names)
        self._units = tuple(self._unit(c) for c in self.output_names)
        self.units = self._units[-1]

    @property
    def _own_margin(self) -> bool:
        """True when Candor's Tree SHAP explains a boosted classifier's margin (log-odds, or softmax scores)."""
        return isinstance(self._backend, TreeShap) and self._backend.output == "margin"

    def _unit(self, c: str) -> str:
        """What the values of output (class) ``c`` measure."""
        if self._margin or (self._own_margin and len(self._backend.expected_value) == 1):
            return f"log-odds of class {c!r}"
        if self._own_margin:
            return f"score of class {c!r} before the softmax (log-probability up to a per-row constant)"
        return self.adapter.units(self.adapter.output_names.index(c))

    def _explained_outputs(self, X: pd.DataFrame) -> np.ndarray:
        """The outputs the backend decomposes, shape (n_rows, n_explained_outputs), from the model itself.

        One row's outputs are kept until the next row is asked (an explanation needs them three times: the
        additivity check, the prediction, the probability beside), so the model is called once a row.
        """
        key = X.to_numpy().tobytes() if len(X) == 1 else None
        last = getattr(self, "_last_outputs", None)
        if key is not None and last is not None and last[0] == key:
            return last[1]
        out = self._model_outputs(X)
        if key is not None:
            self._last_outputs = (key, out)
        return out

    def _model_outputs(self, X: pd.DataFrame) -> np.ndarray:
        """:meth:`_explained_outputs`, computed."""
        a = self.adapter
        if self._margin or self._own_margin:
            m = np.asarray(a.decision_function(X), dtype=float).reshape(len(X), -1)
            if self._margin:  # Linear SHAP: the last class's margin
                return m[:, -1:]
            return np.hstack([-m, m]) if m.shape[1] == 1 else m  # binary: class 0's log-odds are -margin
        out = a.outputs(X)
        if self._tree is not None and out.shape[1] == 2 and a.task == "binary" and \
                not isinstance(self._backend, TreeShap) and np.ndim(self._backend.expected_value) == 0:
            return out[:, 1:]
        return out

    def _sampled(self, rows: np.ndarray, f, rel_tol: float | None, judge: int | None):
        """Permutation SHAP of each row: values, base, standard errors (n, d, k) and per-row sampling facts."""
        return permutation_shap_rows(f, rows, self.background.to_numpy(dtype=float),
                                     rel_tol=self.rel_tol if rel_tol is None else rel_tol,
                                     max_orderings=self.max_orderings, time_budget_s=self.time_budget_s,
                                     seed=self.seed, judge=None if judge is None else (judge,))

    def _values3(self, X: pd.DataFrame, rel_tol: float | None = None):
        """Values and standard errors (n_rows, n_features, n_outputs), base values (n_outputs,), sampling facts.

        ``info`` holds per-row ``converged`` (and for sampled rows ``orderings``, ``tolerance``); the
        rows whose Tree SHAP was redone are counted in ``info["tree_rows_recomputed"]``. The
        explainer's ``params`` never change after ``__init__``: what one call did is returned with
        that call's result, never accumulated on ``self``.
        """
        n = len(X)
        info = {"converged": np.ones(n, bool), "tree_rows_recomputed": 0}
        judge = getattr(self, "target_index", None)
        if self.algorithm == "permutation":
            vals, base, se, sampled = self._sampled(X.to_numpy(dtype=float), self.adapter.outputs, rel_tol, judge)
            info.update(sampled)
        elif self.algorithm == "exact":
            bg = self.background.to_numpy(dtype=float)
            res = [exact_shapley(self.adapter.outputs, row, bg) for row in X.to_numpy(dtype=float)]
            vals, base = np.stack([r[0] for r in res]), res[0][1]
            se = np.zeros_like(vals)
        elif self.algorithm == "kernel":
            vals, base, se, info["converged"] = repeated_kernel_shap(
                self._backend, X.to_numpy(dtype=float), seed=self.seed,
                rel_tol=self.rel_tol if rel_tol is None else rel_tol, judge=judge)
        elif isinstance(self._backend, TreeShap):
            vals, base = self._backend.shap_values(self._view.transform(X)), self._backend.expected_value
            if self._own_margin and vals.shape[2] == 1:  # binary margin: class 0's values are the negatives
                vals, base = np.concatenate([-vals, vals], axis=2), np.concatenate([-base, base])
            se = None
        else:
            inputs = self._view.transform(X) if self._view is not None else self.adapter.raw(X)
            # shap's own additivity check raises on a whole table when one row misses; rows that miss are
            # redone below (_repair_tree_rows), as they are for one row
            checked = {"check_additivity": False} if self.algorithm == "tree" else {}
            vals = np.asarray(self._backend.shap_values(inputs, **checked), dtype=float)
            base = np.asarray(self._backend.expected_value, dtype=float).ravel()
            se = None
        if vals.ndim == 2:
            vals = vals[:, :, None]
        if self._groups is not None:
            vals = group_signed_sum(vals, self._groups, len(self.adapter.feature_names))
        if se is None or np.ndim(se) == 0:
            se = np.full(vals.shape, 0.0 if se is None else se)
        if self.algorithm == "tree" and len(self.feature_names) == X.shape[1]:
            vals, se, info = self._repair_tree_rows(X, vals, se, base, info, rel_tol)
        return vals, base, se, info

    def _repair_tree_rows(self, X: pd.DataFrame, vals, se, base, info, rel_tol: float | None = None):
        """Recompute rows where Tree SHAP is not additive with permutation SHAP (exactly additive).

        shap 0.51's tree traversal disagrees with scikit-learn's on a few random
        forests (gaps of one tree's vote, e.g. 1/30); those rows are redone in the
        raw space, to the explainer's tolerance, with their standard errors; their count is
        returned (the result's ``params["tree_rows_recomputed"]``).
        """
        gap = np.abs(base + vals.sum(axis=1) - self._explained_outputs(X)).max(axis=1)
        bad = np.flatnonzero(gap > REPAIR_GAP)
        if bad.size:
            k = vals.shape[2]
            f = lambda Z: self._explained_outputs(pd.DataFrame(Z, columns=X.columns))[:, -k:]  # noqa: E731
            v, _, s, sampled = self._sampled(X.to_numpy(dtype=float)[bad], f, rel_tol,
                                             getattr(self, "target_index", None))
            vals, se = vals.copy(), se.copy()
            vals[bad], se[bad] = v, s  # additive around the background mean, which equals the tree base value
            info = {**info, "converged": info["converged"].copy()}
            info["converged"][bad] = sampled["converged"]
            orderings = np.zeros(len(X), int)
            orderings[bad] = sampled["orderings"]
            info["orderings"] = orderings
        info["tree_rows_recomputed"] = int(bad.size)
        return vals, se, info

    def explain_outputs(self, X: pd.DataFrame) -> OutputAttributions:
        """Attributions of every row of ``X`` for every explained output.

        Returns
        -------
        OutputAttributions
            ``values`` of shape (n_rows, n_features, n_outputs), output names are the class labels;
            ``params["standard_error"]`` the same shape (0 for exact backends),
            ``params["converged"]`` a tuple of bools per row (judged on the target output).
        """
        vals, base, se, info = self._values3(X)
        extra = {"tree_rows_recomputed": info["tree_rows_recomputed"], "standard_error": se,
                 "converged": tuple(bool(c) for c in info["converged"])}
        if info.get("orderings") is not None:
            extra["orderings"] = tuple(int(o) for o in info["orderings"])
        return OutputAttributions(self.feature_names, vals, base, self.output_names, self.output_space,
                                  self._units, self.source, {**self.params, **extra})

    def explain_many(self, X: pd.DataFrame, *, rel_tol: float | None = None) -> GlobalImportance:
        """Attributions for every row of ``X`` for the target output.

        Parameters
        ----------
        X : DataFrame of shape (n_rows, n_features)
        rel_tol : float, optional
            Permutation SHAP's tolerance for these rows (e.g. looser for a global view); default the
            explainer's.

        Returns
        -------
        GlobalImportance
            ``values`` of shape (n_rows, n_features) in ``output_space`` units, ``standard_error``
            the same shape (0 for exact backends).
        """
        vals, base, se, info = self._values3(X, rel_tol)
        fv = self._view.transform(X) if self._view is not None and len(self.feature_names) != X.shape[1] else X
        redone = info["tree_rows_recomputed"]
        source = self.source + (f"; {redone:,} of {len(X):,} rows recomputed by permutation SHAP (TreeExplainer's "
                                f"values for them missed f(x) − base by more than {plain(REPAIR_GAP)})" if redone else "")
        return GlobalImportance(self.feature_names, vals[:, :, self.target_index], np.asarray(fv, dtype=float),
                                float(base[self.target_index]), self.output_space, self.target_name, source,
                                standard_error=se[:, :, self.target_index])

    def explain(self, x: pd.DataFrame) -> Explanation:
        """Attribution of one row (a one-row DataFrame).

        Returns
        -------
        Explanation
            ``values`` of shape (n_features,); ``additivity_gap`` is reported;
            ``params["standard_error"]`` (tuple, one float per feature, output units, 0.0 when
            exact), ``params["converged"]`` (bool) and, when sampled, ``params["orderings"]`` and
            ``params["tolerance"]`` (output units).

        Raises
        ------
        ValueError
            If ``x`` does not have exactly one row.
        """
        if len(x) != 1:
            raise ValueError(f"explain takes one row, got {len(x)}")
        vals, base, se, info = self._values3(x)
        t = self.target_index
        extra = {"converged": bool(info["converged"][0])}
        if info.get("orderings") is not None and int(info["orderings"][0]):
            extra["orderings"] = int(info["orderings"][0])
        if "tolerance" in info:
            extra["tolerance"] = float(info["tolerance"][0][t])
        return self.from_row(x, vals[0, :, t], float(base[t]), tree_rows_recomputed=info["tree_rows_recomputed"],
                             standard_error=se[0, :, t], **extra)

    def from_row(self, x: pd.DataFrame, values: np.ndarray, base_value: float, *,
                 tree_rows_recomputed: int = 0, standard_error=None, **sampling) -> Explanation:
        """Wrap precomputed attributions of the one-row frame ``x`` as an :class:`Explanation`.

        ``standard_error`` defaults to zeros for exact backends and NaN (unknown) otherwise;
        ``sampling`` (``converged``, ``orderings``, ``tolerance``) goes into ``params``.
        """
        fv = x.to_numpy(dtype=float)[0]
        if len(self.feature_names) != fv.size:
            fv = np.asarray(self._view.transform(x), dtype=float)[0]
        labels = self.adapter.codec.labels(x.to_numpy(dtype=float)[0]) if fv.size == x.shape[1] else ()
        if standard_error is None:
            standard_error = np.zeros(len(values)) if self.exact else np.full(len(values), np.nan)
        sampling.setdefault("converged", self.exact)
        se = np.asarray(standard_error, dtype=float)
        if self._own_margin and self.adapter.kind == "probability":  # the log-odds' probability, shown beside
            margin = self._explained_outputs(x)[0]
            if margin.size == 2:  # scikit-learn's boosted binary classifiers: P = logistic(log-odds)
                p = 1.0 / (1.0 + np.exp(-margin[self.target_index]))
            else:  # per-class scores: the softmax
                z = np.exp(margin - margin.max())
                p = z[self.target_index] / z.sum()
            sampling.setdefault("probability", float(p))
        # a Tree SHAP row redone by permutation SHAP (:meth:`_repair_tree_rows`): its only errors > 0
        redone = self.algorithm == "tree" and (tree_rows_recomputed > 0 or bool(np.any(se > 0)))
        row_kind = {"algorithm": "permutation", "recomputed_from": "tree"} if redone else {}
        return Explanation(
            method="shap", feature_names=self.feature_names, values=values, base_value=base_value,
            prediction=float(self._explained_outputs(x)[0, self.target_index]), feature_values=fv,
            output_space=self.output_space, target=self.target_name,
            source=self.redone_source() if redone else self.source,
            params={**self.params, **row_kind, "units": self.units, "feature_labels": labels,
                    "tree_rows_recomputed": max(int(tree_rows_recomputed), int(redone)),
                    "standard_error": tuple(float(s) for s in se), **sampling},
        )

    def redone_source(self) -> str:
        """The method line of a row whose Tree SHAP values were redone by permutation SHAP (not additive)."""
        return (f"SHAP {_shap_version()} permutation SHAP for this row (antithetic orderings until every standard "
                f"error is at most {pct(self.rel_tol)} of |f(x) − base| or 0.1 % of f's standard deviation over "
                f"the background, at most {self.max_orderings} orderings; Štrumbelj & Kononenko 2014), independent "
                f"masker, raw feature space: TreeExplainer's values for it missed f(x) − base by more than "
                f"{plain(REPAIR_GAP)}, so they were not shown, {self._tail}")
