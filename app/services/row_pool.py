"""Which rows are served at once: the held-out rows the navbar's "Random row" button picks from (sent to the browser
once per page load), and the stored rows prepared ahead (issue 27)."""
from __future__ import annotations

import numpy as np

from store.format import WHOLE_TABLE_MAX

from ._core import built_store, workspace

RANDOM_POOL_MAX = 2_000
"""At most this many held-out row ids go to the browser for its "Random row" button (a seeded sample beyond: about
14 kB in every full page load, whatever the size of the table)."""
STORED_VIEWS_MAX = 500
"""At most this many stored rows "Random row" picks from are prepared ahead (:func:`prepared_rows`)."""


def random_row_pool() -> dict:
    """The held-out rows the navbar's "Random row" button picks from, in the browser (no request per pick).

    Served from a store that holds only some held-out rows (``python -m app build --rows N``), the button picks
    among those rows, which show at once; any other row can still be typed in (explained on demand).

    Returns
    -------
    dict
        ``{"rows": [int, ...], "of": n, "stored": m}``: the sorted row ids, all of them or a seeded sample
        (``numpy.random.default_rng(0)``) of :data:`RANDOM_POOL_MAX` when there are more; ``n`` held-out rows in
        all; ``m`` the held-out rows the store holds when the pool is limited to them, else None.
    """
    rows = np.sort(workspace().test_idx)
    n, stored = len(rows), None
    st = built_store()
    if st is not None and 0 < len(st.rows) and len(np.intersect1d(rows, st.rows)) < n:
        rows = np.intersect1d(rows, st.rows)
        stored = len(rows)
    if len(rows) > RANDOM_POOL_MAX:
        rows = np.sort(np.random.default_rng(0).choice(rows, RANDOM_POOL_MAX, replace=False))
    return {"rows": [int(r) for r in rows], "of": n, "stored": stored}


def prepared_rows() -> list[int]:
    """The stored rows prepared ahead: their Descriptive views drawn by the warm-up
    (:func:`app.services.row_view.stored_views`), their Persuasive and Attention panels by the build
    (``app/views/stored_panels.py``).

    Every row when the store holds the whole table and it has at most :data:`WHOLE_TABLE_MAX` rows; else the stored
    rows "Random row" picks from, at most :data:`STORED_VIEWS_MAX`. Empty without a store.

    Returns
    -------
    list of int
        Sorted row positions.
    """
    st = built_store()
    if st is None:
        return []
    if len(st.rows) == len(workspace().X) <= WHOLE_TABLE_MAX:  # strictly increasing rows of the table: all of them
        return [int(r) for r in st.rows]
    return [int(r) for r in np.intersect1d(random_row_pool()["rows"], st.rows)[:STORED_VIEWS_MAX]]
