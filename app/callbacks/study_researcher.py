"""Researcher-page callbacks. Every data callback refuses a request whose user lacks the researcher role.

The password field logs in the ``researcher`` account of ``CANDOR_RESEARCHER_PASSWORD`` (rate-limited
like ``/login``); accounts of a users file log in at ``/login``. Both make the same server-side session.
"""
import flask
from dash import Input, Output, State, callback, ctx, no_update
from dash.exceptions import PreventUpdate

from accounts.users import RESEARCHER_ACCOUNT
from app.serve import access
from app.views.components import error_alert
from study import auth, ids, runtime

# the researcher's views (app.views.study_research: the study database, analyses, exports) are imported by the first
# researcher request, not with the callbacks: a server that never runs a study never loads them (issue 23)

LOGIN_REQUIRED = "Login required: enter the researcher password, or log in as a researcher at /login."


def _logged_in() -> bool:
    """Whether the current request's user holds the researcher role (a researcher session, or the local user)."""
    return flask.has_request_context() and access.has_role("researcher")


@callback(Output(ids.AUTH_STATE, "data"), Output(ids.LOGIN_MESSAGE, "children"),
          Input(ids.LOGIN_BUTTON, "n_clicks"), State(ids.LOGIN_PASSWORD, "value"), State(ids.AUTH_STATE, "data"),
          prevent_initial_call=True)
def log_in(_n, password, state):
    if not auth.password_configured():
        return no_update, error_alert("Researcher login is disabled: set CANDOR_RESEARCHER_PASSWORD on the server.")
    try:
        user = access.attempt_login(RESEARCHER_ACCOUNT, password)
    except access.TooManyAttempts as refused:
        ctx.response.callback_response.status_code = 429
        return no_update, error_alert(f"{str(refused)[:1].upper()}{str(refused)[1:]}.")
    if user is None:
        return no_update, error_alert("Wrong password.")
    access.start_session(ctx.response, user, samesite="Strict")
    return (state or 0) + 1, ""


@callback(Output(ids.AUTH_STATE, "data", allow_duplicate=True), Input(ids.LOGOUT_BUTTON, "n_clicks"),
          State(ids.AUTH_STATE, "data"), prevent_initial_call=True)
def log_out(_n, state):
    access.end_session(ctx.response)  # the server forgets the session: a copied cookie stops working too
    return (state or 0) + 1


@callback(Output(ids.STUDY_SELECT, "options"), Input(ids.AUTH_STATE, "data"))
def list_studies(_state):
    if not _logged_in():
        return []
    return [{"label": f"{s} (bundled example, read-only)" if runtime.is_example(s) else s, "value": s}
            for s in runtime.list_studies()]


@callback(Output(ids.DASHBOARD, "children"), Input(ids.STUDY_SELECT, "value"), Input(ids.AUTH_STATE, "data"))
def render_dashboard(study_id, _state):
    if not _logged_in():
        return error_alert(LOGIN_REQUIRED)
    from app.views.study_research import dashboard

    return dashboard(study_id) if study_id else ""


@callback(Output(ids.DOWNLOAD, "data"), Input(ids.EXPORT_CSV, "n_clicks"), Input(ids.EXPORT_PARQUET, "n_clicks"),
          State(ids.STUDY_SELECT, "value"), prevent_initial_call=True)
def export(_csv, _parquet, study_id):
    if not _logged_in() or not study_id:
        raise PreventUpdate
    fmt = "parquet" if ctx.triggered_id == ids.EXPORT_PARQUET else "csv"
    from app.views.study_research import export_zip

    return export_zip(study_id, fmt)
