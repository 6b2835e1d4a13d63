"""A scikit-learn model fitted on a table of float64 (or of integer) columns, given the array its own validation makes
of the table.

scikit-learn's ``check_array`` looks at every column's dtype of a DataFrame (``_pandas_dtype_needs_early_conversion``,
narwhals' column checks) before it takes ``numpy.asarray`` of it: on a 10,000-column table that is about 70 ms of every
call whatever its rows (a ``LogisticRegression`` on one row: 71 ms given the DataFrame, 0.2 ms given its array), and
``python -m app check`` calls the model hundreds of times (issue 27); on Adult's 108 one-hot integer columns a
``GradientBoostingClassifier`` of 20 rows took 2.2 ms given the DataFrame and 0.6 ms given its array, five such calls a
row the store lacks (issue 23). When every column has one numpy dtype, float64 or an integer, the validation converts
nothing first: it ends in ``numpy.asarray(frame)`` (``order`` and ``dtype`` as the estimator asks, which it applies to
an array alike: the frame's one block, cast once), and of the frame itself only its column names are read, to compare
them with the model's ``feature_names_in_``. :class:`ArrayInput` hands the model ``numpy.asarray(frame)`` instead,
with the one warning that follows ("X does not have valid feature names") ignored, so the estimator computes from the
same array and its outputs are the same bit for bit.

It applies only where that reasoning holds: the codec's columns are all numeric with one numpy dtype, float64 or an
integer (decoded as one block, :meth:`explainers._codec.TabularCodec.decode`; a call whose rows decode otherwise, an
integer table with a missing value, is given the table), the model's ``feature_names_in_`` are those columns in
order, and the model is a scikit-learn estimator (or a Pipeline of them) with no step that may read a column by its
name (``sklearn.compose``'s ``ColumnTransformer``, ``FunctionTransformer``, ``FeatureUnion``); and then only for a
method whose outputs on probe rows equal the model's own call on the DataFrame (``numpy.array_equal``), checked on its
first use. Anything else is called with the DataFrame, as before.

The warning is ignored inside ``warnings.catch_warnings``, as Candor's other quiet calls do; in Python 3.11 that
context is the process's for its duration, so another thread's warning with this same message is ignored too.
"""
from __future__ import annotations

import warnings

import numpy as np

from ._codec import TabularCodec
from ._forest_calls import model_call

__all__ = ["ArrayInput"]

_NAMES_WARNING = "X does not have valid feature names"
_NAME_READERS = {"ColumnTransformer", "FunctionTransformer", "FeatureUnion", "TransformedTargetRegressor"}
"""scikit-learn estimators that may select or compute by column name: never given the array."""


def _plain_sklearn(est) -> bool:
    """A scikit-learn estimator (a Pipeline's steps each one, ``"passthrough"`` allowed) reading no column by name."""
    from sklearn.pipeline import Pipeline

    if type(est) is Pipeline:
        return all(step in (None, "passthrough") or _plain_sklearn(step) for _, step in est.steps)
    cls = type(est)
    return cls.__module__.startswith("sklearn.") and not cls.__module__.startswith("sklearn.compose") \
        and cls.__name__ not in _NAME_READERS


def _one_number_dtype(codec: TabularCodec) -> bool:
    """Every column numeric with the same numpy dtype, float64 or an integer (the codec's one-block dtype,
    :attr:`~explainers._codec.TabularCodec.block_dtype`, never bool: scikit-learn converts a DataFrame's bool columns
    early, an array's not)."""
    block = codec.block_dtype
    return len(codec.columns) > 0 and block is not None and block.kind != "b"


def _one_block(table) -> bool:
    """The decoded table's columns share one dtype (an integer table with a missing value decodes that column as
    float64: the DataFrame's validation then casts each dtype on its own, the array's once)."""
    return len(set(getattr(table, "dtypes", ()))) <= 1


def _probe(codec: TabularCodec) -> np.ndarray:
    """Seeded rows of the codec's width: standard normal values, and a few zeros and large values."""
    Z = np.random.default_rng(0).normal(size=(7, len(codec.columns)))
    Z[5] = 0.0
    Z[6] *= 1e3
    return Z


def _equal(a, b) -> bool:
    """Same shape, dtype and values (NaN equal to NaN in float outputs)."""
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    return bool(np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"))


class ArrayInput:
    """The model's methods called on ``numpy.asarray`` of its input table (see the module docstring).

    Made by :meth:`of`; :meth:`call` checks each method once against the model's own call on the table.
    """

    def __init__(self, model, codec: TabularCodec, raw) -> None:
        self.model, self._codec, self._raw = model, codec, raw
        self._floats = codec.block_dtype == np.float64  # the table's array is then the encoded rows themselves
        self._same: dict[str, bool] = {}  # by method; two threads may both check it, and agree

    @classmethod
    def of(cls, model, codec: TabularCodec, raw) -> ArrayInput | None:
        """The shortcut for ``model`` on ``codec``'s rows, or None where it does not apply.

        Parameters
        ----------
        model : the user's model
        codec : TabularCodec
        raw : callable
            Encoded rows -> the table the model takes (:meth:`explainers.model_adapter.ModelAdapter.raw`).
        """
        names = getattr(model, "feature_names_in_", None)
        if names is None or not _plain_sklearn(model):
            return None
        if not _one_number_dtype(codec):
            return None
        if list(map(str, names)) != list(map(str, codec.raw_columns)):
            return None
        return cls(model, codec, raw)

    def call(self, Z, method: str):
        """``getattr(model, method)`` of encoded rows ``Z``: on the table's array once the method is checked equal on
        the probe, else on the table itself (:func:`explainers._forest_calls.model_call` either way). Float64
        columns decode to a copy of the rows (:meth:`~explainers._codec.TabularCodec.decode`): the model gets that
        copy, no DataFrame built to be read back."""
        if self._floats and self._checked(method):
            rows = Z.to_numpy(dtype=float) if hasattr(Z, "to_numpy") else Z
            rows = np.asarray(rows, dtype=float).reshape(-1, len(self._codec.columns))
            return self._on_array(np.array(rows, order="F"), method)  # the DataFrame's layout: a column-major array
        table = self._raw(Z)
        if self._checked(method) and _one_block(table):
            return self._on_array(np.asarray(table), method)
        return model_call(self.model, table, method)

    def _on_array(self, A: np.ndarray, method: str):
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=_NAMES_WARNING, category=UserWarning)
            return model_call(self.model, A, method)

    def _checked(self, method: str) -> bool:
        """Whether ``method`` gives the same outputs on the array as on the table (computed on first use)."""
        same = self._same.get(method)
        if same is None:
            table = self._raw(_probe(self._codec))
            try:
                same = _equal(model_call(self.model, table, method), self._on_array(np.asarray(table), method))
            except Exception:  # the model refuses the probe (or the array): never the shortcut
                same = False
            self._same[method] = same
        return same
