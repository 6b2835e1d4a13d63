"""Study stimuli from :mod:`app.services`: the same explanations and numbers the analyst sees.

A tabular stimulus is a row of the loaded workspace. The advice is the model's
label (P(positive) >= 0.5, as in the navbar); the descriptive explanation is
``services.shap_row``; the persuasive one is ``services.persuasive(row, k)``
(top-k simplification with its sentence), ``k`` from the condition's
``top_k:K`` operator (default 3). The logged fidelity is the share of
|attribution| the shown explanation keeps (``mass_retained``: 1.0 for the full
SHAP explanation) with the simplification's complexity counts.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass

import numpy as np

from app import figures, services
from app.errors import CandorError
from app.study.schema import Study
from app.study.store import TrialContext

DEFAULT_TOP_K = 3


@dataclass(frozen=True)
class StimulusView:
    """What one trial shows: the input, the advice and (per condition) the explanation."""

    features: tuple[tuple[str, str], ...]
    text: str | None
    context: TrialContext
    kind: str
    figure: object | None
    statement: str | None


def _top_k(operators: tuple[str, ...]) -> int:
    for op in operators:
        name, _, arg = op.partition(":")
        if name == "top_k" and arg.strip().isdigit():
            return int(arg)
    return DEFAULT_TOP_K


def stimulus_view(study: Study, item_id: str, condition_id: str) -> StimulusView:
    """Build the view of ``item_id`` under ``condition_id``; raises :class:`CandorError`."""
    ws = services.workspace()
    if tuple(study.model.outputs) != tuple(ws.classes):
        raise CandorError(f"study {study.id!r} lists outputs {list(study.model.outputs)} but the loaded model's "
                          f"classes are {list(ws.classes)}")
    stim = study.stimulus(item_id)
    if stim.row is None:
        raise CandorError("text stimuli need a text-model service; this server explains tabular rows only")
    row = services.check_row(stim.row)
    expl = services.shap_row(row)
    pred = ws.positive_class if expl.prediction >= 0.5 else next(c for c in ws.classes if c != ws.positive_class)
    truth = ws.classes[int(ws.y[row])]
    x = ws.X.iloc[row]
    features = tuple((str(name), f"{float(v):.4g}") for name, v in x.items())
    cond = study.condition(condition_id)
    base = dict(model_prediction=pred, truth=truth)
    if cond.explanation == "none":
        return StimulusView(features, None, TrialContext(**base), "none", None, None)
    d = len(expl.feature_names)
    k = d if cond.explanation == "descriptive" else min(_top_k(cond.operators), d)
    sim = services.persuasive(row, k).simplification
    ops = ([f"{name}(" + ", ".join(f"{key}={val}" for key, val in params.items()) + ")" for name, params in sim.operators]
           if cond.explanation == "persuasive" else None)
    ctx = TrialContext(**base, explanation_id=f"row{row}:shap" + (f":top_k={k}" if ops else ""),
                       explanation_parent_id=f"row{row}:shap" if ops else None, operators=ops,
                       fidelity_metric="mass_retained", fidelity=float(sim.fidelity_after["mass_retained"]),
                       complexity={key: float(v) for key, v in sim.complexity_after.items()})
    if cond.explanation == "descriptive":
        fig = figures.attribution_bar(expl, max_display=10, title="Why the model predicts this")
        return StimulusView(features, None, ctx, "descriptive", fig, None)
    fig = figures.attribution_bar(expl, max_display=k, values=np.asarray(sim.values), title="Why the model predicts this")
    return StimulusView(features, None, ctx, "persuasive", fig, sim.statement)


def warm(study: Study, participant) -> None:
    """Compute the participant's stimulus views ahead of their trials (memoized in services)."""
    from app.study.store import trial_plan

    for _block, condition, item in trial_plan(participant):
        try:
            stimulus_view(study, item, condition)
        except CandorError:
            return


def _client_time(ms) -> "datetime | None":
    from datetime import datetime, timezone

    try:
        return datetime.fromtimestamp(float(ms) / 1000, tz=timezone.utc).replace(tzinfo=None)
    except (TypeError, ValueError, OverflowError, OSError):
        return None


def submit_answer(study_id: str, token: str | None, timing: dict, answers: dict) -> tuple[str | None, str]:
    """Record one submission from the browser.

    Parameters
    ----------
    study_id : str
    token : str or None
        The participant's resume token (None before consent).
    timing : dict
        ``step`` (index or ``"consent"``), ``phase``, ``rt_ms`` (``performance.now()``
        from render to click), ``client_ts`` (ms since the epoch).
    answers : dict
        Field name to value, from the ``study-answer`` inputs on screen.

    Returns
    -------
    token : str or None
        The (possibly new) resume token.
    error : str
        A message for the participant, or "".
    """
    from app.study import flow, runtime, store

    study = runtime.get_study(study_id)
    if study is None:
        return token, "This study does not exist."
    eng = runtime.engine()
    if timing.get("step") == "consent":
        if store.participant_by_token(eng, study.id, token) is not None:
            return token, ""
        if "yes" not in (answers.get("consent") or []):
            return token, "Please tick the consent box to take part."
        stratum = answers.get("stratum") or ""
        if study.randomisation.stratify_by and stratum not in study.randomisation.strata:
            return token, "Please answer the question above."
        participant, new_token = store.enrol(eng, study, stratum=stratum)
        threading.Thread(target=warm, args=(study, participant), daemon=True).start()
        return new_token, ""
    p = store.participant_by_token(eng, study.id, token)
    if p is None:
        return token, "This link is not valid for this study."
    try:
        step_index, phase = int(timing.get("step")), timing.get("phase") or None
    except (TypeError, ValueError):
        return token, "This submission could not be read; please reload the page."
    all_steps = flow.steps(study, p)
    step = all_steps[step_index] if 0 <= step_index < len(all_steps) else None
    response, context = answers.get("response"), None
    if step is not None and step.kind == "questionnaire":
        response = {k[2:]: v for k, v in answers.items() if k.startswith("q:")}
        if any(v is None for v in response.values()):
            return token, "Please answer every statement."
    elif step is not None and step.kind != "instructions" and response is None:
        return token, "Please choose an answer."
    if step is not None and step.kind == "trial":
        item = store.trial_plan(p)[step.trial_index][2]
        context = stimulus_view(study, item, p.condition_order[step.block_index]).context
    rt = timing.get("rt_ms")
    try:
        flow.submit(eng, study, p, step_index, phase=phase if step and step.kind == "trial" else None,
                    response=response, context=context, rt_ms=float(rt) if rt is not None else None,
                    confidence=answers.get("confidence") if phase == "final" else None, client_timestamp=_client_time(timing.get("client_ts")))
    except ValueError as err:
        return token, str(err)
    return token, ""
