"""Run the user's model on their table once before anything is explained: it must work and give numbers.

:func:`probe` catches, at load time and with a message naming the file and the columns, what would
otherwise fail deep inside an explainer: a model that refuses some rows or their missing values,
outputs that are NaN, and predictions that change when the columns go through the codec's round trip.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from explainers.model_adapter import ModelAdapter, ModelFailed

from .errors import CandorError, first_line

PROBE_ALL_ROWS = 50_000
"""Rows run through the model at load time (all of them, or a seeded sample of a bigger table)."""

PROBE_CHUNK = 4096
"""Rows encoded and run through the model at a time by the probe: its peak memory is a chunk's, not the table's
(Adult's 32,561 rows x 108 columns encoded, decoded and converted at once cost about 60 MB of peak at load)."""


def _own(exc: BaseException) -> BaseException:
    """The model's own exception inside the adapter's :class:`ModelFailed` (the probe's messages name it)."""
    return exc.__cause__ if isinstance(exc, ModelFailed) and exc.__cause__ is not None else exc


def probe(adapter: ModelAdapter, raw: pd.DataFrame, model_name: str, data_name: str) -> None:
    """Run the model on a few rows, raw and through the codec; both must work and agree.

    Parameters
    ----------
    adapter : ModelAdapter
    raw : DataFrame of shape (n_rows, n_features)
        The feature table as read.
    model_name, data_name : str
        File names for the messages.

    Raises
    ------
    CandorError
        If the model fails on some rows (naming the columns with missing values, if any), outputs NaN,
        or predicts differently after the codec's round trip.
    """
    head = raw.head(20)
    try:
        want = adapter.outputs(adapter.codec.encode(head))
        got_raw = adapter.model.predict(head if hasattr(adapter.model, "feature_names_in_") else head.to_numpy())
    except Exception as exc:
        holes = f"; {data_name} has {missing_cells(raw)}" if raw.isna().any().any() else ""
        exc = _own(exc)
        raise CandorError(f"{model_name}: the model fails on the first rows of {data_name} "
                          f"({first_line(exc).rstrip('.') if holes else first_line(exc)}{holes})") from None
    # every value of every column once (explanations only recombine values seen in some row)
    rows = raw if len(raw) <= PROBE_ALL_ROWS else raw.sample(PROBE_ALL_ROWS, random_state=0)
    try:
        every = np.concatenate([adapter.outputs(adapter.codec.encode(rows.iloc[lo:lo + PROBE_CHUNK]))
                                for lo in range(0, len(rows), PROBE_CHUNK)])
    except Exception as exc:
        why = first_line(_own(exc))
        if raw.isna().any().any():
            raise CandorError(f"{model_name}: the model refuses the missing values of {data_name} ("
                              f"{missing_cells(raw)}): {why}") from None
        raise CandorError(f"{model_name}: the model fails on some rows of {data_name} ({why})") from None
    _check_nan_outputs(every, rows, model_name, data_name)
    same = np.asarray(adapter.predict(adapter.codec.encode(head)))
    finite = np.all(np.isfinite(want) | np.isnan(want))
    if not np.array_equal(np.asarray(got_raw).astype(str), same.astype(str)) or not finite:
        raise CandorError(f"{model_name}: predictions on {data_name} change when its columns are re-encoded "
                          "(dtype round trip); please report this file")


def missing_cells(raw: pd.DataFrame, most: int = 5) -> str:
    """Where ``raw`` has missing values, for a one-line error: "missing values in 'bmi' (12 rows), 'bp' (3 rows);
    14 rows in all" (the ``most`` columns with the most, then how many more columns).

    Parameters
    ----------
    raw : DataFrame of shape (n_rows, n_features)
    most : int
        Columns named at most.
    """
    per = raw.isna().sum()
    per = per[per > 0].sort_values(ascending=False, kind="stable")
    named = ", ".join(f"{str(c)!r} ({int(n):,} row{'s' if n != 1 else ''})" for c, n in per.head(most).items())
    more = f" and {len(per) - most} more column{'s' if len(per) - most != 1 else ''}" if len(per) > most else ""
    rows = int(raw.isna().any(axis=1).sum())
    return f"missing values in {named}{more}; {rows:,} row{'s' if rows != 1 else ''} in all"


def _check_nan_outputs(out: np.ndarray, rows: pd.DataFrame, model_name: str, data_name: str) -> None:
    """Refuse NaN outputs: name the missing input cells if the NaN rows have any, else the first row."""
    bad = np.isnan(out).any(axis=1)
    if not bad.any():
        return
    holes = rows.isna().to_numpy()
    first = rows.index[int(np.flatnonzero(bad)[0])]
    if holes[bad].any(axis=1).all():
        cols = [str(c) for c in rows.columns[holes[bad].any(axis=0)]][:5]
        raise CandorError(f"{model_name}: the model outputs NaN for {int(bad.sum())} rows of {data_name}, each with "
                          f"missing values (in {', '.join(map(repr, cols))}; first row {first}); fill them in the "
                          "table as the model was trained, or drop those rows")
    raise CandorError(f"{model_name}: the model outputs NaN for {int(bad.sum())} rows of {data_name} (first row "
                      f"{first}), not all of them with missing values")
