"""The navbar's "Export report": a background job (a few seconds) that downloads the current row's review report.

One service call, :func:`app.report.report_content`, then :func:`app.report.render_html`; a viewer may
export what they can see (``app.serve.callback_roles.VIEWER_JOBS``). The report is of a table row: when the
what-if editor shows an edited row, its status line says the edit is not in the report (issue 25).
"""
from dash import Input, Output, State, callback, dcc
from dash.exceptions import PreventUpdate

from app.views.components import error_alert
from app.views.whatif import shown_row
from app.report.content import report_content
from app.report.render import render_html
from app.report.button import DOWNLOAD, EXPORT, PROGRESS, STATUS
from app.shell import ids
from app import services
from workspace.errors import CandorError


@callback(Output(DOWNLOAD, "data"), Output(STATUS, "children"), Input(EXPORT, "n_clicks"),
          State(ids.ROW_INPUT, "value"), State(ids.WHATIF, "data"), background=True, prevent_initial_call=True,
          progress=[Output(PROGRESS, "children")],
          running=[(Output(EXPORT, "disabled"), True, False), (Output(PROGRESS, "hidden"), False, True)])
def export_report(set_progress, n_clicks, row, whatif=None):
    if not n_clicks:
        raise PreventUpdate
    try:
        set_progress(("computing the report ...",))
        content = report_content([services.check_row(row if row is not None else services.default_row())])
        set_progress(("writing the HTML ...",))
        html = render_html(content)
    except CandorError as err:
        return None, error_alert(str(err))
    name = "".join(ch if ch.isalnum() or ch in "-_" else "-" for ch in services.workspace().name)[:60]
    edited = isinstance(shown_row(row, whatif), dict)
    done = (f"report downloaded, of table row {content.rows[0].row}: the what-if edit shown here is not in it"
            if edited else "report downloaded")
    return dcc.send_string(html, f"candor-review-{name}-row-{content.rows[0].row}.html"), done
