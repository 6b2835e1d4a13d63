"""The Model & data page's table: a page of rows, and of a wide table's feature columns, as the browser gets them.

Only the rows on screen and :data:`COLUMN_PAGE` feature columns reach the browser; values as the user's table
has them (numbers rounded, missing values named), outputs from the warm-up's :data:`~.tabular.model_outputs`.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from workspace.errors import CandorError

from ._core import workspace
from .tabular import _outputs_of, _true_label


COLUMN_PAGE = 20
"""Feature columns the data table shows at once, beside id, split, truth and output: the rest are a click away
(``columns`` of :func:`data_columns`). All 108 of Adult's took 180 ms more to draw on the landing page."""


def _shown_table() -> pd.DataFrame:
    """The table the data table shows: the raw one, when the model takes transformed columns, else ``X``."""
    ws = workspace()
    return ws.raw if ws.raw is not None else ws.X


def table_width() -> int:
    """How many feature columns the data table has (the raw table's, when the model takes transformed ones)."""
    return _shown_table().shape[1]


def column_pages() -> int:
    """How many pages of :data:`COLUMN_PAGE` feature columns the data table has (at least 1)."""
    return max(1, -(-table_width() // COLUMN_PAGE))


def _column_window(page) -> range:
    """The feature positions on column page ``page`` (1-based, clipped to the pages there are)."""
    d = table_width()
    page = min(max(int(page or 1), 1), column_pages())
    return range((page - 1) * COLUMN_PAGE, min(d, page * COLUMN_PAGE))


def data_columns(column_page: int = 1) -> list[dict]:
    """The data table's columns, ``{"name": shown, "id": key}``, in display order: id, split, truth, output and
    the feature columns of ``column_page`` (1-based; :data:`COLUMN_PAGE` a page).

    Keys are ours (``id``, ``_split``, ``_truth``, ``_output``, ``c0``, ``c1``, ...; ``c<j>`` is feature ``j``
    of the whole table), never a user's column name: a column named ``id``, ``split`` or like the target would
    otherwise overwrite the row number the table links by (``row_id``) or another column.
    """
    ws = workspace()
    names = [str(c) for c in _shown_table().columns]
    return ([{"name": "id", "id": "id"}, {"name": "split", "id": "_split"}, {"name": ws.target, "id": "_truth"},
             {"name": ws.output_label, "id": "_output"}]
            + [{"name": names[j], "id": f"c{j}"} for j in _column_window(column_page)])


def feature_descriptions() -> list[tuple[str, str, str]]:
    """The features file's descriptions: ``(table key, display name, description)`` for each described column.

    Keys as :func:`data_columns` gives them (``c<j>``); empty without a features file
    (:mod:`workspace.feature_names`)."""
    ws = workspace()
    if ws.features is None:
        return []
    shown = [str(c) for c in _shown_table().columns]  # display names once relabelled
    out = []
    for column, f in ws.features.formats.items():
        j = next((i for i, n in enumerate(shown) if n in (f.name, str(column))), None)
        if j is not None and f.description:
            out.append((f"c{j}", f.name, f.description))
    return sorted(out, key=lambda t: int(t[0][1:]))


MAX_PAGE_ROWS = 100
"""Most rows of the data table one page may hold (the Model & data page shows 12): a viewer never gets the table."""


def data_page(page: int, page_size: int, column_page: int = 1) -> tuple[list[dict], int]:
    """One page of the data table as records (only these rows, and only the feature columns of ``column_page``,
    reach the browser).

    Returns
    -------
    records : list of dict
        Keyed as :func:`data_columns` says: ``id`` (row number), ``_split``, ``_truth`` (the true
        label), ``_output`` (P(positive class), margin or prediction) and ``c<j>`` (feature j).
    page_count : int

    Raises
    ------
    CandorError
        If ``page_size`` is not a whole number from 1 to :data:`MAX_PAGE_ROWS`.
    """
    if (isinstance(page_size, bool) or not isinstance(page_size, (int, float)) or not 1 <= page_size <= MAX_PAGE_ROWS
            or page_size != int(page_size)):
        raise CandorError(f"a page of the table holds 1 to {MAX_PAGE_ROWS} rows, not {str(page_size)[:20]}")
    page_size = int(page_size)
    ws = workspace()
    n = len(ws.X)
    page_count = max(1, -(-n // page_size))
    page = min(max(int(page or 0), 0), page_count - 1)
    rows = np.arange(page * page_size, min(n, (page + 1) * page_size))
    cols = _column_window(column_page)
    out = _outputs_of(rows)
    is_test = np.isin(rows, ws.test_idx)
    records = []
    shown = _display(_shown_table().iloc[rows, cols.start:cols.stop])
    for i, r in enumerate(rows):
        truth = _true_label(int(r)) if ws.is_classifier else round(float(ws.y[r]), 4)
        rec = {"id": int(r), "_split": "held-out" if is_test[i] else "train", "_truth": truth,
               "_output": round(float(out[i]), 3 if ws.output_kind == "probability" else 4)}
        rec.update({f"c{j}": v for j, v in zip(cols, shown[i])})
        records.append(rec)
    return records, page_count


def _display(frame: pd.DataFrame) -> list[list]:
    """JSON-safe rows of raw values, in column order: numbers rounded, missing values as "(missing)", the rest as text."""
    from explainers._column_code import MISSING

    numeric = [pd.api.types.is_numeric_dtype(t) and not pd.api.types.is_bool_dtype(t) for t in frame.dtypes]
    cells = frame.astype(object).to_numpy()  # one conversion of the page (per column it cost 37 ms on Adult)

    def shown(v, num):
        if num:
            return MISSING if pd.isna(v) else round(float(v), 4)
        if v is None or v is pd.NA or (isinstance(v, float) and np.isnan(v)) or v is pd.NaT:
            return MISSING
        return "(empty string)" if v == "" else str(v)

    return [[shown(v, num) for v, num in zip(row, numeric)] for row in cells]
