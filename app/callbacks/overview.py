"""Model & data page callbacks."""
import dash_bootstrap_components as dbc
from dash import ClientsideFunction, Input, Output, callback, clientside_callback, dcc, html

from app import ids, services
from app.callbacks.shell import row_status_data
from app.components import card, fmt, metric, metric_row


@callback(Output(ids.SUMMARY, "children"), Input(ids.URL, "pathname"))
def render_summary(_pathname):
    s = services.model_summary()
    m = s.metrics
    if "r2" in m:  # a regressor
        scores = [metric("Held-out R²", fmt(m["r2"])), metric("Held-out MAE", fmt(m["mae"])),
                  metric("Held-out RMSE", fmt(m["rmse"]))]
        how = "R², MAE and RMSE of the predictions"
    else:
        scores = [metric("Held-out accuracy", fmt(m["accuracy"])),
                  metric("Held-out ROC AUC", fmt(m.get("roc_auc", float("nan"))))]
        how = (f"threshold 0.5 on P({s.classes[1]})" if "margins" not in s.task and "labels" not in s.task
               else "accuracy of the model's own predict(); ROC AUC from the margins where there are margins")
    items = [metric("Task", s.task), metric("Classes", " / ".join(s.classes) or "(regression)"), *scores,
             metric("Rows", f"{s.n_train} train + {s.n_test} held-out"), metric("Features", str(len(s.feature_names)))]
    return card("Model", metric_row(items), source=f"{s.source}. Metrics computed now on the held-out rows; {how}.")


@callback(Output(ids.DATA_TABLE, "data"), Output(ids.DATA_TABLE, "columns"), Output(ids.DATA_TABLE, "page_count"),
          Output(ids.DATA_TABLE, "tooltip_header"),
          Input(ids.DATA_TABLE, "page_current"), Input(ids.DATA_TABLE, "page_size"))
def render_table_page(page_current, page_size):
    records, page_count = services.data_page(page_current or 0, page_size or 12)
    columns = services.data_columns() if records else []
    tips = {key: f"{name}: {text}" for key, name, text in services.feature_descriptions()}  # the features file's
    return records, columns, page_count, tips


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
