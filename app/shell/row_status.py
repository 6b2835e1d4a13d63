"""The navbar's status line of the chosen row: its text, and what a row page's callback sends for it.

Each row page's callback sends it with its panels (one request per row change, issue 14), in the page's
:func:`app.shell.ids.row_status_data` store, which a clientside callback of :mod:`app.callbacks.shell` shows.
"""
from app import services
from workspace.errors import CandorError


def show_row_status(row) -> str:
    """The navbar's status line of ``row``, or why there is none (a row outside the table, no number)."""
    if row is None:  # the number box gives None for anything outside its min/max or not a number
        return f"enter a whole row number from 0 to {services.row_count() - 1}"
    try:
        return services.row_status(row)
    except CandorError as err:
        return str(err)


def row_status_data(row) -> dict:
    """What a row page's callback puts in its :func:`app.shell.ids.row_status_data` store for the navbar (an edited
    row, ``{"row": N, "edits": ...}``, under its table row's number N)."""
    return {"row": row.get("row") if isinstance(row, dict) else row, "text": show_row_status(row)}
