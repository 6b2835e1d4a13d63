"""Which pages explain the navbar's row: one table for the URL's ``row`` parameter, the navbar's row picker and the
landing page's links to a row's explanations (issue 24: written three times before)."""
from __future__ import annotations

from typing import NamedTuple


class RowPage(NamedTuple):
    """A page that explains the navbar's row.

    Attributes
    ----------
    path : str
        The page's path; the row travels in its URL (``?row=N``) and the navbar's row picker shows on it.
    link : str or None
        The name the landing page (Model & data) links to the row's explanation with; None: not linked.
    family : str or None
        The method family the page requires (``services.why_not``) for that link; None: every model.
    whatif : bool
        Whether the page explains the what-if editor's edited row (``?edit=``, :mod:`app.views.whatif`).
    """

    path: str
    link: str | None = None
    family: str | None = None
    whatif: bool = False


ROW_PAGE_TABLE = (RowPage("/"), RowPage("/descriptive", "Descriptive", whatif=True),
                  RowPage("/persuasive", "Persuasive", "persuasive", whatif=True), RowPage("/attention"))
"""Every page that explains the navbar's row, in the navbar's order."""

ROW_PAGES = tuple(p.path for p in ROW_PAGE_TABLE)
"""Paths of :data:`ROW_PAGE_TABLE`: the pages whose URL carries ``row`` and that show the row picker."""

WHATIF_PAGES = tuple(p.path for p in ROW_PAGE_TABLE if p.whatif)
"""Paths of the pages that explain the edited row and carry it in their URL (``?edit=``)."""
