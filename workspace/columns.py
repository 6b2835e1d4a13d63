"""Match the user's table to the model: which columns are its features, which class each target value is."""
from __future__ import annotations

import numpy as np
import pandas as pd
from pandas.api import types as ptypes

from .errors import CandorError


def feature_columns(model, df: pd.DataFrame, target: str, data_name: str) -> list:
    """The table's columns the model takes, in the model's order (``feature_names_in_`` if it has them).

    Raises
    ------
    CandorError
        Naming the missing columns, the target used as a feature, or the count that does not match.
    """
    labels = {str(c): c for c in df.columns}
    if hasattr(model, "feature_names_in_"):
        expected = [str(c) for c in model.feature_names_in_]
        missing = [c for c in expected if c not in labels]
        if missing:
            raise CandorError(f"{data_name}: columns the model expects are missing: {', '.join(missing[:10])}"
                              + (f" and {len(missing) - 10} more" if len(missing) > 10 else ""))
        if target in expected:
            raise CandorError(f"{data_name}: the model takes the target {target!r} as a feature")
        return [labels[c] for c in expected]
    features = [c for c in df.columns if str(c) != target]
    n_expected = getattr(model, "n_features_in_", len(features))
    if n_expected != len(features):
        raise CandorError(f"{data_name}: the model expects {n_expected} features, the table has {len(features)} "
                          f"columns besides {target!r}")
    return features


def _strip_label(v: str) -> str:
    v = v.strip()
    return v[:-1].strip() if v.endswith(".") else v


def encode_target(classes: tuple[str, ...], values: pd.Series, data_name: str, target: str,
                   notes: list[str], aliases: tuple[str, ...] = ()) -> np.ndarray:
    """Class index of every target value.

    Labels that differ from a class only by spaces or a trailing '.' (UCI Adult's
    test file: ``>50K.``) are normalised, and a note says how many and which.
    ``aliases`` (same order as ``classes``) are other spellings of the classes: the model's own
    ``classes_`` when ``classes`` are names given with ``--classes``.
    """
    if ptypes.is_float_dtype(values) and (values == values.round()).all():
        values = values.astype("int64")  # 1.0 is the class 1 (a CSV column with a gap reads as float)
        notes.append(f"{data_name}: target {target!r} read as decimals; whole numbers matched to the classes")
    by_text = {**{a: i for i, a in enumerate(aliases)}, **{c: i for i, c in enumerate(classes)}}
    text = values.astype(str)
    codes = text.map(by_text)
    if codes.isna().any():
        stripped = {_strip_label(c): i for i, c in enumerate(classes)}
        fixed = text[codes.isna()].map(_strip_label).map(stripped)
        if fixed.notna().all() and len(stripped) == len(classes):
            examples = sorted({f"{v!r} -> {classes[int(i)]!r}" for v, i in zip(text[codes.isna()], fixed)})[:4]
            notes.append(f"{data_name}: {int(codes.isna().sum())} target labels normalised (spaces / trailing '.' "
                         f"removed): {', '.join(examples)}")
            codes = codes.fillna(fixed)
        else:
            bad = sorted(text[codes.isna()].unique())[:5]
            raise CandorError(f"{data_name}: target {target!r} has values the model never predicts: "
                              f"{', '.join(bad)} (model classes: {', '.join(aliases or classes)}; --classes names them)")
    return codes.to_numpy(dtype=int)


def column_notes(raw: pd.DataFrame, name: str) -> list[str]:
    """One note per feature column that is empty in every row or holds one value (``nunique(dropna=False) == 1``).

    Columns of one numpy number dtype are tested together, by dtype (a 10,000-column table: not a Series, ``isna``
    and ``nunique`` per column, 10 of the load's 33 profiled seconds, issue 27); a column found empty or constant
    there, and every other column, is tested and named as one column at a time.
    """
    dtypes = list(raw.dtypes)
    clear: set[int] = set()
    if len(raw):
        by_dtype: dict = {}
        for j, dt in enumerate(dtypes):
            if isinstance(dt, np.dtype) and dt.kind in "iuf":
                by_dtype.setdefault(dt, []).append(j)
        for dt, cols in by_dtype.items():
            V = raw.iloc[:, cols].to_numpy(dtype=dt)
            empty = np.isnan(V).all(axis=0) if dt.kind == "f" else np.zeros(len(cols), bool)
            one = V.min(axis=0) == V.max(axis=0)  # False where a NaN is (min and max are NaN: two values or more)
            clear.update(c for c, suspect in zip(cols, empty | one) if not suspect)
    notes = []
    for j, col in enumerate(raw.columns):
        if j in clear:
            continue
        s = raw[col]
        if s.isna().all():
            notes.append(f"{name}: column {str(col)!r} is empty in every row")
        elif s.nunique(dropna=False) == 1:
            notes.append(f"{name}: column {str(col)!r} is constant ({s.iloc[0]!r})")
    return notes
