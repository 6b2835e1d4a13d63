"""Model & data: task, classes, held-out metrics and the data table (paged on the server)."""
import dash
import dash_bootstrap_components as dbc
from dash import dash_table, html

from app import ids
from app.url_state import from_url
from app.components import card, row_status_store
from app.overview_views import model_card, table_page

dash.register_page(__name__, path="/", name="Model & data", title="Candor · Model & data", order=0)

PAGE_SIZE = 12


def layout(**query):
    """The page with its summary and the table's page filled in (issue 14: the landing page settles with no
    second wave of requests after its layout; the table's page is the URL's, set by :func:`from_url`)."""
    tree = _layout(**query)
    table = next(c for c in tree._traverse_ids() if c.id == ids.DATA_TABLE)
    table.data, table.columns, table.page_count, table.tooltip_header = table_page(table.page_current,
                                                                                  table.page_size)
    return tree


@from_url('/')  # the view's state from and to its URL (app/url_state.py)
def _layout(**_):
    table = dash_table.DataTable(
        id=ids.DATA_TABLE, page_action="custom", page_current=0, page_size=PAGE_SIZE, page_count=1,
        style_table={"overflowX": "auto"}, style_cell={"fontSize": 12, "padding": "4px", "minWidth": "70px"},
        style_header={"fontWeight": "600"}, cell_selectable=True,
    )
    return html.Div([
        html.H2("Model & data"), row_status_store("overview"),
        html.Div(model_card(), id=ids.SUMMARY),
        card("Data (click a row to explain it)",
             [html.P("Only the page you see is sent to the browser; rows are numbered as in the row picker.",
                     className="text-muted small"), html.Div(id=ids.EXPLAIN_LINKS, className="small mb-2"), table]),
    ])
