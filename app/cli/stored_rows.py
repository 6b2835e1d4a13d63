"""Which rows ``python -m app build`` stores (``--rows``; issue 27).

``--rows table`` stores every row of the table, ``--rows held-out`` every held-out row, ``--rows N`` the first ``N``
held-out rows (the default row and the Persuasive curve's rows come first). Without ``--rows``: every row of a
table of at most :data:`~store.format.WHOLE_TABLE_MAX` rows (1,000), else every held-out row. A row a store
lacks is explained live when chosen and added to it (``added/``), so a deployment whose viewers may ask for any row
of the table is served from a store of the whole table.
"""
from __future__ import annotations

import argparse

import numpy as np

from store.format import WHOLE_TABLE_MAX

WORDS = ("table", "held-out")


def parse(text: str) -> int | str:
    """``--rows``'s value: ``"table"``, ``"held-out"`` or a number of held-out rows (0 or more).

    Raises
    ------
    argparse.ArgumentTypeError
        For anything else (``python -m app build`` prints it as one line and exits with status 2).
    """
    if text in WORDS:
        return text
    if text.isascii() and text.isdigit():
        return int(text)
    raise argparse.ArgumentTypeError(f"takes 'table', 'held-out' or a number of held-out rows, got {text!r}")


def chosen(ws, rows: int | str | None) -> tuple[np.ndarray, str]:
    """The rows a build of ``ws`` stores, sorted, and which they are, as the manifest says it.

    Parameters
    ----------
    ws : Workspace
        What the build explains.
    rows : int, "table", "held-out" or None
        ``--rows``; None: the default rule (the whole table of at most
        :data:`~store.format.WHOLE_TABLE_MAX` rows, else every held-out row).

    Returns
    -------
    rows : ndarray of shape (N,), int64
        Positions in the table, strictly increasing.
    which : str
        ``"table"``, ``"held-out"`` or ``"first N held-out"``.
    """
    if rows is None:
        rows = "table" if len(ws.X) <= WHOLE_TABLE_MAX else "held-out"
    if rows == "table":
        return np.arange(len(ws.X), dtype=np.int64), "table"
    held_out = np.asarray(ws.test_idx, dtype=np.int64)
    if rows == "held-out" or rows >= len(held_out):
        return np.sort(held_out), "held-out"
    return np.sort(held_out[:rows]), f"first {rows} held-out"


def not_stored(which: str, lines: tuple[str, ...]) -> list[str]:
    """What a store of ``which`` rows does not hold: ``lines`` (:data:`store.format.NOT_STORED`), less the line on
    rows it lacks when it holds every row of the table."""
    return [line for line in lines if not (which == "table" and line.startswith(ROWS_LINE))]


ROWS_LINE = "rows the store does not hold"
"""How :data:`store.format.NOT_STORED`'s line on rows begins."""
