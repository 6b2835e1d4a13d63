"""What the Model & data page shows: the model card and a page of the data table (built in its layout, and by
its table callback for the other pages)."""
from dash import dcc, html

from app import services
from app.shell.pages import ROW_PAGE_TABLE
from app.shell.row_status import row_status_data
from app.views.components import card, fmt, metric, metric_row


def model_card():
    """Task, classes, held-out metrics and the table's size, as a card."""
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
             metric("Rows", f"{s.n_train:,} train + {s.n_test:,} held-out"), metric("Features", f"{len(s.feature_names):,}")]
    more = html.P(dcc.Link("Curves, intervals and the confusion at any threshold: Performance →", href="/performance"),
                  className="small mb-1")
    return card("Model", [metric_row(items), more],
                source=f"{s.source}. Metrics computed on the held-out rows; {how}.")


def table_page(page_current, page_size, column_page=1, filter_query=None):
    """``(records, columns, page_count, header tooltips, note)`` of one page of the data table, with the feature
    columns of ``column_page`` (1-based), of the rows ``filter_query`` keeps (the table's filter row); the note
    says how many rows the filter keeps and which feature columns are shown."""
    records, page_count = services.data_page(page_current or 0, page_size or 12, column_page, filter_query)
    columns = services.data_columns(column_page) if records or filter_query else []
    keys = {c["id"] for c in columns}
    tips = {key: f"{name}: {text}" for key, name, text in services.feature_descriptions() if key in keys}
    kept = ""
    if filter_query:
        kept = f"{len(services.filtered_rows(filter_query)):,} of {services.row_count():,} rows match the filter"
    return records, columns, page_count, tips, " · ".join(t for t in (kept, column_note(columns)) if t)


def column_note(columns) -> str:
    """"Feature columns 21–40 of 108" above the table (empty when every column is shown)."""
    shown = [int(c["id"][1:]) for c in columns if c["id"].startswith("c")]
    total = services.table_width()
    if not shown or len(shown) == total:
        return ""
    return f"Feature columns {shown[0] + 1}–{shown[-1] + 1} of {total:,}"


def explain_links(row):
    """Links that open the chosen row's explanations (the row travels in the URL: ``?row=N``)."""
    if row is None:
        return "Click a row, or choose one in the navbar, to explain it."
    links = [dcc.Link(f"{page.link} →", href=f"{page.path}?row={int(row)}", className="me-3")
             for page in ROW_PAGE_TABLE if page.link and services.why_not(page.family) is None]
    return [html.Span(f"Row {int(row)}: ", className="me-2")] + links


def row_links(row):
    """``(links, navbar status data, {"row": row})`` of ``row`` on this page: in its layout, and on each row change
    (:func:`app.callbacks.overview.render_row`)."""
    return explain_links(row), row_status_data(row), {"row": row}


def opening_row(query: dict) -> int:
    """The row the navbar's box holds as the page opens: the URL's ``row`` when the shell takes it (a whole number
    of the table), else the first held-out row (the box's default)."""
    try:
        row = int(query.get("row"))
    except (TypeError, ValueError):
        return services.default_row()
    return row if 0 <= row < services.row_count() else services.default_row()
