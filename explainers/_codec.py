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
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from pandas.api import types as ptypes

__all__ = ["ColumnCode", "TabularCodec", "MISSING"]

MISSING = "(missing)"
_EPOCH = pd.Timestamp("1970-01-01")
_DAY = pd.Timedelta(days=1)


@dataclass(frozen=True)
class ColumnCode:
    """How one raw column is encoded.

    Parameters
    ----------
    name : str
        The column name exactly as the user wrote it.
    kind : {"numeric", "category", "datetime"}
    dtype : str
        The raw pandas dtype, for messages and decoding.
    levels : tuple
        Raw values of a category column, in code order (``MISSING`` last if present).
    note : str
        What was done to the column, for display ("" if nothing notable).
    """

    name: str
    kind: str
    dtype: str
    levels: tuple = ()
    note: str = ""
    na: object = None
    """The column's own missing value (``None``, ``nan`` or ``pd.NA``), given back to the model as it was."""

    def label(self, code: float) -> str:
        """The display text of an encoded value (a level name, a date or a number)."""
        if np.isnan(code):
            return MISSING
        if self.kind == "category":
            v = self.levels[int(np.clip(round(code), 0, len(self.levels) - 1))]
            return "(empty string)" if v == "" else str(v)
        if self.kind == "datetime":
            return str((_EPOCH + code * _DAY).date())
        return f"{code:.6g}"


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
        self._dtypes = [frame[c].dtype for c in self._raw_columns] if frame.columns.is_unique else list(frame.dtypes)
        codes = []
        for j, col in enumerate(self._raw_columns):
            codes.append(self._fit_column(str(col), frame.iloc[:, j]))
        self.columns = tuple(codes)
        self.names = tuple(c.name for c in codes)

    @staticmethod
    def _fit_column(name: str, s: pd.Series) -> ColumnCode:
        dtype = str(s.dtype)
        if ptypes.is_datetime64_any_dtype(s.dtype):
            return ColumnCode(name, "datetime", dtype, note="encoded as days since 1970-01-01")
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
        for j, code in enumerate(self.columns):
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
        return pd.DataFrame(out, columns=list(self.names), index=frame.index)

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
        data = {}
        for j, (code, dtype) in enumerate(zip(self.columns, self._dtypes)):
            z = Z[:, j]
            if code.kind == "numeric":
                col = pd.Series(z)
                if ptypes.is_integer_dtype(dtype) or ptypes.is_bool_dtype(dtype):
                    if isinstance(dtype, np.dtype) and np.isnan(z).any():
                        col = pd.Series(z)  # a numpy int column cannot hold NaN: keep float
                    else:
                        col = col.round().astype(dtype)
                elif not isinstance(dtype, np.dtype):
                    col = col.astype(dtype)
            elif code.kind == "datetime":
                col = pd.Series(_EPOCH + pd.to_timedelta(z, unit="D"))
            else:
                idx = np.clip(np.nan_to_num(np.round(z), nan=0), 0, len(code.levels) - 1).astype(int)
                vals = [code.levels[i] for i in idx]
                col = pd.Series([code.na if v == MISSING else v for v in vals], dtype=object)
                if not isinstance(dtype, np.dtype):  # category, str, nullable boolean: back to that dtype
                    col = col.astype(dtype)
            data[j] = col.reset_index(drop=True)
        out = pd.DataFrame(data)
        out.columns = self._raw_columns
        return out

    def labels(self, encoded_row) -> tuple[str, ...]:
        """Display text of one encoded row, e.g. ``("Private", "(missing)", "39")``."""
        return tuple(c.label(float(v)) for c, v in zip(self.columns, np.asarray(encoded_row, dtype=float)))

    @property
    def categorical(self) -> tuple[int, ...]:
        """Positions of category columns."""
        return tuple(j for j, c in enumerate(self.columns) if c.kind == "category")

    def notes(self) -> tuple[str, ...]:
        """One line per column that was transformed notably."""
        return tuple(f"{c.name}: {c.note}" for c in self.columns if c.note and c.kind != "category")
