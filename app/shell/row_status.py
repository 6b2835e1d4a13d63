"""The navbar's one-line status of the chosen row, which each row page's callback sends with its panels (in the
page's :func:`app.shell.ids.row_status_data` store) and a clientside callback shows (``app/callbacks/shell.py``).

Here, not in a callback module, so that views (the Model & data page's opening row) build it without importing
the callbacks (issue 24: that made a cycle).
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
    """What a row page's callback puts in its :func:`app.ids.row_status_data` store for the navbar."""
    return {"row": row, "text": show_row_status(row)}
