"""Your model page callbacks: store each upload, then install the pair."""
import dash_bootstrap_components as dbc
from dash import Input, Output, State, callback, html, no_update
from dash.exceptions import PreventUpdate

from app.shell import ids
from app.views.components import error_alert
from explainers.numbers import plain
from workspace.errors import CandorError
from app.services import upload as service


def _now_explaining(done: str) -> tuple[dbc.Alert, str]:
    """Success, and a change to the page's :data:`app.shell.ids.UPLOAD_SWITCHED` store, which redraws the navbar."""
    return (dbc.Alert([done, " ", html.A("Open Model & data →", href="/", className="alert-link")], color="success"),
            done)


@callback(Output(ids.NAVBAR, "children", allow_duplicate=True), Input(ids.UPLOAD_SWITCHED, "data"),
          prevent_initial_call=True)
def redraw_navbar(switched):
    """The navbar of the new model (its name, pages and class picker; a new user saw the old model's until they
    navigated away); the upload page has no row picker.

    Its own callback, not an output of the upload's: a callback whose inputs are drawn with the page but one of whose
    outputs (the navbar) was drawn before is called when the page opens, despite ``prevent_initial_call``, so
    every viewer opening this page was refused twice (HTTP 403 in the console) for a click nobody made.
    """
    if not switched:
        raise PreventUpdate
    from app.shell.layout import navbar_content  # the shell imports the pages, which import this module

    return navbar_content(row_picker_shown=False)


def _stored_note(s: service.Stored) -> dbc.Alert:
    extra = f", {len(s.columns):,} columns" if s.columns else ""
    notes = "".join(f" {n}." for n in s.notes)
    size = plain(s.size / 1024, trim=True)  # "1,862 KiB", never "1862 KiB"
    return dbc.Alert(f"{s.name}: stored on the server ({size} KiB{extra}).{notes}", color="success",
                     className="py-2 small")


@callback(Output(ids.UPLOAD_MODEL_TOKEN, "data"), Output(ids.UPLOAD_MODEL_STATUS, "children"),
          Input(ids.UPLOAD_MODEL, "contents"), State(ids.UPLOAD_MODEL, "filename"), prevent_initial_call=True)
def store_model(contents, filename):
    if not contents:
        raise PreventUpdate
    try:
        s = service.receive(filename, contents, "model")
    except CandorError as err:
        return None, error_alert(str(err))
    return s.token, _stored_note(s)


@callback(Output(ids.UPLOAD_DATA_TOKEN, "data"), Output(ids.UPLOAD_DATA_STATUS, "children"),
          Output(ids.UPLOAD_TARGET, "options"), Input(ids.UPLOAD_DATA, "contents"),
          State(ids.UPLOAD_DATA, "filename"), prevent_initial_call=True)
def store_data(contents, filename):
    if not contents:
        raise PreventUpdate
    try:
        s = service.receive(filename, contents, "data")
    except CandorError as err:
        return None, error_alert(str(err)), []
    return s.token, _stored_note(s), [{"label": c, "value": c} for c in s.columns]


@callback(Output(ids.UPLOAD_FEATURES_TOKEN, "data"), Output(ids.UPLOAD_FEATURES_STATUS, "children"),
          Input(ids.UPLOAD_FEATURES, "contents"), State(ids.UPLOAD_FEATURES, "filename"), prevent_initial_call=True)
def store_features(contents, filename):
    if not contents:
        raise PreventUpdate
    try:
        s = service.receive(filename, contents, "features")
    except CandorError as err:
        return None, error_alert(str(err))
    return s.token, _stored_note(s)


@callback(Output(ids.UPLOAD_RESULT, "children"), Output(ids.UPLOAD_SWITCHED, "data", allow_duplicate=True),
          Input(ids.UPLOAD_LOAD, "n_clicks"),
          State(ids.UPLOAD_MODEL_TOKEN, "data"), State(ids.UPLOAD_DATA_TOKEN, "data"),
          State(ids.UPLOAD_TARGET, "value"), State(ids.UPLOAD_FEATURES_TOKEN, "data"),
          prevent_initial_call=True)
def load_pair(n_clicks, model_token, data_token, target, features_token=None):
    if not n_clicks:
        raise PreventUpdate
    try:
        done = service.activate(model_token, data_token, target, features_token)
    except CandorError as err:
        return error_alert(str(err)), no_update
    return _now_explaining(done)


@callback(Output(ids.UPLOAD_SAMPLE_RESULT, "children"), Output(ids.UPLOAD_SWITCHED, "data", allow_duplicate=True),
          Input(ids.UPLOAD_SAMPLE, "n_clicks"),
          prevent_initial_call=True,
          running=[(Output(ids.UPLOAD_SAMPLE, "disabled"), True, False)])
def back_to_sample(n_clicks):
    if not n_clicks:
        raise PreventUpdate
    try:
        done = service.use_sample()
    except CandorError as err:
        return error_alert(str(err)), no_update
    return _now_explaining(done)
