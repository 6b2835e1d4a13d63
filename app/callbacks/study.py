"""Participant-flow callbacks: render the current step, record a submission.

Chain: a click on a ``study-submit`` button -> (browser) the response time
since the step rendered and a new idempotency key go into ``TIMING`` -> (server) the answer is stored
and ``REFRESH`` bumps -> the current step is rendered again from the database. While the database
cannot be reached the page says the answer is being saved and ``RETRY`` re-sends the same ``TIMING``
(same key: stored once) every 2 s until it is stored; the step screen retries itself likewise.
"""
import flask
from dash import ALL, Input, Output, State, callback, clientside_callback, no_update
from dash.exceptions import PreventUpdate

from study import ids

# The participant flow (app.services.study_participant over study.participation, app.views.study: SQLAlchemy,
# Alembic, the pins) is imported by the first study request, not with the callbacks: a server that never runs a study never
# loads it (issue 23).

clientside_callback(
    """function(children) { window._candorStudyT0 = performance.now(); return window._candorStudyT0; }""",
    Output(ids.RENDER_T, "data"), Input(ids.BODY, "children"),
)

clientside_callback(
    """function(clicks, buttonIds) {
        const cc = dash_clientside.callback_context;
        let trig = cc.triggered_id;
        if (!trig && cc.triggered && cc.triggered.length) {
            const pid = cc.triggered[0].prop_id; trig = JSON.parse(pid.slice(0, pid.lastIndexOf('.')));
        }
        const key = (o) => o ? [o.type, String(o.step), o.phase].join('|') : '';
        const i = (clicks || []).findIndex((c, j) => c && c > 0 && key(buttonIds[j]) === key(trig));
        if (i < 0) { return dash_clientside.no_update; }
        const t0 = window._candorStudyT0 || performance.now();
        // the answer's idempotency key: re-sent with it until stored, it is stored once (study/idempotency.py)
        const answerKey = Array.from(crypto.getRandomValues(new Uint8Array(16)),
                                     (b) => b.toString(16).padStart(2, '0')).join('');
        return {step: buttonIds[i].step, phase: buttonIds[i].phase, rt_ms: Math.round((performance.now() - t0) * 10) / 10,
                client_ts: Date.now(), nonce: Math.random(), key: answerKey};
    }""",
    Output(ids.TIMING, "data"), Input(ids.submit(ALL, ALL), "n_clicks"), State(ids.submit(ALL, ALL), "id"),
    prevent_initial_call=True,
)

clientside_callback(
    """function(token) {
        if (token) { const u = new URL(window.location.href);
            if (u.searchParams.get('t') !== token) { u.searchParams.set('t', token); window.history.replaceState(null, '', u); } }
        return dash_clientside.no_update;
    }""",
    Output(ids.URL_SYNC, "data"), Input(ids.TOKEN, "data"),
)


clientside_callback(  # the completion page's automatic return to the recruitment platform (views/study.py render)
    """function(n, url) { if (n && url) { window.location.assign(url); } return dash_clientside.no_update; }""",
    Output(ids.REDIRECT_DONE, "data"), Input(ids.REDIRECT_TIMER, "n_intervals"), State(ids.REDIRECT_URL, "data"),
    prevent_initial_call=True,
)


@callback(Output(ids.BODY, "children"), Input(ids.TOKEN, "data"), Input(ids.REFRESH, "data"),
          Input(ids.render_retry(ALL), "n_intervals"), State(ids.STUDY_ID, "data"))
def render_step(token, _refresh, _retry, study_id):
    from app.views.study import render

    return render(study_id, token)


@callback(Output(ids.TOKEN, "data"), Output(ids.REFRESH, "data"), Output(ids.ERROR, "children"),
          Output(ids.RETRY, "disabled"), Output(ids.ERROR, "className"),
          Input(ids.TIMING, "data"), Input(ids.RETRY, "n_intervals"),
          State(ids.answer(ALL), "value"), State(ids.answer(ALL), "id"),
          State(ids.TOKEN, "data"), State(ids.STUDY_ID, "data"), State(ids.REFRESH, "data"),
          State(ids.RECRUIT, "data"), prevent_initial_call=True)
def submit_step(timing, _retry, values, answer_ids, token, study_id, refresh, recruit):
    """Store the answer; while the database cannot be reached, say so and re-send it (same key) every 2 s."""
    if not timing:
        raise PreventUpdate
    from app.services import study_participant
    from study.answers import SAVING, STALE

    answers = {i.get("field") if isinstance(i, dict) else None: v for i, v in zip(answer_ids or [], values or [])}
    new_token, error = study_participant.submit_answer(study_id, token, timing, answers, client=flask.request.remote_addr,
                                     recruitment=recruit)
    shown_again = not error or error == STALE  # stored, or a stale page: render the current step
    saving = error == SAVING  # not an error: shown plainly (an error to fix is red)
    return ((new_token if new_token != token else no_update), (refresh or 0) + (1 if shown_again else 0), error,
            not saving, "study-saving mb-2" if saving else "text-danger mb-2")

