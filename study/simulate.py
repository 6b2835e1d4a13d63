"""Seeded simulated participants (tests, demos and the load benchmark).

The model's advice is derived from the study file (``truth`` and
``model_correct``); a simulated participant follows the advice with a
condition-dependent probability, so analyses have a known direction.
"""

from __future__ import annotations

import random
from datetime import timedelta

from sqlalchemy import Engine

from . import store
from .schema import Study

__all__ = ["stimulus_context", "run_participant", "FOLLOW"]

#: Probability of adopting the model's advice in the final answer, by explanation type.
FOLLOW = {"none": 0.5, "descriptive": 0.7, "persuasive": 0.9}
FIDELITY = {"none": None, "descriptive": 0.95, "persuasive": 0.6}


def stimulus_context(study: Study, item_id: str, condition: str) -> store.TrialContext:
    """Advice and explanation metadata for one item under one condition (simulated)."""
    stim = study.stimulus(item_id)
    outputs = study.model.outputs
    truth = stim.truth or outputs[0]
    pred = truth if stim.model_correct is not False else next(o for o in outputs if o != truth)
    kind = study.condition(condition).explanation
    return store.TrialContext(
        model_prediction=pred, truth=truth,
        explanation_id=None if kind == "none" else f"{item_id}:{kind}",
        explanation_parent_id=f"{item_id}:descriptive" if kind == "persuasive" else None,
        operators=list(study.condition(condition).operators) or None,
        fidelity_metric=None if kind == "none" else "r2", fidelity=FIDELITY[kind],
        complexity=None if kind == "none" else {"n_features": 10 if kind == "descriptive" else 3},
    )


def run_participant(engine: Engine, study: Study, seed: int, *, stratum: str = "", stop_after: int | None = None):
    """Enrol one participant and answer every step; return ``(participant, token)``.

    Parameters
    ----------
    seed : int
        Seeds the simulated answers.
    stop_after : int or None, default=None
        Stop after this many trials (a participant who drops out).
    """
    rng = random.Random(seed)
    p, token = store.enrol(engine, study, stratum=stratum)
    outs = study.model.outputs
    plan = store.trial_plan(p)
    t0 = store.utcnow()
    for t, (_block, cond, item) in enumerate(plan):
        if stop_after is not None and t >= stop_after:
            return p, token
        ctx = stimulus_context(study, item, cond)
        when = t0 + timedelta(seconds=10 * t)
        if "forward_prediction" in study.tasks:
            guess = ctx.model_prediction if rng.random() < 0.7 else rng.choice(outs)
            store.record_trial(engine, study, p, trial_index=t, phase="forward", response=guess, context=ctx,
                               rt_ms=round(rng.uniform(800, 4000), 1), client_timestamp=when)
        if "decision_with_advice" in study.tasks:
            initial = rng.choice(outs)
            final = ctx.model_prediction if rng.random() < FOLLOW[study.condition(cond).explanation] else initial
            store.record_trial(engine, study, p, trial_index=t, phase="initial", response=initial, context=ctx,
                               rt_ms=round(rng.uniform(800, 4000), 1), client_timestamp=when)
            store.record_trial(engine, study, p, trial_index=t, phase="final", response=final, context=ctx,
                               rt_ms=round(rng.uniform(500, 3000), 1), confidence=float(rng.randint(0, 100)),
                               client_timestamp=when + timedelta(seconds=3))
        for check in study.attention_checks:
            if check.after_trial == t + 1:
                ans = check.correct if rng.random() < 0.9 else check.options[0]
                store.record_trial(engine, study, p, trial_index=t, phase="attention", response=ans)
        store.advance(engine, p.id, t + 1)
    for b, cond in enumerate(p.condition_order):
        for q in study.questionnaires:
            base = {"none": 3, "descriptive": 4, "persuasive": 5}[study.condition(cond).explanation]
            answers = {i.label: max(1, min(q.scale_points, base + rng.randint(-1, 1) - (2 if i.reverse else 0)))
                       for i in q.items}
            store.record_questionnaire(engine, study, p, q.id, answers, block_index=b)
    store.complete(engine, p.id)
    return p, token
