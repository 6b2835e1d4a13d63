"""Model & data: task, classes, held-out metrics and the data table (paged on the server)."""
import dash
import dash_bootstrap_components as dbc
from dash import dash_table, dcc, html

from app.shell import ids
from app import services
from app.shell.url_state import from_url
from app.views.components import card, row_status_store
from app.views.overview import model_card, opening_row, row_links, table_page

dash.register_page(__name__, path="/", name="Model & data", title="Candor · Model & data", order=0)

PAGE_SIZE = 12


def layout(**query):
    """The page with its summary, the table's page and the opening row's links and navbar status filled in (issue
    14: the landing page settles with no request after its layout; the table's page is the URL's, set by
    :func:`from_url`; another row than the opening one is asked for by the row box, app/callbacks/overview.py)."""
    tree = _layout(**query)
    found = {c.id: c for c in tree._traverse_ids() if c.id in (ids.DATA_TABLE, ids.TABLE_COLUMNS, ids.TABLE_COLUMNS_NOTE)}
    table, pager = found[ids.DATA_TABLE], found[ids.TABLE_COLUMNS]
    table.data, table.columns, table.page_count, table.tooltip_header, found[ids.TABLE_COLUMNS_NOTE].children = (
        table_page(table.page_current, table.page_size, pager.active_page))  # the pages the URL set
    return tree


@from_url('/')  # the view's state from and to its URL (app/shell/url_state.py)
def _layout(**query):
    table = dash_table.DataTable(
        id=ids.DATA_TABLE, page_action="custom", page_current=0, page_size=PAGE_SIZE, page_count=1,
        filter_action="custom", filter_query="",  # filtered by value on the server (app/services/table_filter.py)
        style_table={"overflowX": "auto"}, style_cell={"fontSize": 12, "padding": "4px", "minWidth": "70px"},
        style_header={"fontWeight": "600"}, cell_selectable=True,
    )
    pages = services.column_pages()
    pager = html.Div([  # a wide table's feature columns a page at a time (all 108 of Adult's drew 180 ms slower)
        html.Span(id=ids.TABLE_COLUMNS_NOTE, className="small text-muted me-3"),
        html.Nav(dbc.Pagination(id=ids.TABLE_COLUMNS, max_value=pages, active_page=1, fully_expanded=False,
                                previous_next=True, size="sm", class_name="mb-0"), **{"aria-label": "feature columns"},
                 style=None if pages > 1 else {"display": "none"}),
    ], className="d-flex align-items-center flex-wrap mb-2")  # the note also says how many rows the filter keeps
    links, status, shown = row_links(opening_row(query))
    return html.Div([
        html.H2("Model & data"), row_status_store("overview", status), dcc.Store(id=ids.OVERVIEW_ROW_SHOWN, data=shown),
        dcc.Store(id=ids.OVERVIEW_ROW_WANTED),
        html.Div(model_card(), id=ids.SUMMARY),
        card("Data (click a row to explain it)",
             [html.P("Only the page you see is sent to the browser; rows are numbered as in the row picker. Filter "
                     "by value in the row under the headers: a value (a number column: equal to it; a text column: "
                     "containing it), or an operator and a value (> 15, <= 0.5, != train, contains Priv).",
                     className="text-muted small"), html.Div(links, id=ids.EXPLAIN_LINKS, className="small mb-2"),
              pager, table]),
    ])
