"""The participant page's screens, one builder per step kind (moved from ``app/callbacks/study_views.py``).

Everything the browser needs to answer is in pattern-matching IDs from
:mod:`study.ids`; the server recomputes the step, the item and the advice
on every request, so the page holds no state worth tampering with.
"""
from __future__ import annotations

import logging

import dash_bootstrap_components as dbc
from dash import dcc, html

from explainers.numbers import plain
from workspace.errors import CandorError, first_line
from study import flow, idempotency, ids, participation, runtime, store
from study.schema import Study, StudyError

from app.services.study_stimuli import stimulus_view

_log = logging.getLogger(__name__)

PHASE_PROMPT = {
    "forward": "What will the model predict for this case?",
    "initial": "What is your answer for this case?",
    "final": "Having seen the model's advice, what is your final answer?",
}


def _button(step, phase=None, label="Continue") -> dbc.Button:
    return dbc.Button(label, id=ids.submit(step, phase), n_clicks=0, color="primary", className="mt-3")


def _radio(field: str, options, inline: bool = True) -> dbc.RadioItems:
    return dbc.RadioItems(id=ids.answer(field), options=[{"label": str(o), "value": o} for o in options],
                          inline=inline, className="study-radio")


def message(title: str, text: str) -> html.Div:
    return html.Div([html.H2(title), html.P(text)])


def consent(study: Study) -> html.Div:
    r = study.randomisation
    strata = []
    if r.stratify_by:
        strata = [html.P(f"Before we start: {r.stratify_by.replace('_', ' ')}?", className="mt-3 mb-1"),
                  _radio("stratum", r.strata)]
    return html.Div([
        html.H2(study.title), html.H5("Consent"), html.P(study.consent_text or "Please read and consent."),
        dbc.Checklist(id=ids.answer("consent"), options=[{"label": "I agree to take part", "value": "yes"}], value=[]),
        *strata, _button("consent", None, "Start"),
        html.Div(f"Consent form version {study.consent_version}", className="method-note"),
    ])


def _features_table(view) -> dbc.Table:
    rows = [html.Tr([html.Td(name), html.Td(value)]) for name, value in view.features]
    return dbc.Table(html.Tbody(rows), size="sm", bordered=False, striped=True, className="study-features")


def _plain(v: float) -> float | int:
    return int(v) if float(v).is_integer() else v


def _confidence_slider(study: Study) -> list:
    """The confidence question on the study's ``confidence_scale`` (default 0-100), 100 steps."""
    lo, hi = study.confidence_scale
    mid = _plain((lo + hi) / 2)
    step = _plain((hi - lo) / 100)
    return [html.P(f"How confident are you ({plain(lo, trim=True)}-{plain(hi, trim=True)})?", className="mt-3 mb-1"),
            dcc.Slider(id=ids.answer("confidence"), min=_plain(lo), max=_plain(hi), step=step, value=mid,
                       marks={_plain(v): plain(v, trim=True) for v in (lo, mid, hi)})]


def trial(study: Study, participant, step_index: int, step: flow.Step, phase: str) -> html.Div:
    view = stimulus_view(study, store.trial_plan(participant)[step.trial_index][2],
                         participant.condition_order[step.block_index])
    n = sum(1 for s in flow.steps(study, participant) if s.kind == "trial")
    parts = [html.H5(f"Case {step.trial_index + 1} of {n}"), _features_table(view)]
    advised = view.kind != "none"
    if phase == "final" and advised:
        parts.append(dbc.Alert(f"The model predicts: {view.context.model_prediction}", color="info"))
        if view.statement:
            parts.append(html.P(view.statement, className="statement"))
        if view.figure is not None:
            parts.append(dcc.Graph(figure=view.figure, config={"displaylogo": False, "staticPlot": True}))
        if view.dropped:
            parts.append(dropped_note(view.dropped))
    prompt = PHASE_PROMPT[phase] if advised else PHASE_PROMPT["initial"]
    parts.append(html.P(prompt, className="mt-3 mb-1 fw-semibold"))
    if study.model.numeric:  # a regression-style trial: the participant's own number
        lo, hi = study.model.range
        parts += [html.P(f"A number from {plain(lo, trim=True)} to {plain(hi, trim=True)}",
                         className="method-note mb-1"),
                  dcc.Input(id=ids.answer("response"), type="number", min=lo, max=hi, step="any",
                            className="form-control study-number")]
    else:
        parts.append(_radio("response", study.model.outputs))
    if phase == "final":
        parts += _confidence_slider(study)
    return html.Div(parts + [_button(step_index, phase, "Submit")])


def dropped_note(dropped) -> html.Div:
    """What the simplified explanation left out: the hidden features and their share of |attribution|."""
    total = sum(s for _, s in dropped)
    return html.Div([
        html.P(f"This explanation leaves out {len(dropped)} feature{'s' if len(dropped) != 1 else ''}, which carry "
               f"{total:.0%} of what the full explanation attributes to the features:", className="mb-1"),
        html.Ul([html.Li(f"{name}: {share:.1%}") for name, share in dropped], className="study-dropped"),
    ], id="study-dropped-note", className="mt-2")


def attention(study: Study, step_index: int, step: flow.Step) -> html.Div:
    check = next(a for a in study.attention_checks if a.after_trial == step.trial_index + 1)
    return html.Div([html.P(check.prompt, className="fw-semibold"), _radio("response", check.options),
                     _button(step_index, "attention", "Submit")])


def questionnaire(study: Study, step_index: int, step: flow.Step) -> html.Div:
    q = next(x for x in study.questionnaires if x.id == step.questionnaire_id)
    points = list(range(1, q.scale_points + 1))
    items = [html.Div([html.P(item.text, className="mb-1"), _radio(f"q:{item.label}", points)], className="mb-3")
             for item in q.items]
    return html.Div([html.H5("Questionnaire"),
                     html.P(f"1 = {q.anchors[0]}, {q.scale_points} = {q.anchors[1]}", className="method-note"),
                     *items, _button(step_index, "questionnaire", "Submit")])


def render(study_id: str | None, token: str | None) -> html.Div:
    """The screen for ``token`` in ``study_id`` (consent when there is no valid token).

    While the database cannot be reached the screen says so and renders itself again every
    2 s; any other failure is one plain sentence (logged with its traceback), never its text.
    """
    try:
        return _render(study_id, token)
    except Exception as exc:  # the participant sees one plain sentence, never a server error
        if idempotency.unavailable(exc):
            _log.warning("study %s: database unavailable while rendering: %s", study_id, first_line(exc))
            return html.Div([message("One moment", "The study's server is busy for a moment; this page tries again "
                                                    "by itself and keeps your answers."),
                             dcc.Interval(id=ids.render_retry(0), interval=2000)])
        _log.exception("study %s: rendering failed", study_id)
        return message("One moment", "Something went wrong on our side; please reload this page in a moment.")


def _render(study_id: str | None, token: str | None) -> html.Div:
    try:
        study = runtime.get_study(study_id) if study_id else None
    except (StudyError, ValueError):  # ValueError: a changed file under a registered id
        return message("Study unavailable", "This study cannot be taken right now. Please contact the researcher "
                                            "who sent you the link.")
    if study is None:
        return message("Study not found", "Check the link you were given.")
    where = participation.current(runtime.engine(), study, token)
    if where is None:
        return consent(study)
    p, i, step, phase = where
    try:
        if step.kind == "instructions":
            return html.Div([html.H5("Instructions"), html.P(study.instructions), _button(i, "instructions")])
        if step.kind == "trial":
            return trial(study, p, i, step, phase)
        if step.kind == "attention":
            return attention(study, i, step)
        if step.kind == "questionnaire":
            return questionnaire(study, i, step)
    except CandorError as err:
        return message("This case cannot be shown", str(err))
    end = participation.finish(runtime.engine(), study, p)
    code, link = end.code, end.link
    back = [html.P("Return to the site that sent you here to record your participation:"),
            dbc.Button("Finish and return", href=link, id="study-completion-link", color="primary",
                       external_link=True)] if link else []
    if end.redirect_seconds is not None:  # Prolific-style: go back by itself after the debrief
        s = end.redirect_seconds
        back += [html.P(f"You will be returned there automatically in {s} second{'s' if s != 1 else ''}.",
                        id="study-redirect-note", className="method-note"),
                 dcc.Store(id=ids.REDIRECT_URL, data=link), dcc.Store(id=ids.REDIRECT_DONE),
                 dcc.Interval(id=ids.REDIRECT_TIMER, interval=max(50, 1000 * s), max_intervals=1)]
    debrief = [html.H5("About this study"), html.P(study.debrief, id="study-debrief")] if study.debrief else []
    return html.Div([html.H2("Thank you!"), *debrief, html.P("Your completion code is:"),
                     html.P(code, id="study-completion-code", className="metric-value"), *back])
