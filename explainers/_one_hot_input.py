"""A one-hot Pipeline's final step called on encoded rows, given the array its preprocessing would give it.

LIME's neighbourhoods and SHAP's coalitions are rows of the codec's encoded space (a category column as a level
index, :mod:`explainers._codec`). Through the whole Pipeline every call decoded each level back to its string, and
the ``OneHotEncoder`` looked every string up again: on Adult's HistGradientBoosting pipeline (8 string columns,
108 one-hot columns) most of a LIME row's model time, and LIME's model calls were most of a store build (issue 23).

:class:`OneHotInput` applies to a Pipeline whose first step is a ``ColumnTransformer`` with a dense output made of
``OneHotEncoder`` on category columns, numeric columns passed through or through scikit-learn's own transformers
whose outputs each come from one number (an imputer, a scaler, a Pipeline of them), and dropped columns (steps
between it and the last are applied as they are). A one-hot encoder's block for a column depends on that column
alone, so each level's block is computed once, by the ColumnTransformer itself on rows that run through every level,
and a call takes each row's block by its level index (:func:`explainers._codec.level_index`, as decoding reads it);
passed-through numbers are decoded by the codec itself (:meth:`~explainers._codec.TabularCodec.model_column`), and a
numbers' transformer is given its columns so decoded, as the ColumnTransformer gives them (a table of those columns,
by name). On the Cohorts page's Adult test (one-hot levels beside scaled numbers, a logistic regression) the
ColumnTransformer was 12.8 of 19.4 profiled seconds, 764 calls of 17 ms.
It is used only if, on probes that hold every level of every column (and NaN in the numbers, then none), it gives
exactly the preprocessing's own array (``numpy.array_equal``, same dtype and shape); otherwise the model is called
whole, as before. The final step then gets the array the Pipeline would give it, so its outputs are the same bit
for bit (``tests/explainers/test_one_hot_input.py``, on UCI Adult and LIME's own neighbourhoods).

Every call takes the shortcut, small ones too, but those made within :func:`whole_pipeline`: the mutation guard's
fingerprint (``app/services/tabular.py::fingerprint``, :meth:`explainers.model_adapter.ModelAdapter.fingerprint`)
goes through the whole Pipeline, so a preprocessing step changed in place is still seen. Calls of fewer than 64 rows
went through the whole Pipeline before, thought to cost little: on Adult the ``ColumnTransformer`` costs about 14 ms
of CPU a call whatever its rows, and the Persuasive page's row view makes six such calls a row (one row, and the 15
rows of each erasure curve), 85 of its 206 CPU ms (issue 23: the build's row panels).
"""
from __future__ import annotations

import contextlib
import contextvars

import numpy as np

from ._codec import TabularCodec, level_index
from ._grouping import feature_groups

__all__ = ["OneHotInput", "whole_pipeline", "shortcut_allowed"]

_WHOLE = contextvars.ContextVar("candor_whole_pipeline", default=False)


@contextlib.contextmanager
def whole_pipeline():
    """Within the block (in this thread or task), every model call goes through the whole Pipeline, not the shortcut:
    for a fingerprint that must see the preprocessing as it is now."""
    token = _WHOLE.set(True)
    try:
        yield
    finally:
        _WHOLE.reset(token)


def shortcut_allowed() -> bool:
    """Whether a model call may take the shortcut here (not within :func:`whole_pipeline`)."""
    return not _WHOLE.get()

_PROBE_ERRORS = (ValueError, TypeError, AttributeError, IndexError, KeyError)
"""What the preprocessing may raise on the probe (an unknown level with ``handle_unknown="error"``): no shortcut."""


def _passthrough(trans) -> bool:
    """A ColumnTransformer's ``"passthrough"``, or the identity ``FunctionTransformer`` it fits in its place."""
    from sklearn.preprocessing import FunctionTransformer

    if isinstance(trans, str):
        return trans == "passthrough"
    return type(trans) is FunctionTransformer and trans.func is None and not trans.validate


def _as_index(cols: np.ndarray):
    """A slice where the columns are consecutive (a faster assignment), else the columns."""
    return slice(int(cols[0]), int(cols[-1]) + 1) if np.array_equal(cols, np.arange(cols[0], cols[-1] + 1)) else cols


def _structure(model, codec: TabularCodec):
    """``(ColumnTransformer, middle steps or None, final step, [(raw column, its one-hot columns)],
    ([(output column, raw column)] passed through, [(transformer, its output columns, its raw columns)]))`` of a
    Pipeline the shortcut can take, else None."""
    import sklearn
    from sklearn.compose import ColumnTransformer
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import OneHotEncoder

    if type(model) is not Pipeline or len(model.steps) < 2 or sklearn.get_config().get("enable_metadata_routing"):
        return None
    ct, final = model.steps[0][1], model.steps[-1][1]
    if type(ct) is not ColumnTransformer or not hasattr(ct, "transformers_") or ct.sparse_output_ \
            or final is None or isinstance(final, str):
        return None
    groups = feature_groups(ct, len(codec.columns))
    if groups is None:
        return None
    blocks, passed, numeric = [], [], []
    for name, trans, cols in ct.transformers_:
        sl = ct.output_indices_.get(name)
        if sl is None or sl.stop == sl.start or isinstance(trans, str) and trans == "drop":
            continue
        out, parents = np.arange(sl.start, sl.stop), groups[sl]
        if type(trans) is OneHotEncoder:
            if any(codec.columns[j].kind != "category" for j in parents):
                return None
            blocks += [(j, out[parents == j]) for j in dict.fromkeys(parents.tolist())]
        elif _passthrough(trans):
            if not _numbers(codec, parents):
                return None
            passed += [(int(c), int(j)) for c, j in zip(out, parents)]
        else:  # numbers through their own transformer (an imputer, a scaler), given its columns as the CT gives them
            inputs = _inputs(codec, cols)
            if not _sklearn_own(trans) or inputs is None or not _numbers(codec, inputs) \
                    or not set(parents.tolist()) <= set(inputs):
                return None
            numeric.append((trans, _as_index(out), inputs))
    if not blocks:
        return None
    return ct, (model[1:-1] if len(model.steps) > 2 else None), final, blocks, (passed, numeric)


def _sklearn_own(trans) -> bool:
    """Whether ``trans`` is scikit-learn's own transformer, or a Pipeline of them (no user code run on the probes:
    not a FunctionTransformer)."""
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import FunctionTransformer

    if type(trans) is Pipeline:
        return all(not isinstance(step, str) and _sklearn_own(step) for _, step in trans.steps)
    return type(trans).__module__.startswith("sklearn.") and not isinstance(trans, FunctionTransformer)


def _numbers(codec: TabularCodec, columns) -> bool:
    """Whether every one of ``columns`` is numeric and decoded to a numpy dtype."""
    return all(codec.columns[j].kind == "numeric" and isinstance(codec.model_dtype(j), np.dtype) for j in columns)


def _inputs(codec: TabularCodec, cols) -> list[int] | None:
    """The codec's indices of a ColumnTransformer's column list (the raw table's names, or positions), else None."""
    raw = [str(c) for c in codec.raw_columns]
    if isinstance(cols, str) or not isinstance(cols, (list, tuple, np.ndarray)) or not len(cols):
        return None
    cols = list(cols)
    if all(isinstance(c, str) for c in cols):
        return [raw.index(c) for c in cols] if set(cols) <= set(raw) and len(set(raw)) == len(raw) else None
    if all(isinstance(c, (int, np.integer)) and not isinstance(c, bool) and 0 <= c < len(raw) for c in cols):
        return [int(c) for c in cols]
    return None


def _probes(codec: TabularCodec) -> list[np.ndarray]:
    """Encoded rows through every level of every category column (row ``i``: level ``i`` modulo its count) and
    numbers ``1.5 i - 3``; the second probe the same with NaN in every number of its last row."""
    n = max([len(c.levels) for c in codec.columns if c.kind == "category"] + [3])
    i = np.arange(n, dtype=float)
    Z = np.column_stack([i % len(c.levels) if c.kind == "category" else 1.5 * i - 3.0 for c in codec.columns])
    with_nan = Z.copy()
    with_nan[-1, [j for j, c in enumerate(codec.columns) if c.kind == "numeric"]] = np.nan
    return [Z, with_nan]


class OneHotInput:
    """What a one-hot Pipeline's final step gets for encoded rows, built without decoding the levels.

    Made by :meth:`of`, which checks it against the Pipeline's own preprocessing.

    Attributes
    ----------
    final : estimator
        The Pipeline's last step (call it on :meth:`transform`'s array as the Pipeline would).
    """

    def __init__(self, codec: TabularCodec, final, rest, dtype, width: int, blocks: list, passed: tuple) -> None:
        self.codec, self.final, self._rest, self._dtype, self._width = codec, final, rest, dtype, int(width)
        self._blocks, (self._passed, self._numeric) = blocks, passed

    @classmethod
    def of(cls, model, codec: TabularCodec, raw) -> OneHotInput | None:
        """The shortcut of ``model`` on ``codec``'s encoded rows, or None where it does not apply.

        Parameters
        ----------
        model : the user's model (a Pipeline, for the shortcut to apply)
        codec : TabularCodec
        raw : callable
            Encoded rows -> the table the model takes (:meth:`explainers.model_adapter.ModelAdapter.raw`).

        Returns
        -------
        OneHotInput or None
            None unless the structure applies and :meth:`transform` equals ``model[:-1].transform(raw(Z))`` exactly
            (values, NaN, dtype, shape) on :func:`_probes`.
        """
        found = _structure(model, codec)
        if found is None:
            return None
        ct, rest, final, columns, passed = found
        probes = _probes(codec)
        try:
            X = raw(probes[0])
            names = getattr(ct, "feature_names_in_", None)  # its columns by name: the codec's, in its order
            if names is not None and [str(c) for c in names] != [str(c) for c in getattr(X, "columns", ())]:
                return None
            T = ct.transform(X)
            if not isinstance(T, np.ndarray) or T.dtype.kind != "f":
                return None
            blocks = [(j, _as_index(cols), np.ascontiguousarray(T[:len(codec.columns[j].levels)][:, cols]))
                      for j, cols in columns]
            shortcut = cls(codec, final, rest, T.dtype, T.shape[1], blocks, passed)
            for Z in probes:
                own, ours = model[:-1].transform(raw(Z)), shortcut.transform(Z)
                if not (isinstance(own, np.ndarray) and own.dtype == ours.dtype and own.shape == ours.shape
                        and np.array_equal(own, ours, equal_nan=True)):
                    return None
        except _PROBE_ERRORS:
            return None
        return shortcut

    def transform(self, Z) -> np.ndarray:
        """``model[:-1].transform(raw(Z))`` for encoded rows ``Z`` (ndarray or DataFrame of shape (n, n_features))."""
        Z = np.asarray(Z, dtype=float).reshape(-1, len(self.codec.columns))
        T = np.empty((len(Z), self._width), dtype=self._dtype)
        for j, cols, table in self._blocks:
            T[:, cols] = table[level_index(Z[:, j], len(table))]
        for c, j in self._passed:
            T[:, c] = self.codec.model_column(j, Z[:, j])
        if self._numeric:
            import pandas as pd

            raw = self.codec.raw_columns
            for trans, cols, inputs in self._numeric:  # what the ColumnTransformer gives it: its columns, by name
                frame = pd.DataFrame({raw[j]: self.codec.model_column(j, Z[:, j]) for j in inputs},
                                     columns=[raw[j] for j in inputs])
                T[:, cols] = np.asarray(trans.transform(frame))
        return T if self._rest is None else self._rest.transform(T)
