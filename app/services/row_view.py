"""The Descriptive page's row view: SHAP and LIME of one row, their agreement, and the row's values as shown.

A row change must not change the height of the page's figures: a figure whose height changes resizes its
container, and Dash's graph then redraws it once more after a 100 ms debounce (``Plotly.Plots.resize``), which
was the slowest tenth of row clicks in Chromium (issue 14). The waterfall's height depends on how many lines
its longest label takes, so the view carries, for every feature, the widest value it can show
(:func:`widest_value_labels`): the figure sizes itself for those, whatever the row.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

import explainers as ex
from explainers._codec import value_labels
from explainers.numbers import number_text, plain_length_bound
from explainers.metrics import RankAgreement
from workspace.errors import CandorError

from ._core import built_store, lazy, ready_entry, workspace
from ._requests import yield_to_requests
from .row_plots import shown_rows
from .row_pool import prepared_rows
from .whatif import Editor, editor
from .tabular import (check_row, default_row, display_codec, lime_row, raw_players_offered, shap_players_row,
                      shap_row)

WIDEST_SAMPLE = 500
"""Rows (a seeded uniform sample, :func:`~.row_plots.shown_rows`) whose display values are measured, besides each
column's smallest and largest."""


@dataclass(frozen=True)
class LocalView:
    """SHAP and LIME for one row.

    ``labels``: the row's values as shown (levels, dates, 4-digit numbers), one per SHAP feature.
    ``widest``: per column of the table (LIME's features; SHAP's too unless its players are a Pipeline's raw
    columns), the longest value text any row shows (:func:`widest_value_labels`).
    """

    shap: ex.Explanation
    lime: ex.Explanation
    agreement: RankAgreement
    labels: tuple[str, ...] = ()
    widest: tuple[str, ...] = ()


def _widest() -> tuple[str, ...]:
    X = workspace().X
    values = X.to_numpy(dtype=float, na_value=np.nan)
    rows = shown_rows(len(values), WIDEST_SAMPLE).rows
    with np.errstate(all="ignore"):  # a column at a time: the whole table's copy was 27 MB of Adult's warm-up peak
        finite = (np.where(np.isfinite(col), col, np.nan) for col in values.T)
        extremes = [int(i) for col in finite if np.isfinite(col).any() for i in (np.nanargmin(col), np.nanargmax(col))]
    codec = display_codec()
    V = values[np.unique(np.concatenate([rows, np.asarray(extremes, dtype=int)]))]  # the measured rows, in order
    per_value = codec is None or len(codec.columns) != V.shape[1]  # value_labels' own test
    plain_numbers = [per_value or (c.kind == "numeric" and c.display is None)
                     for c in (codec.columns if not per_value else [None] * V.shape[1])]
    bounds = plain_length_bound(V, 4)  # value_labels' ".4g" is plain(v, 4, trim=True)
    widest = []
    for j in range(V.shape[1]):
        text = (lambda v: number_text(v, ".4g")) if per_value else codec.columns[j].text
        widest.append(_longest(V[:, j], text, bounds[:, j] if plain_numbers[j] else None))
    return tuple(widest)


def _longest(col: np.ndarray, text, bound: np.ndarray | None) -> str:
    """The first of the longest ``text(v)`` over ``col`` (in order), as formatting every value finds it.

    ``bound`` (:func:`explainers.numbers.plain_length_bound`, for a column shown as plain numbers) bounds each text's
    length: values are formatted from the largest bound down while one could still be longer than the longest found,
    then in order among those that could reach it; a 10,000-column table's 2 million texts took most of ``python -m app
    check``'s Descriptive step (issue 27), and few are formatted now. Without one, every value is.
    """
    found: dict[int, str] = {}

    def at(i: int) -> str:
        if i not in found:
            found[i] = text(float(col[i]))
        return found[i]
    if bound is None:
        return max((at(i) for i in range(len(col))), key=len, default="")
    bound = np.where(np.isfinite(col), bound, 99)  # NaN and infinities: format them (MISSING, "n/a", "∞")
    longest = 0
    for i in np.argsort(-bound, kind="stable"):
        if bound[i] <= longest:
            break
        longest = max(longest, len(at(int(i))))
    return next((at(int(i)) for i in np.flatnonzero(bound >= longest) if len(at(int(i))) == longest), "")


widest_value_labels = lazy("widest_value_labels", _widest, warm=True)
"""Per column of the table, the longest display text of its values: measured on :data:`WIDEST_SAMPLE` seeded
rows and every column's smallest and largest value (a bound for the figure's layout, not a guarantee: a
longer label still shows whole, in a taller figure)."""


def _stored_views() -> dict[int, LocalView]:
    views = {}
    for r in prepared_rows():
        yield_to_requests()  # a click meanwhile is served first (the warm-up computes this)
        views[r] = _view(r, 5, False)
    return views


stored_views = lazy("stored_row_views", _stored_views, warm="late")
"""Served from a store, the page's view (k = 5, SHAP's default players) of each stored row prepared ahead
(:func:`~.row_pool.prepared_rows`: those "Random row" picks from, at most 500, or every row of a whole small table),
computed by the warm-up ("late": after the pages' own values; read a row at a time from the store, 2 s on Adult's
500, which held the Descriptive page's global view back); empty without a store. Reading and comparing a
row's two explanations took 11 ms of each click on a server idle between clicks (1.4 ms when busy): the CPU's
caches go cold between a user's clicks, so the less code a click runs, the sooner it answers."""


def _first_view() -> LocalView:
    return _view(default_row(), 5, False)  # never local_view, which answers this row from this value


first_row_view = lazy("first_row_view", _first_view, warm="first")
"""The page's view of the row it opens on (the first held-out row), computed by the warm-up before any other step and
before the first request (issue 23): its SHAP and LIME explainers are built and the row explained while the server
starts, so the Descriptive page's first answer is a cache hit (its first row cost 3.7 CPU s on an Adult
HistGradientBoosting pipeline, most of it LIME's and Tree SHAP's set-up)."""


def _lacking_row_explainers() -> bool:
    from . import tabular

    if built_store() is None:
        return False
    tabular._shap()
    # one LIME explanation, thrown away, sends LIME's neighbourhoods to the model once: its outputs there are kept
    # (explainers/_lime_outputs.py), so the first row the store lacks sends only itself, as every later one does
    try:  # a row the model cannot explain says why when it is asked for, not here
        tabular.guarded("LIME's neighbourhoods", tabular._lime().explain, tabular.row_frame(default_row()))
    except CandorError:
        pass
    return True


lacking_row_explainers = lazy("lacking_row_explainers", _lacking_row_explainers, warm=True)
"""Served from a store, SHAP's and LIME's explainers for the rows it lacks, built by the warm-up (True); live, the
first row's view builds them (:data:`first_row_view`; False). Building them was most of the first row a store lacked
(Adult's one-hot GradientBoosting: 165 ms of CPU for SHAP's, 84 for LIME's, against 6 and 65 for then explaining a
row; in Chromium that row settled in 499 ms, the next ones in 180-240, issue 23). LIME's model outputs on its
neighbourhoods are kept by the warm-up too (one row explained and thrown away): the first row a store lacked still
took 186-250 ms in process against 40-50 for the next ones, which send the model only themselves."""


def local_view(row, k: int = 5, raw_players: bool = False) -> LocalView:
    """SHAP and LIME for one row, their rank agreement (Spearman, top-k overlap) and the row's display values.

    ``raw_players``: SHAP with raw columns as players (:func:`~.tabular.shap_players_row`) where the default
    sums one-hot children (:func:`~.tabular.raw_players_offered`); ignored elsewhere. A stored row's default
    view is the one the warm-up prepared (:func:`stored_views`), never waited for; the first held-out row's
    is :func:`first_row_view` (waited for while the warm-up computes it: a second computation beside it
    would only slow both).
    """
    number = stored_row_number(row)
    if k == 5 and number is not None and not (raw_players and raw_players_offered()):
        found = ready_entry("stored_row_views", number)
        if found is not None:
            return found
    if k == 5 and not raw_players and number is not None and number == default_row():
        return first_row_view()  # waits for the warm-up's computation of it, if under way, instead of repeating it
    return _view(row, k, raw_players)


def stored_row_number(row) -> int | None:
    """``row`` as a key of the warm-up's stored rows (:func:`stored_views`): an integer row number, else None."""
    return int(row) if isinstance(row, (int, np.integer)) and not isinstance(row, bool) else None


def _view(row, k: int, raw_players: bool) -> LocalView:
    s = shap_players_row(row) if raw_players and raw_players_offered() else shap_row(row)
    l = lime_row(row)
    return LocalView(s, l, ex.rank_agreement(s, l, k), value_labels(s.feature_values, display_codec()),
                     widest_value_labels())


def row_values(row) -> tuple[str, ...]:
    """The values of table row ``row`` as the analyst pages write them (the Local page's row values): category
    levels instead of their codes, dates, and the features file's units and formats (:func:`value_labels` through
    :func:`display_codec`). The study's stimuli show these (``app/services/study_stimuli.py``)."""
    return value_labels(workspace().X.iloc[check_row(row)].to_numpy(dtype=float), display_codec())


def whatif_editor(row, edits=None) -> Editor:
    """The what-if editor of table row ``row`` with ``edits`` applied (:func:`app.services.whatif.editor`).

    Raises
    ------
    CandorError
        For a row outside the table, or an edit refused (one line naming the feature and what it takes).
    """
    return editor(check_row(row), edits)
