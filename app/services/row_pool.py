"""The held-out rows the navbar's "Random row" button picks from, sent to the browser once per page load."""
from __future__ import annotations

import numpy as np

from ._core import built_store, workspace

RANDOM_POOL_MAX = 2_000
"""At most this many held-out row ids go to the browser for its "Random row" button (a seeded sample beyond: about
14 kB in every full page load, whatever the size of the table)."""


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
