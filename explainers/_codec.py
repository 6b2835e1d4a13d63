"""A reversible numeric encoding of a raw feature table (the *raw feature space*).

Explainers perturb numbers; users' models take the table as they wrote it
(strings, pandas ``category``, nullable integers, datetimes, NaN). A
:class:`TabularCodec` maps each raw column to exactly one numeric column and
back, so attributions are per raw column, under the user's column names:

========== ============================================== ===========================================
kind       encoded value                                   decoded for the model
========== ============================================== ===========================================
numeric    the number as float64 (``pd.NA`` -> NaN)        original dtype (nullable ints keep ``<NA>``)
category   index into ``levels`` (missing is a level)      original values / categories / missing
datetime   days since 1970-01-01 (float, NaT -> NaN)      ``datetime64[ns]``
========== ============================================== ===========================================

Missing values of a string or category column (NaN, ``pd.NA``, ``None``)
become the explicit level ``"(missing)"``; empty strings stay their own level
``""`` (shown as ``'(empty string)'``).

Display (what the dashboard shows instead of codes): :func:`value_labels` turns
an encoded row into the user's values, :func:`predicate_text` and
:func:`conjunction_parts` render a rule's predicates on encoded columns as set
membership in the user's levels (``workclass in {Federal-gov, Private}``) or as
a date (``signup <= 2021-03-04``). Without a codec (the bundled, all-numeric
sample) they render numbers exactly as before.

How one column is encoded and shown (:class:`~explainers._column_code.ColumnCode`, the level
``MISSING``, :func:`~explainers._column_code.date_text`) is in :mod:`explainers._column_code`.
"""
from __future__ import annotations

import copy
from dataclasses import replace
from typing import Sequence

import numpy as np
import pandas as pd
from pandas.api import types as ptypes

from ._column_code import _DAY, _EPOCH, MAX_LEVELS, MISSING, ColumnCode
from .numbers import number_text
from .rules import format_predicate

__all__ = ["TabularCodec", "value_labels", "predicate_text", "conjunction_parts", "conjunction_text", "level_index"]


def _is_categorical(s: pd.Series) -> bool:
    return (isinstance(s.dtype, pd.CategoricalDtype) or ptypes.is_string_dtype(s.dtype)
            or ptypes.is_object_dtype(s.dtype) or ptypes.is_bool_dtype(s.dtype) and s.isna().any())


class TabularCodec:
    """Encode a raw DataFrame into float columns and decode perturbed rows back.

    Parameters
    ----------
    frame : DataFrame of shape (n_rows, n_features)
        The raw features; defines the levels of every category column.

    Attributes
    ----------
    columns : tuple of ColumnCode, length n_features
    names : tuple of str
        Column names as written by the user (``str`` of the original label).

    Raises
    ------
    TypeError
        For a column whose dtype has no numeric encoding (e.g. complex,
        timedelta, interval, nested objects), naming the column and dtype.
    """

    def __init__(self, frame: pd.DataFrame) -> None:
        self._raw_columns = list(frame.columns)
        self._dtypes = list(frame.dtypes)
        codes = []
        for j, col in enumerate(self._raw_columns):  # a numpy number column is numeric by its dtype alone (no Series)
            dtype = self._dtypes[j]
            codes.append(ColumnCode(str(col), "numeric", str(dtype))
                         if isinstance(dtype, np.dtype) and dtype.kind in "iuf" else
                         self._fit_column(str(col), frame.iloc[:, j]))
        self.columns = tuple(codes)
        self.names = tuple(c.name for c in codes)
        self._block = self._decode_block()

    @staticmethod
    def _fit_column(name: str, s: pd.Series) -> ColumnCode:
        dtype = str(s.dtype)
        if ptypes.is_datetime64_any_dtype(s.dtype):
            d = s.dropna()
            timed = bool(len(d) and (d != d.dt.normalize()).any())
            return ColumnCode(name, "datetime", dtype, note="encoded as days since 1970-01-01", timed=timed)
        plain_bool = ptypes.is_bool_dtype(s.dtype) and not s.isna().any()
        number = (ptypes.is_numeric_dtype(s.dtype) and not ptypes.is_complex_dtype(s.dtype)
                  and not isinstance(s.dtype, pd.CategoricalDtype) and not ptypes.is_bool_dtype(s.dtype))
        if plain_bool or number:
            return ColumnCode(name, "numeric", dtype)
        if _is_categorical(s):
            if isinstance(s.dtype, pd.CategoricalDtype):
                levels = list(s.cat.categories)
            else:
                values = s[s.notna()]
                bad = [v for v in values.head(1000) if not isinstance(v, (str, int, float, bool, np.generic))]
                if bad:
                    raise TypeError(f"column {name!r} (dtype {dtype}) holds {type(bad[0]).__name__} values; "
                                    "only strings, numbers and booleans can be explained")
                levels = sorted(pd.unique(values), key=lambda v: (type(v).__name__, str(v)))
            note, na = f"{len(levels)} levels", None
            if s.isna().any():
                levels.append(MISSING)
                note += f", {int(s.isna().sum())} missing shown as {MISSING!r}"
                na = s[s.isna()].iloc[0]
            return ColumnCode(name, "category", dtype, tuple(levels), note, na)
        raise TypeError(f"column {name!r} has dtype {dtype}, which has no numeric encoding for explanation")

    def encode(self, frame: pd.DataFrame) -> pd.DataFrame:
        """Encode raw rows; unseen category levels become NaN.

        Returns
        -------
        DataFrame of shape (n_rows, n_features), float64, columns ``names``.
        """
        out = np.empty((len(frame), len(self.columns)), dtype=float)
        dtypes = list(frame.dtypes)  # numpy numbers convert as one block (a wide table: not a Series per column)
        block = [j for j, c in enumerate(self.columns)
                 if c.kind == "numeric" and isinstance(dtypes[j], np.dtype) and dtypes[j].kind in "biuf"]
        if block:
            out[:, block] = frame.iloc[:, block].to_numpy(dtype=float)
        done = set(block)
        for j, code in enumerate(self.columns):
            if j in done:
                continue
            s = frame.iloc[:, j]
            if code.kind == "numeric":
                out[:, j] = pd.to_numeric(s, errors="coerce").astype("float64").to_numpy(dtype=float, na_value=np.nan)
            elif code.kind == "datetime":
                d = pd.to_datetime(s, errors="coerce")
                out[:, j] = ((d - _EPOCH) / _DAY).astype("float64").to_numpy(dtype=float, na_value=np.nan)
            else:
                lookup = {v: i for i, v in enumerate(code.levels)}
                vals = s.astype(object).where(s.notna(), MISSING)
                out[:, j] = np.array([lookup.get(v, np.nan) for v in vals], dtype=float)
        # copy=False: pandas 3 copies an ndarray by default, a second table in memory at load (28 MB on Adult)
        return pd.DataFrame(out, columns=list(self.names), index=frame.index, copy=False)

    def decode(self, encoded) -> pd.DataFrame:
        """Rebuild raw rows (the model's input) from encoded, possibly perturbed, rows.

        Parameters
        ----------
        encoded : ndarray or DataFrame of shape (n_rows, n_features)
            Category codes are rounded and clipped to a valid level.

        Returns
        -------
        DataFrame with the original column labels and dtypes.
        """
        Z = np.asarray(encoded, dtype=float).reshape(-1, len(self.columns))
        same = self._block
        if same == np.float64:
            out = pd.DataFrame(Z.copy())  # every column a float64 number: one block, not a Series per column
            out.columns = self._raw_columns
            return out
        if same is not None and not np.isnan(Z).any():  # what each column gets below, as one block (a one-hot table)
            block = np.empty(Z.shape, dtype=same)  # np.round(Z).astype(same) without its float64 copy of Z
            np.rint(Z, out=block, casting="unsafe")  # (16 MB a model call of 2 million cells: LIME's peak, issue 23)
            out = pd.DataFrame(block, copy=False)
            out.columns = self._raw_columns
            return out
        data = {}
        for j, (code, dtype) in enumerate(zip(self.columns, self._dtypes)):
            data[j] = self._decoded_column(code, dtype, Z[:, j])
        out = pd.DataFrame(data, copy=False)
        out.columns = self._raw_columns
        return out

    def _decode_block(self):
        """The one numpy dtype every column has, all of them numbers, when it is float64, an integer or bool, else
        None: :meth:`decode` then builds the model's table as one block. Found once (a wide table's 10,000 columns
        were checked in every call); :meth:`relabel` changes no kind or dtype."""
        if not self._dtypes:
            return np.dtype(np.float64)  # no columns: an empty block of the rows
        first = self._dtypes[0]
        if not isinstance(first, np.dtype) or not (first.kind in "iub" or first == np.float64) or \
                any(c.kind != "numeric" for c in self.columns) or \
                not all(isinstance(d, np.dtype) and d == first for d in self._dtypes):
            return None
        return first

    def _decoded_column(self, code: ColumnCode, dtype, z: np.ndarray):
        """One column of :meth:`decode`: a numpy array where the column's dtype is numpy's (no Series, no pandas
        ``astype``: a one-hot table's 108 integer columns took 80 ms a call that way, most of a row the store
        lacked, issue 23), else a Series in that dtype."""
        if code.kind == "numeric":
            if isinstance(dtype, np.dtype):
                if dtype.kind in "iub" and not np.isnan(z).any():
                    return np.round(z).astype(dtype)
                return z.copy()  # floats stay float64; an integer column holding NaN too
            col = pd.Series(z)
            return col.round().astype(dtype) if ptypes.is_integer_dtype(dtype) or ptypes.is_bool_dtype(dtype) \
                else col.astype(dtype)
        if code.kind == "datetime":
            return pd.Series(_EPOCH + pd.to_timedelta(z, unit="D"))
        col = pd.Series(self._level_values(code)[level_index(z, len(code.levels))], dtype=object, copy=False)
        return col if isinstance(dtype, np.dtype) else col.astype(dtype)  # category, str, nullable boolean

    def model_column(self, j: int, z: np.ndarray):
        """Column ``j`` of :meth:`decode` for its encoded values ``z`` alone (an ndarray where its dtype is numpy's)."""
        return self._decoded_column(self.columns[j], self._dtypes[j], np.asarray(z, dtype=float))

    @property
    def block_dtype(self):
        """The one numpy dtype every column decodes to when all are numbers of one dtype, float64, an integer or bool
        (:meth:`decode` then builds the model's table as one block), else None."""
        return self._block

    def model_dtype(self, j: int):
        """The dtype column ``j`` is decoded to (the raw table's)."""
        return self._dtypes[j]

    @property
    def raw_columns(self) -> tuple:
        """The raw table's column labels, which :meth:`decode` gives the model (unchanged by :meth:`relabel`)."""
        return tuple(self._raw_columns)

    @staticmethod
    def _level_values(code: ColumnCode) -> np.ndarray:
        """The raw value of each level of ``code`` as an object array (the missing level as the column's NA)."""
        out = np.empty(len(code.levels), dtype=object)
        out[:] = [code.na if v == MISSING else v for v in code.levels]
        return out

    def labels(self, encoded_row) -> tuple[str, ...]:
        """Display text of one encoded row, e.g. ``("Private", "(missing)", "39")``."""
        return tuple(c.label(float(v)) for c, v in zip(self.columns, np.asarray(encoded_row, dtype=float)))

    def relabel(self, names: dict, displays: dict | None = None) -> TabularCodec:
        """A copy whose columns read ``names[column]`` with the display formats ``displays[column]``.

        Encoded tables, explanations, rules and sentences then carry the new names and formats; :meth:`decode`
        still gives the model its own columns. Columns missing from ``names`` keep theirs.
        """
        out = copy.copy(self)
        displays = displays or {}
        out.columns = tuple(replace(c, name=str(names.get(c.name, c.name)), display=displays.get(c.name, c.display))
                            for c in self.columns)
        out.names = tuple(c.name for c in out.columns)
        return out

    def column(self, name: str) -> ColumnCode | None:
        """The :class:`ColumnCode` of the column named ``name`` (None if there is none)."""
        return next((c for c in self.columns if c.name == name), None)

    def conjunction_parts(self, predicates: Sequence, max_levels: int = MAX_LEVELS) -> tuple[str, ...]:
        """:func:`conjunction_parts` on this codec (what :func:`explainers.rules.rule_text` calls)."""
        return conjunction_parts(predicates, self, max_levels)

    @property
    def categorical(self) -> tuple[int, ...]:
        """Positions of category columns."""
        return tuple(j for j, c in enumerate(self.columns) if c.kind == "category")

    def notes(self) -> tuple[str, ...]:
        """One line per column that was transformed notably."""
        return tuple(f"{c.name}: {c.note}" for c in self.columns if c.note and c.kind != "category")


def level_index(z: np.ndarray, n_levels: int) -> np.ndarray:
    """The level each encoded value of a category column decodes to: rounded, NaN as level 0, clipped to the levels."""
    return np.clip(np.nan_to_num(np.round(z), nan=0), 0, n_levels - 1).astype(int)


def value_labels(values, codec: TabularCodec | None = None, fmt: str = ".4g") -> tuple[str, ...]:
    """Display text of one encoded row: levels, dates, and numbers formatted with ``fmt``.

    ``values`` (shape (n_features,)) are encoded, as an Explanation's ``feature_values``. Without
    a codec (all-numeric table) every value is formatted as a number, NaN as ``nan``; with one:
    ``("blue", "2021-03-04", "38.12")``, missing values as ``"(missing)"``.
    """
    v = np.asarray(values, dtype=float).ravel()
    if codec is None or len(codec.columns) != v.size:
        return tuple(number_text(x, fmt) for x in v)
    return tuple(c.text(float(x), fmt) for c, x in zip(codec.columns, v))


def predicate_text(predicate, codec: TabularCodec | None = None, max_levels: int = MAX_LEVELS) -> str:
    """Display text of a :class:`~explainers.types.Predicate` on encoded columns (:meth:`ColumnCode.describe`).

    Without a codec, or on a numeric column: ``"worst radius > 16.8"`` (thresholds of ``<=``/``>``
    to 4 significant digits), as the dashboard always rendered it.

    >>> from explainers.types import Predicate
    >>> codec = TabularCodec(pd.DataFrame({"colour": ["red", "green", "blue"]}))
    >>> predicate_text(Predicate("colour", "<=", 1.5), codec)
    'colour ≠ red'
    """
    col = codec.column(predicate.feature) if codec is not None else None
    if col is None:
        return format_predicate(predicate.feature, predicate.op, predicate.threshold)
    return col.describe(predicate.op, predicate.threshold, max_levels)


def conjunction_parts(predicates: Sequence, codec: TabularCodec | None = None,
                      max_levels: int = MAX_LEVELS) -> tuple[str, ...]:
    """Display text of a conjunction, one part per predicate, predicates on one category column merged.

    ``workclass > 0.5 AND workclass <= 3.5`` becomes the one part
    ``workclass in {Local-gov, Private, Self-emp}`` (the intersection of the
    two level sets), placed where the column first appears.

    Returns
    -------
    tuple of str
        Empty for an empty conjunction; one part per predicate without a codec.
    """
    parts: list = []
    merged: dict[str, tuple[int, set]] = {}
    for p in predicates:
        col = codec.column(p.feature) if codec is not None else None
        if col is None or col.kind != "category":
            parts.append(predicate_text(p, codec, max_levels))
        elif p.feature in merged:
            i, codes = merged[p.feature]
            merged[p.feature] = (i, codes & set(col.selected(p.op, p.threshold)))
        else:
            merged[p.feature] = (len(parts), set(col.selected(p.op, p.threshold)))
            parts.append("")
    for feature, (i, codes) in merged.items():
        parts[i] = codec.column(feature).membership(codes, max_levels)
    return tuple(parts)


def conjunction_text(predicates: Sequence, codec: TabularCodec | None = None, max_levels: int = MAX_LEVELS) -> str:
    """``" AND "``-joined :func:`conjunction_parts` (``""`` for an empty conjunction)."""
    return " AND ".join(conjunction_parts(predicates, codec, max_levels))
