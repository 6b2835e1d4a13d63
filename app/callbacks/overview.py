"""Model & data page callbacks."""
from dash import ClientsideFunction, Input, Output, State, callback, clientside_callback

from app.shell import ids
from app.views.overview import row_links, table_page


@callback(Output(ids.DATA_TABLE, "data"), Output(ids.DATA_TABLE, "columns"), Output(ids.DATA_TABLE, "page_count"),
          Output(ids.DATA_TABLE, "tooltip_header"), Output(ids.TABLE_COLUMNS_NOTE, "children"),
          Input(ids.DATA_TABLE, "page_current"), Input(ids.DATA_TABLE, "page_size"), Input(ids.TABLE_COLUMNS, "active_page"),
          Input(ids.DATA_TABLE, "filter_query"), prevent_initial_call=True)
def render_table_page(page_current, page_size, column_page=1, filter_query=None):
    """Another page of the table, of its feature columns, or of the rows its filter row keeps (the first one the page
    shows comes with its layout)."""
    return table_page(page_current, page_size, column_page, filter_query)


# a click in the table chooses its row in the browser (assets/candor_rows.js): the row change is then one request
clientside_callback(ClientsideFunction("candor", "tableRow"), Output(ids.ROW_INPUT, "value", allow_duplicate=True),
                    Input(ids.DATA_TABLE, "active_cell"), prevent_initial_call=True)


# The landing page's layout comes with its row's links and status (app/pages/overview.py): the row box asks the
# server only for another row than the one shown, so the landing page makes no request of its own
clientside_callback(
    """function(row, shown) {
        if (shown && shown.row === (row === undefined ? null : row)) {
            return window.dash_clientside.no_update;
        }
        return {row: row === undefined ? null : row};
    }""",
    Output(ids.OVERVIEW_ROW_WANTED, "data"), Input(ids.ROW_INPUT, "value"), State(ids.OVERVIEW_ROW_SHOWN, "data"))


@callback(Output(ids.EXPLAIN_LINKS, "children"), Output(ids.row_status_data("overview"), "data"),
          Output(ids.OVERVIEW_ROW_SHOWN, "data"), Input(ids.OVERVIEW_ROW_WANTED, "data"), prevent_initial_call=True)
def render_row(wanted):
    """The row's links and the navbar's status line: one request per row change (issue 14)."""
    return row_links(wanted["row"])
