"""Participant flow of a user study: consent, instructions, trials, questionnaires, completion code.

The resume token lives in the URL (``?t=...``, written after consent) and in
the browser's local storage, so a reload or a dropped connection resumes at
the same step with the same condition and stimulus order. A recruitment platform's ids in the
link (Prolific ``PROLIFIC_PID``/``STUDY_ID``/``SESSION_ID``, MTurk ``workerId``/``assignmentId``/``hitId``)
are sent with the consent and checked and stored by the server (:mod:`study.recruitment`).
"""
import dash
from dash import dcc, html

from app.callbacks import study as _study_callbacks  # noqa: F401  (registers this page's callbacks)
from study import ids
from study.recruitment import PARAMS

dash.register_page(__name__, path_template="/study/<study_id>", name="Study", title="Study")


def layout(study_id=None, t=None, **query):
    recruit = {k: v for k, v in query.items() if any(k in names for names in PARAMS.values())}
    return html.Div([
        dcc.Store(id=ids.RECRUIT, data=recruit),
        dcc.Store(id=ids.STUDY_ID, data=study_id),
        dcc.Store(id=ids.TOKEN, data=t, storage_type="local" if not t else "memory"),
        dcc.Store(id=ids.REFRESH, data=0),
        dcc.Store(id=ids.TIMING),
        dcc.Store(id=ids.RENDER_T),
        dcc.Store(id=ids.URL_SYNC),
        dcc.Interval(id=ids.RETRY, interval=2000, disabled=True),  # on while an answer is being saved
        html.Div(id=ids.ERROR, className="text-danger mb-2"),
        dcc.Loading(html.Div(id=ids.BODY, className="study-body"), type="dot", delay_show=400),
    ], className="study-page")
