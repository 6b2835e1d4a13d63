"""The navbar's "Export report" button: one shared component, so every page offers it (callback:
:mod:`app.callbacks.report`)."""
from __future__ import annotations

import dash_bootstrap_components as dbc
from dash import dcc, html

EXPORT = "report-export"
DOWNLOAD = "report-download"
STATUS = "report-status"
PROGRESS = "report-progress"


def export_button() -> html.Div:
    """A labelled, keyboard-reachable button that downloads the review report of the current row, with its
    progress (or a refusal) in a status line read out by screen readers."""
    return html.Div([
        dbc.Button("Export report", id=EXPORT, size="sm", color="light", outline=True, n_clicks=0,
                   title="download a self-contained HTML review of the current row (opens without the server)"),
        html.Span(id=PROGRESS, className="ms-2 text-white-50 small", hidden=True),
        html.Span(id=STATUS, className="ms-2 text-white-50 small", role="status", **{"aria-live": "polite"}),
        dcc.Download(id=DOWNLOAD),
    ], className="d-flex align-items-center ms-3")
