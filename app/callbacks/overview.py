"""Model & data page callbacks."""
import dash_bootstrap_components as dbc
from dash import ClientsideFunction, Input, Output, callback, clientside_callback, dcc, html

from app import ids, services
from app.callbacks.shell import row_status_data
from app.overview_views import table_page


@callback(Output(ids.DATA_TABLE, "data"), Output(ids.DATA_TABLE, "columns"), Output(ids.DATA_TABLE, "page_count"),
          Output(ids.DATA_TABLE, "tooltip_header"), Output(ids.TABLE_COLUMNS_NOTE, "children"),
          Input(ids.DATA_TABLE, "page_current"), Input(ids.DATA_TABLE, "page_size"), Input(ids.TABLE_COLUMNS, "active_page"),
          prevent_initial_call=True)
def render_table_page(page_current, page_size, column_page=1):
    """Another page of the table, or of its feature columns (the first one the page shows comes with its layout)."""
    return table_page(page_current, page_size, column_page)


# a click in the table chooses its row in the browser (assets/candor_rows.js): the row change is then one request
clientside_callback(ClientsideFunction("candor", "tableRow"), Output(ids.ROW_INPUT, "value", allow_duplicate=True),
                    Input(ids.DATA_TABLE, "active_cell"), prevent_initial_call=True)


ROW_PAGES = (("Descriptive", "/descriptive", None), ("Persuasive", "/persuasive", "persuasive"))
"""(name, path, the method family the page requires) of the pages that explain one row."""


@callback(Output(ids.EXPLAIN_LINKS, "children"), Output(ids.row_status_data("overview"), "data"),
          Input(ids.ROW_INPUT, "value"))
def render_row(row):
    """The row's links and the navbar's status line: one request per row change (issue 14)."""
    return explain_links(row), row_status_data(row)


def explain_links(row):
    """Links that open the chosen row's explanations (the row travels in the URL: ``?row=N``)."""
    if row is None:
        return "Click a row, or choose one in the navbar, to explain it."
    links = [dcc.Link(f"{name} →", href=f"{path}?row={int(row)}", className="me-3")
             for name, path, family in ROW_PAGES if services.why_not(family) is None]
    return [html.Span(f"Row {int(row)}: ", className="me-2")] + links
