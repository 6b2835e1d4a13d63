"""Seeded simulated participants (tests, demos, ``study simulate``, power analysis and the load benchmark).

:func:`run_participant` writes straight to the store, with advice derived from the
study file (``truth`` and ``model_correct``). :class:`RelianceModel` is the
simulated decision-maker of ``python -m app study simulate`` (which answers
through the server's own participant flow) and of :mod:`study.power`: it has
its own accuracy, and when its first answer differs from the advice it switches
to the advice with a probability that depends on the explanation shown and on
whether the advice is right. These are simulation parameters, not findings.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from datetime import timedelta

from sqlalchemy import Engine

from . import store
from .schema import Study

__all__ = ["stimulus_context", "run_participant", "FOLLOW", "RelianceModel", "SimulatedPerson", "DEFAULT_SWITCH"]

#: Probability of adopting the model's advice in the final answer, by explanation type.
FOLLOW = {"prediction": 0.5, "descriptive": 0.7, "persuasive": 0.9}
FIDELITY = {"none": None, "prediction": None, "descriptive": 0.95, "persuasive": 0.6}


def stimulus_context(study: Study, item_id: str, condition: str) -> store.TrialContext:
    """Advice and explanation metadata for one item under one condition (simulated)."""
    stim = study.stimulus(item_id)
    outputs = study.model.outputs
    truth = stim.truth or outputs[0]
    pred = truth if stim.model_correct is not False else next(o for o in outputs if o != truth)
    kind = study.condition(condition).explanation
    if kind == "none":  # no advice shown
        return store.TrialContext(model_prediction=None, truth=truth)
    return store.TrialContext(
        model_prediction=pred, truth=truth,
        explanation_id=None if kind == "prediction" else f"{item_id}:{kind}",
        explanation_parent_id=f"{item_id}:descriptive" if kind == "persuasive" else None,
        operators=list(study.condition(condition).operators) or None,
        fidelity_metric=None if kind == "prediction" else "r2", fidelity=FIDELITY[kind],
        complexity=None if kind == "prediction" else {"n_features": 10 if kind == "descriptive" else 3},
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
        if "forward_prediction" in study.tasks and ctx.model_prediction is not None:
            guess = ctx.model_prediction if rng.random() < 0.7 else rng.choice(outs)
            store.record_trial(engine, study, p, trial_index=t, phase="forward", response=guess, context=ctx,
                               rt_ms=round(rng.uniform(800, 4000), 1), client_timestamp=when)
        if "decision_with_advice" in study.tasks and ctx.model_prediction is None:  # no-advice arm
            store.record_trial(engine, study, p, trial_index=t, phase="final", response=rng.choice(outs), context=ctx,
                               rt_ms=round(rng.uniform(800, 4000), 1), confidence=float(rng.randint(0, 100)),
                               client_timestamp=when)
        elif "decision_with_advice" in study.tasks:
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
            base = {"none": 3, "prediction": 3, "descriptive": 4, "persuasive": 5}[study.condition(cond).explanation]
            answers = {i.label: max(1, min(q.scale_points, base + rng.randint(-1, 1) - (2 if i.reverse else 0)))
                       for i in q.items}
            store.record_questionnaire(engine, study, p, q.id, answers, block_index=b)
    store.complete(engine, p.id)
    return p, token


#: P(switch to the advice | first answer differs from it), by explanation kind and whether the advice
#: is right: a descriptive explanation lets people tell right advice from wrong better than a
#: persuasive one, which is followed more often either way (simulation parameters).
DEFAULT_SWITCH = {
    "prediction": {"right": 0.45, "wrong": 0.35},
    "descriptive": {"right": 0.60, "wrong": 0.25},
    "persuasive": {"right": 0.75, "wrong": 0.65},
}


#: Weight of advice of a simulated participant in a numeric study, by explanation kind (simulation parameters).
NUMERIC_WEIGHT = {"prediction": 0.3, "descriptive": 0.4, "persuasive": 0.6}


@dataclass(frozen=True)
class SimulatedPerson:
    """One simulated participant: own accuracy, and a shift of their switch probabilities (logit scale)."""

    accuracy: float
    shift: float
    rng: random.Random = field(repr=False, compare=False)


@dataclass(frozen=True)
class RelianceModel:
    """A two-stage decision-maker whose reliance differs by condition.

    Parameters
    ----------
    switch : dict
        ``{explanation kind: {"right": p, "wrong": p}}``: probability of switching to the advice
        when the first answer differs from it (default :data:`DEFAULT_SWITCH`).
    accuracy : float, default=0.7
        Mean probability that the first answer is the truth.
    accuracy_sd : float, default=0.08
        Between-person spread of that accuracy (clipped to 0.05..0.95).
    shift_sd : float, default=0.5
        Between-person spread of the switch probabilities on the logit scale.
    attention_pass : float, default=0.95
        Probability of answering an attention check correctly.
    """

    switch: dict = field(default_factory=lambda: {k: dict(v) for k, v in DEFAULT_SWITCH.items()})
    accuracy: float = 0.7
    accuracy_sd: float = 0.08
    shift_sd: float = 0.5
    attention_pass: float = 0.95

    def person(self, seed: int) -> SimulatedPerson:
        """A participant drawn with ``seed``."""
        rng = random.Random(seed)
        acc = min(0.95, max(0.05, rng.gauss(self.accuracy, self.accuracy_sd)))
        return SimulatedPerson(acc, rng.gauss(0.0, self.shift_sd), rng)

    def initial(self, who: SimulatedPerson, truth: str, outputs) -> str:
        """The first answer: the truth with the person's accuracy, another output otherwise."""
        if who.rng.random() < who.accuracy:
            return truth
        return who.rng.choice([o for o in outputs if o != truth])

    def final(self, who: SimulatedPerson, initial: str, advice: str, truth: str, kind: str) -> str:
        """The answer after the advice: kept when it agrees, else switched with the condition's probability."""
        if initial == advice:
            return initial
        p = self.switch[kind]["right" if advice == truth else "wrong"]
        logit = math.log(p / (1 - p)) + who.shift
        return advice if who.rng.random() < 1 / (1 + math.exp(-logit)) else initial

    def confidence(self, who: SimulatedPerson, initial: str, final: str, advice: str, lo: float, hi: float) -> float:
        """A confidence on ``[lo, hi]``: higher when the final answer agrees with the advice."""
        base = 0.55 + (0.2 if final == advice else 0.0) + (0.05 if initial == final else 0.0)
        x = min(1.0, max(0.0, who.rng.gauss(base, 0.12)))
        return round(lo + x * (hi - lo), 1)

    def estimate(self, who: SimulatedPerson, truth: float, lo: float, hi: float) -> float:
        """A numeric first estimate: the truth with a relative error (sd 0.3 x (1 - accuracy) x 2), in range."""
        x = truth * (1 + who.rng.gauss(0.0, 0.6 * (1 - who.accuracy))) + who.rng.gauss(0.0, 0.05 * (hi - lo))
        return round(min(hi, max(lo, x)), 3)

    def revise(self, who: SimulatedPerson, initial: float, advice: float, kind: str, lo: float, hi: float) -> float:
        """The final estimate: ``initial + w (advice - initial)``, ``w`` the condition's weight of advice
        (:data:`NUMERIC_WEIGHT`) shifted per person; in range."""
        w = min(1.0, max(0.0, NUMERIC_WEIGHT[kind] + 0.15 * who.shift))
        return round(min(hi, max(lo, initial + w * (advice - initial))), 3)

    def likert(self, who: SimulatedPerson, kind: str, points: int, reverse: bool) -> int:
        """A trust-item answer: higher after a persuasive explanation."""
        centre = {"none": 0.45, "prediction": 0.45, "descriptive": 0.55, "persuasive": 0.7}[kind]
        x = min(1.0, max(0.0, who.rng.gauss(centre, 0.15)))
        v = 1 + round(x * (points - 1))
        return points + 1 - v if reverse else v
