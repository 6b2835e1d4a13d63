"""The Model & data page's table: a page of rows, and of a wide table's feature columns, as the browser gets them.

Only the rows on screen and :data:`COLUMN_PAGE` feature columns reach the browser; values as the user's table
has them (numbers rounded, missing values named), outputs from the warm-up's :data:`~.tabular.model_outputs`.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from workspace.errors import CandorError

from ._core import row_cache, workspace
from .tabular import _outputs_of, _true_label
from . import table_filter


COLUMN_PAGE = 20
"""Feature columns the data table shows at once, beside id, split, truth and output: the rest are a click away
(``columns`` of :func:`data_columns`). All 108 of Adult's took 180 ms more to draw on the landing page."""


def shown_table() -> pd.DataFrame:
    """The table the data table shows: the raw one, when the model takes transformed columns, else ``X``."""
    ws = workspace()
    return ws.raw if ws.raw is not None else ws.X


_shown_table = shown_table


def column_names() -> list[str]:
    """The data table's feature columns as it heads them (display names, once a features file relabelled them)."""
    return [str(c) for c in shown_table().columns]


def is_number_dtype(dtype) -> bool:
    """Whether the table shows a column of ``dtype`` as numbers (rounded; booleans are text)."""
    return pd.api.types.is_numeric_dtype(dtype) and not pd.api.types.is_bool_dtype(dtype)


def cell_texts(column: pd.Series) -> list:
    """``column``'s cells as the table shows them (:func:`_display`): numbers rounded, missing values named."""
    return [row[0] for row in _display(column.to_frame())]


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
    """The data table's columns, ``{"name": shown, "id": key, "type": "numeric" or "text"}`` (the filter row's default
    operator: = or contains), in display order: id, split, truth, output and
    the feature columns of ``column_page`` (1-based; :data:`COLUMN_PAGE` a page).

    Keys are ours (``id``, ``_split``, ``_truth``, ``_output``, ``c0``, ``c1``, ...; ``c<j>`` is feature ``j``
    of the whole table), never a user's column name: a column named ``id``, ``split`` or like the target would
    otherwise overwrite the row number the table links by (``row_id``) or another column.
    """
    ws = workspace()
    table = _shown_table()
    names = [str(c) for c in table.columns]
    kind = lambda number: "numeric" if number else "text"  # noqa: E731  (the filter row's default: = or contains)
    return ([{"name": "id", "id": "id", "type": "numeric"}, {"name": "split", "id": "_split", "type": "text"},
             {"name": ws.target, "id": "_truth", "type": kind(not ws.is_classifier)},
             {"name": ws.output_label, "id": "_output", "type": "numeric"}]
            + [{"name": names[j], "id": f"c{j}", "type": kind(is_number_dtype(table.dtypes.iloc[j]))}
               for j in _column_window(column_page)])


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


def _filter_column(key: str):
    """``(name as headed, numbers or None, texts)`` of the data table's column ``key`` over every row, for a filter."""
    ws = workspace()
    n = len(ws.X)
    if key == "id":
        return "id", np.arange(n, dtype=float), None
    if key == "_output":
        return ws.output_label, np.asarray(_outputs_of(np.arange(n)), dtype=float), None
    if key == "_split":
        return "split", None, np.where(np.isin(np.arange(n), ws.test_idx), "held-out", "train")
    if key == "_truth":
        if not ws.is_classifier:
            return ws.target, np.asarray(ws.y, dtype=float), None
        return ws.target, None, np.asarray([_true_label(r) for r in range(n)], dtype=object)
    names = column_names()
    j = int(key[1:]) if key[:1] == "c" and key[1:].isdigit() and len(key) < 11 else -1
    if not 0 <= j < len(names):
        raise CandorError(f"the table has no column {key[:40]!r} to filter")
    column = shown_table().iloc[:, j]
    texts = np.asarray([str(t) for t in cell_texts(column)], dtype=object)
    numbers = column.to_numpy(dtype=float, na_value=np.nan) if is_number_dtype(column.dtype) else None
    return names[j], numbers, texts


@row_cache(maxsize=32)
def _kept(conditions: tuple) -> np.ndarray:
    keep = np.ones(len(workspace().X), dtype=bool)
    for c in conditions:
        keep &= table_filter.mask(c, *_filter_column(c.key))
    return np.flatnonzero(keep)


def filtered_rows(query) -> np.ndarray:
    """The rows (positions, in order) the table's filter ``query`` keeps (:mod:`.table_filter`): all for none.

    Raises
    ------
    CandorError
        As :func:`~.table_filter.parse`, or for a condition that does not fit its column (a word compared with ``>``
        on a number column, ``<`` on a text column), naming the column as the table heads it.
    """
    return _kept(table_filter.parse(query))


MAX_PAGE_ROWS = 100
"""Most rows of the data table one page may hold (the Model & data page shows 12): a viewer never gets the table."""


def data_page(page: int, page_size: int, column_page: int = 1,
              filter_query: str | None = None) -> tuple[list[dict], int]:
    """One page of the data table as records (only these rows, and only the feature columns of ``column_page``,
    reach the browser); with ``filter_query`` (the table's filter row, :mod:`.table_filter`), a page of the rows it
    keeps.

    Returns
    -------
    records : list of dict
        Keyed as :func:`data_columns` says: ``id`` (row number), ``_split``, ``_truth`` (the true
        label), ``_output`` (P(positive class), margin or prediction) and ``c<j>`` (feature j).
    page_count : int

    Raises
    ------
    CandorError
        If ``page_size`` is not a whole number from 1 to :data:`MAX_PAGE_ROWS`, or as
        :func:`~.table_filter.filtered_rows` for a filter it cannot read or apply.
    """
    if (isinstance(page_size, bool) or not isinstance(page_size, (int, float)) or not 1 <= page_size <= MAX_PAGE_ROWS
            or page_size != int(page_size)):
        raise CandorError(f"a page of the table holds 1 to {MAX_PAGE_ROWS} rows, not {str(page_size)[:20]}")
    page_size = int(page_size)
    ws = workspace()
    kept = filtered_rows(filter_query) if filter_query else None
    n = len(ws.X) if kept is None else len(kept)
    page_count = max(1, -(-n // page_size))
    page = min(max(int(page or 0), 0), page_count - 1)
    rows = np.arange(page * page_size, min(n, (page + 1) * page_size))
    if kept is not None:
        rows = kept[rows]
    if not len(rows):  # a filter that keeps no row: no model call for nothing
        return [], page_count
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

    numeric = [is_number_dtype(t) for t in frame.dtypes]
    cells = frame.astype(object).to_numpy()  # one conversion of the page (per column it cost 37 ms on Adult)

    def shown(v, num):
        if num:
            return MISSING if pd.isna(v) else round(float(v), 4)
        if v is None or v is pd.NA or (isinstance(v, float) and np.isnan(v)) or v is pd.NaT:
            return MISSING
        return "(empty string)" if v == "" else str(v)

    return [[shown(v, num) for v, num in zip(row, numeric)] for row in cells]
