"""Your model: upload a skops model, a CSV/Parquet table and optionally a features file; they are stored on the
server, not in the browser."""
import dash
import dash_bootstrap_components as dbc
from dash import dcc, html

from workspace import limits
from app.shell import ids
from app.serve.access import has_role
from app.views.components import card
from workspace.feature_names import MAX_BYTES as MAX_FEATURES_BYTES
from workspace.uploads import max_upload_bytes

dash.register_page(__name__, path="/upload", name="Your model", title="Candor · Your model", order=90)

from app.callbacks import upload as _callbacks  # noqa: E402,F401  (registers this page's callbacks)

def _drop(component_id: str, text: str, max_size: int | None = None) -> dcc.Upload:
    return dcc.Upload(id=component_id, children=html.Div([text, html.Span(" (drop or click)", className="text-muted")]),
                      max_size=max_upload_bytes() if max_size is None else max_size, multiple=False,
                      className="upload-box border rounded p-3 mb-2", disabled=not has_role("analyst"))


def layout(**_):
    return html.Div([
        html.H2("Your model"),
        html.P("Upload a fitted scikit-learn model saved with skops (pickle files are refused; PyTorch models load "
               "from the command line) and a table with its feature columns and the target. Files stay on the "
               f"server; at most {max_upload_bytes() // 2**20:,} MiB each (the browser does not send a larger file) and at most "
               f"{int(limits.setting('CANDOR_MAX_CELLS')):,} cells (rows x columns) per table. The model you load is "
               "explained for everyone using this server.", className="text-muted small"),
        html.Div() if has_role("analyst") else dbc.Alert(
            "Uploading a model, switching it or going back to the sample needs the analyst role; ask an analyst "
            "or log in as one.", color="secondary", className="py-2 small"),
        html.Fieldset(disabled=not has_role("analyst"), className="border-0 p-0 m-0", children=[
        card("1. Model (.skops)", [_drop(ids.UPLOAD_MODEL, "Model file"), html.Div(id=ids.UPLOAD_MODEL_STATUS)]),
        card("2. Data (.csv, .tsv, .parquet)", [_drop(ids.UPLOAD_DATA, "Data file"),
                                                html.Div(id=ids.UPLOAD_DATA_STATUS)]),
        card("3. Features file (optional: .yaml, .yml, .json)", [
            html.P("Display names, descriptions and value formats of the features (mean radius: Radius (mean); "
                   "married: {percent: true}), as --features-file on the command line; at most "
                   f"{MAX_FEATURES_BYTES // 1024} KiB, read as plain data.", className="text-muted small mb-1"),
            _drop(ids.UPLOAD_FEATURES, "Features file", MAX_FEATURES_BYTES), html.Div(id=ids.UPLOAD_FEATURES_STATUS)]),
        card("4. Target column", [dbc.Label("Target column", html_for=ids.UPLOAD_TARGET, className="visually-hidden"),
                                  dbc.Select(id=ids.UPLOAD_TARGET, options=[], placeholder="target column"),
                                  dbc.Button("Explain this model", id=ids.UPLOAD_LOAD, color="primary",
                                             className="mt-2", n_clicks=0),
                                  html.Div(id=ids.UPLOAD_RESULT, className="mt-2")]),
        card("Or go back", [dbc.Button("Explain the bundled sample again", id=ids.UPLOAD_SAMPLE, color="secondary",
                                       outline=True, n_clicks=0),
                            html.Div(id=ids.UPLOAD_SAMPLE_RESULT, className="mt-2")]),
        ]),
        dcc.Store(id=ids.UPLOAD_MODEL_TOKEN), dcc.Store(id=ids.UPLOAD_DATA_TOKEN), dcc.Store(id=ids.UPLOAD_SWITCHED),
        dcc.Store(id=ids.UPLOAD_FEATURES_TOKEN),
    ])
