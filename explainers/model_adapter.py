"""One interface over the user's model: task, explained outputs and their units, raw-space input.

:class:`ModelAdapter` takes *encoded* rows (see :class:`~explainers._codec.TabularCodec`),
decodes them to the table the model was fitted on (the user's column names and
dtypes) and returns a 2-D output matrix of shape (n_rows, n_outputs):

============ ======================== ===================================================
task          output kind              outputs
============ ======================== ===================================================
binary/multi  ``probability``          ``predict_proba``: one column per class
binary        ``margin``               ``decision_function``: one column, margin of classes_[1]
multiclass    ``margin``               ``decision_function`` (one-vs-rest): one column per class
binary/multi  ``label``                1 where ``predict`` returns the class, else 0, per class
regression    ``raw``                  ``predict``: one column
============ ======================== ===================================================

The task is decided once, here, from the fitted model. The adapter never fits
or mutates the model: it only calls ``predict*`` / ``decision_function`` /
``transform``; :meth:`fingerprint` lets callers check that after each job.

Every call of the model goes through :meth:`ModelAdapter.outputs` or :meth:`ModelAdapter.predict`,
which pass the rows in batches of at most :data:`BATCH_CELLS` input cells (bounding the memory of one
call) and, when the adapter's :class:`CallLimits` give a deadline, check the time between batches: a call
that has used up its time raises :class:`ModelTimeout` (or the error class the limits name) before
the next batch. Python cannot stop a running batch, so one batch that hangs is not interrupted; the
deadline bounds how long a call goes on after its time is up by the duration of one batch. Each adapter
carries its own limits (:meth:`ModelAdapter.limited`): nothing here is process-wide.
"""
from __future__ import annotations

import copy
import functools
import hashlib
import time
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ._array_input import ArrayInput
from ._call_limits import CallLimits, ModelFailed, ModelTimeout, _openmp_limited  # noqa: F401  (their home, re-exported)
from ._codec import TabularCodec
from ._forest_calls import model_call
from ._grouping import feature_groups
from ._one_hot_input import OneHotInput, shortcut_allowed, whole_pipeline
from .types._attribution import OutputAttributions
from .model_kinds import is_tree_model

__all__ = ["ModelAdapter", "OneVsRest", "OutputView", "TreeView", "OutputAttributions", "ModelTimeout",
           "ModelFailed", "CallLimits", "whole_pipeline"]

BATCH_CELLS = 2_000_000
"""Most input cells (rows x features) passed to the model in one call."""


NO_LIMITS = CallLimits()
"""An adapter's default :class:`CallLimits`: no deadline, the model's errors as :class:`ModelTimeout`/:class:`ModelFailed`,
OpenMP left as the calling thread has it."""


def _call(call, X, limits: CallLimits) -> np.ndarray:
    """``call(X)`` as an array; the model's exception as ``limits.failed`` (one line)."""
    try:
        return np.asarray(call(X))
    except limits.timeout:
        raise
    except Exception as exc:
        lines = str(exc).strip().splitlines()
        why = f"{type(exc).__name__}: {lines[0]}" if lines else type(exc).__name__
        raise limits.failed(f"the model failed on {len(X):,} rows ({why})") from exc


def _batched(call, X, n_features: int, limits: CallLimits) -> np.ndarray:
    """``call`` on ``X`` in batches of at most :data:`BATCH_CELLS` cells, checking the deadline between batches."""
    n = len(X)
    step = max(1, BATCH_CELLS // max(n_features, 1))
    if n <= step:
        return _call(call, X, limits)
    seconds, start, parts = limits.seconds or None, time.monotonic(), []
    for lo in range(0, n, step):
        if seconds is not None and lo and time.monotonic() - start > seconds:
            raise limits.timeout(f"the model took longer than {seconds:g} s on {lo:,} of {n:,} rows "
                                 "(CANDOR_MODEL_TIMEOUT_S); the call was stopped")
        part = X.iloc[lo:lo + step] if hasattr(X, "iloc") else X[lo:lo + step]
        parts.append(_call(call, part, limits))
    return np.concatenate(parts, axis=0)

_UNITS = {"probability": "probability of class {c!r}",
          "margin": "decision_function margin for class {c!r} (not a probability)",
          "label": "1 if predict() returns {c!r}, else 0 (the model gives labels only)",
          "raw": "predicted {c} (regression output)"}


def _class_names(classes: np.ndarray, names, model_name: str) -> tuple[str, ...]:
    """Display names of ``classes``: ``names`` checked (one per class, distinct, not empty), else ``str(c)``."""
    own = tuple(str(c) for c in classes)
    if names is None:
        return own
    names = tuple(str(n).strip() for n in names)
    if len(names) != len(own):
        raise TypeError(f"{len(names)} class names given ({', '.join(names)}) but {model_name} has "
                        f"{len(own)} classes ({', '.join(own)})")
    if any(not n for n in names) or len(set(names)) != len(names):
        raise TypeError(f"class names must be distinct and not empty, got {', '.join(map(repr, names))}")
    return names


@dataclass(frozen=True)
class TreeView:
    """A tree ensemble inside the model, the transform that feeds it, and its features' raw columns.

    Parameters
    ----------
    model : fitted tree ensemble (the Pipeline's final step, or the model itself)
    transform : callable
        Encoded rows (DataFrame) -> the tree's input (ndarray or DataFrame).
    groups : ndarray of int of shape (n_transformed,)
        Raw column of each transformed feature.
    names : tuple of str, length n_transformed
    """

    model: object
    transform: object
    groups: np.ndarray
    names: tuple


class ModelAdapter:
    """Explain-ready view of a fitted scikit-learn estimator or Pipeline.

    Parameters
    ----------
    model : fitted estimator with ``predict``
    codec : TabularCodec
        Encoding of the raw feature table the model takes.
    target : str, default="target"
        Name of the target, for regression units.
    class_names : sequence of str, optional
        Names people read for ``model.classes_``, in the same order (the CLI's ``--classes``);
        default the classes themselves as text. The model is still called with its own classes.
    limits : CallLimits, default=CallLimits()
        This adapter's deadline per model call and the errors it raises (default: no deadline).

    Raises
    ------
    TypeError
        If the model has no ``predict``, a classifier has fewer than two classes, or ``class_names``
        does not name each class once (or is given for a regressor).
    """

    def __init__(self, model, codec: TabularCodec, *, target: str = "target", class_names=None,
                 limits: CallLimits = NO_LIMITS) -> None:
        if not hasattr(model, "predict"):
            raise TypeError(f"{type(model).__name__} has no predict method; expected a fitted estimator")
        self.model, self.codec, self.target, self.limits = model, codec, target, limits
        if hasattr(model, "classes_"):
            self.classes_ = np.asarray(model.classes_)
            if len(self.classes_) < 2:
                raise TypeError(f"{type(model).__name__} knows {len(self.classes_)} class; at least two are needed")
            self.task = "binary" if len(self.classes_) == 2 else "multiclass"
            self.class_names = _class_names(self.classes_, class_names, type(model).__name__)
            if hasattr(model, "predict_proba"):
                self.kind, self.output_names = "probability", self.class_names
            elif hasattr(model, "decision_function"):
                self.kind = "margin"
                self.output_names = self.class_names[1:] if self.task == "binary" else self.class_names
            else:
                self.kind, self.output_names = "label", self.class_names
        else:
            if class_names is not None:
                raise TypeError(f"{type(model).__name__} is a regressor; class names apply to classifiers only")
            self.classes_, self.class_names = None, ()
            self.task, self.kind, self.output_names = "regression", "raw", (str(target),)
        self.output_space = "probability" if self.kind == "probability" else "raw"

    @classmethod
    def for_table(cls, model, X: pd.DataFrame, **options) -> ModelAdapter:
        """The adapter of ``model`` fitted on the raw table ``X`` (codec ``TabularCodec(X)``; an all-numeric ``X``
        encodes as itself); ``options`` as the constructor's (``target``, ``class_names``, ``limits``)."""
        return cls(model, TabularCodec(X), **options)

    def limited(self, limits: CallLimits) -> ModelAdapter:
        """This adapter (same model, codec and outputs) with other :class:`CallLimits`; ``self`` is unchanged."""
        other = copy.copy(self)
        other.limits = limits
        return other

    @property
    def feature_names(self) -> tuple[str, ...]:
        return self.codec.names

    def units(self, k: int) -> str:
        """What output ``k`` measures, e.g. "probability of class '>50K'"."""
        return _UNITS[self.kind].format(c=self.output_names[k])

    def default_output(self) -> int:
        """The output shown first: the second class for binary probabilities, else the last output."""
        return len(self.output_names) - 1

    def raw(self, Z) -> pd.DataFrame:
        """Encoded rows -> the model's raw input table."""
        if isinstance(Z, pd.DataFrame):
            Z = Z.to_numpy(dtype=float)
        X = self.codec.decode(Z)
        if not hasattr(self.model, "feature_names_in_") and not self.codec.categorical:
            return X.to_numpy()  # fitted on an array: avoid sklearn's feature-name warning
        return X

    def outputs(self, Z) -> np.ndarray:
        """Explained outputs of encoded rows, shape (n_rows, n_outputs), in batches under the deadline.

        Raises
        ------
        ModelTimeout
            (or the adapter's ``limits.timeout``) when the call goes past its deadline.
        ModelFailed
            (or the adapter's ``limits.failed``) when the model raises.
        """
        _openmp_limited(self, self.limits.openmp_threads)
        return _batched(self._outputs, Z, len(self.codec.names), self.limits)

    def _outputs(self, Z) -> np.ndarray:
        if self.kind == "probability":
            out = self._call(Z, "predict_proba")
        elif self.kind == "margin":
            out = np.asarray(self._call(Z, "decision_function"), dtype=float).reshape(len(Z), -1)
            if out.shape[1] != len(self.output_names):
                raise ValueError(f"decision_function gives {out.shape[1]} columns for {len(self.output_names)} "
                                 "classes (one-vs-one?); use decision_function_shape='ovr'")
        elif self.kind == "label":
            out = (np.asarray(self._call(Z, "predict"))[:, None] == self.classes_[None, :]).astype(float)
        else:
            out = np.asarray(self._call(Z, "predict"), dtype=float).reshape(len(Z), -1)
        return np.asarray(out, dtype=float)

    @functools.cached_property
    def _one_hot(self) -> OneHotInput | None:
        return OneHotInput.of(self.model, self.codec, self.raw)

    @functools.cached_property
    def _array_input(self) -> ArrayInput | None:
        return ArrayInput.of(self.model, self.codec, self.raw)

    def _call(self, Z, method: str):
        """``method`` of the model on encoded rows: of a one-hot Pipeline's final step on the array its preprocessing
        gives, built from the levels (:mod:`explainers._one_hot_input`); of a scikit-learn model fitted on float64
        columns on the array its validation makes of :meth:`raw` rows (:mod:`explainers._array_input`); else of the
        model on :meth:`raw` rows."""
        if self._one_hot is not None and shortcut_allowed():  # any call but a fingerprint's (whole_pipeline)
            return model_call(self._one_hot.final, self._one_hot.transform(Z), method)
        if self._array_input is not None:
            return self._array_input.call(Z, method)
        return model_call(self.model, self.raw(Z), method)

    def predict(self, Z) -> np.ndarray:
        """The model's own ``predict`` on encoded rows, in batches under the deadline (see :meth:`outputs`)."""
        _openmp_limited(self, self.limits.openmp_threads)
        return _batched(lambda part: np.asarray(self._call(part, "predict")), Z, len(self.codec.names), self.limits)

    def decision_function(self, Z) -> np.ndarray:
        """The model's own ``decision_function`` on encoded rows (its margins, whatever :attr:`kind` explains), in
        batches under the deadline (see :meth:`outputs`).

        Raises
        ------
        AttributeError
            If the model has no ``decision_function``.
        """
        if not hasattr(self.model, "decision_function"):
            raise AttributeError(f"{type(self.model).__name__} has no decision_function")
        _openmp_limited(self, self.limits.openmp_threads)
        return _batched(lambda part: np.asarray(self._call(part, "decision_function")), Z, len(self.codec.names),
                        self.limits)

    def predict_proba(self, Z) -> np.ndarray:
        if self.kind != "probability":
            raise AttributeError(f"{type(self.model).__name__} has no predict_proba")
        return self.outputs(Z)

    def fingerprint(self, Z) -> str:
        """SHA-256 of the model's outputs on ``Z`` (rounded to 12 digits), through the whole model: equal before and
        after a job."""
        with whole_pipeline():
            out = np.round(self.outputs(Z), 12)
        return hashlib.sha256(np.ascontiguousarray(out).tobytes()).hexdigest()

    def tree_view(self) -> TreeView | None:
        """The tree ensemble to explain exactly, if the model is one or a Pipeline ending in one."""

        m = self.model
        if is_tree_model(m):
            return TreeView(m, self.raw, np.arange(len(self.codec.names)), self.codec.names)
        if type(m).__name__ != "Pipeline" or not is_tree_model(m.steps[-1][1]):
            return None
        pre = m[:-1]
        groups = feature_groups(pre, len(self.codec.names))
        if groups is None:
            return None
        try:
            names = tuple(str(n) for n in pre.get_feature_names_out())
        except (AttributeError, ValueError):
            names = tuple(f"{self.codec.names[g]} [{i}]" for i, g in enumerate(groups))

        final = m.steps[-1][1]
        # scikit-learn's classic trees compare float32 inputs with their thresholds (HistGradientBoosting: float64)
        as_sklearn = type(final).__module__.startswith("sklearn.") and \
            not type(final).__name__.startswith("HistGradientBoosting")
        one_hot = self._one_hot if self._one_hot is not None and self._one_hot.final is final else None

        def transform(Z):
            # the one-hot shortcut gives the preprocessing's own array (explainers._one_hot_input): on Adult one
            # row 7 ms -> 0.1 ms, most of a live row's Tree SHAP; a fingerprint (whole_pipeline) runs the Pipeline
            fast = one_hot is not None and shortcut_allowed()
            T = one_hot.transform(Z) if fast else pre.transform(self.raw(Z))
            T = T.toarray() if hasattr(T, "toarray") else np.asarray(T, dtype=float)
            return T.astype(np.float32).astype(float) if as_sklearn else T

        return TreeView(final, transform, groups, names)


class OutputView:
    """One explained output of a :class:`ModelAdapter`, as the dashboard pages take it: one number per row.

    Parameters
    ----------
    adapter : ModelAdapter
    index : int
        Column of ``adapter.outputs`` (class ``adapter.output_names[index]``, or the regression target).

    Attributes
    ----------
    kind : {"probability", "margin", "label", "raw"}
        The adapter's output kind (units in :meth:`units`).
    class_name : str or None
        The class the output is about (``None`` for a regressor).
    classes_ : ndarray ``[0, 1]`` for classifiers (``class_name`` against the rest), absent for regressors.
    """

    def __init__(self, adapter: ModelAdapter, index: int) -> None:
        self.adapter, self.index, self.kind = adapter, int(index), adapter.kind
        if not 0 <= self.index < len(adapter.output_names):
            raise ValueError(f"output {index} does not exist; the model has {len(adapter.output_names)}")
        self.class_name = None if adapter.task == "regression" else adapter.output_names[self.index]
        if self.class_name is not None:
            self.classes_ = np.array([0, 1])

    def units(self) -> str:
        """What :meth:`output` measures, e.g. "decision_function margin for class 'yes' (not a probability)"."""
        return self.adapter.units(self.index)

    def output(self, Z) -> np.ndarray:
        """The explained output of encoded rows, shape (n_rows,)."""
        return self.adapter.outputs(Z)[:, self.index]

    def predict(self, Z) -> np.ndarray:
        """Classifiers: 1 where the model predicts ``class_name``, else 0; regressors: the predictions."""
        if self.class_name is None:
            return np.asarray(self.adapter.predict(Z), dtype=float)
        return (np.asarray(self.adapter.predict(Z)).astype(str) == self.class_name).astype(int)


class OneVsRest(OutputView):
    """A binary probabilistic view of one class of a :class:`ModelAdapter` (what the dashboard pages take).

    ``predict_proba`` is ``[1 - p_c, p_c]``; ``predict`` is 1 where the model's
    most probable class is ``c``; ``classes_`` is ``[0, 1]``.

    Raises
    ------
    TypeError
        If the adapter's outputs are not class probabilities.
    """

    def __init__(self, adapter: ModelAdapter, index: int) -> None:
        if adapter.kind != "probability":
            raise TypeError(f"{type(adapter.model).__name__} gives {adapter.kind} outputs, not probabilities")
        super().__init__(adapter, index)

    def predict_proba(self, Z) -> np.ndarray:
        p = self.output(Z)
        return np.column_stack([1.0 - p, p])

    def predict(self, Z) -> np.ndarray:
        return (np.argmax(self.adapter.outputs(Z), axis=1) == self.index).astype(int)
