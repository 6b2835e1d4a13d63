"""Simulation-based power for a study's main contrast: over-reliance, second condition vs first.

A study's design (its stimuli, which of them the model gets wrong, from the data) is run many
times with simulated participants (the decision-maker of :class:`study.simulate.RelianceModel`,
vectorised here in numpy), and each simulated data set is analysed with the participant as the
unit: each participant's over-reliance (the share of model-wrong trials on which the final answer
followed the advice), compared between the two arms by Welch's t-test at ``alpha``. Power is the
share of simulated studies with ``p < alpha``, with a Wilson interval over the simulations.

The effect is the difference in expected over-reliance between the arms. A participant with
first-answer accuracy ``a`` who switches to wrong advice with probability ``w`` follows it with
probability ``(1 - a) + a·w`` (their first answer already equals wrong advice when it is wrong, in
a two-class task), so the second arm's ``w`` is the first's plus ``effect / a``.

References
----------
.. [1] Yin, M., Wortman Vaughan, J., Wallach, H. (2019). CHI. doi 10.1145/3290605.3300509.
.. [2] Welch, B. L. (1947). The generalization of "Student's" problem when several different
   population variances are involved. Biometrika 34(1-2), 28-35.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats

from explainers.intervals import wilson
from .simulate import RelianceModel

__all__ = ["PowerPoint", "simulate_over_reliance", "power_curve"]


@dataclass(frozen=True)
class PowerPoint:
    """Power at one sample size: ``n_per_arm``, ``power`` with its Wilson ``low``/``high``, ``simulations``."""

    n_per_arm: int
    power: float
    low: float
    high: float
    simulations: int


def _logit(p: float) -> float:
    return float(np.log(p / (1 - p)))


def simulate_over_reliance(rng: np.random.Generator, n: int, model_wrong: np.ndarray, model: RelianceModel,
                           switch_wrong: float) -> np.ndarray:
    """Each of ``n`` simulated participants' over-reliance on one arm.

    Parameters
    ----------
    rng : numpy.random.Generator
    n : int
        Participants.
    model_wrong : ndarray of bool, shape (n_items,)
        Which stimuli the model gets wrong (at least one).
    model : RelianceModel
        Accuracy and between-person spreads.
    switch_wrong : float
        P(switch to the advice | first answer differs from it) when the advice is wrong.

    Returns
    -------
    ndarray of shape (n,)
        Share of each participant's model-wrong trials whose final answer followed the advice.
    """
    wrong = np.asarray(model_wrong, dtype=bool)
    acc = np.clip(rng.normal(model.accuracy, model.accuracy_sd, n), 0.05, 0.95)
    shift = rng.normal(0.0, model.shift_sd, n)
    first_right = rng.random((n, wrong.sum())) < acc[:, None]
    # two classes: on a model-wrong item the first answer equals the advice exactly when it is wrong
    p_switch = 1 / (1 + np.exp(-(_logit(switch_wrong) + shift)))[:, None]
    follow = ~first_right | (rng.random(first_right.shape) < p_switch)
    return follow.mean(axis=1)


def power_curve(model_wrong, effect: float, sizes, *, simulations: int = 1000, seed: int = 0, alpha: float = 0.05,
                model: RelianceModel | None = None, kinds: tuple[str, str] = ("descriptive", "persuasive")
                ) -> list[PowerPoint]:
    """Power to detect ``effect`` (difference in over-reliance, second arm minus first) at each size.

    Parameters
    ----------
    model_wrong : sequence of bool
        Per stimulus, whether the model is wrong (from the data, :mod:`study.truth`).
    effect : float
        Difference in expected over-reliance; 0 gives the test's size (type I error rate).
    sizes : sequence of int
        Participants per arm.
    simulations : int, default=1000
    seed : int, default=0
    alpha : float, default=0.05
    model : RelianceModel or None
        The first arm's switch probabilities are ``model.switch[kinds[0]]``.
    kinds : (str, str)
        Explanation kinds of the two arms (the first is the reference).

    Returns
    -------
    list of PowerPoint

    Raises
    ------
    ValueError
        If no stimulus is model-wrong (over-reliance cannot be measured), or the effect moves
        the second arm's switch probability outside (0, 1).
    """
    wrong = np.asarray(list(model_wrong), dtype=bool)
    if not wrong.any():
        raise ValueError("the model is right on every stimulus: over-reliance cannot be measured, so it has no power")
    model = model or RelianceModel()
    base = model.switch[kinds[0]]
    w2 = base["wrong"] + effect / model.accuracy
    if not 0 < w2 < 1:
        raise ValueError(f"effect {effect} needs a switch probability on wrong advice of {w2:.3f} in the second arm; "
                         f"expected a value in (0, 1) (first arm {base['wrong']}, accuracy {model.accuracy})")
    rng = np.random.default_rng(seed)
    out = []
    for n in sizes:
        if n < 2:
            raise ValueError(f"expected at least 2 participants per arm, got {n}")
        hits = 0
        for _ in range(simulations):
            a = simulate_over_reliance(rng, n, wrong, model, base["wrong"])
            b = simulate_over_reliance(rng, n, wrong, model, w2)
            if a.std() == 0 and b.std() == 0:
                hits += bool(a.mean() != b.mean())
                continue
            p = stats.ttest_ind(b, a, equal_var=False).pvalue
            hits += bool(p < alpha)
        est, lo, hi = wilson(hits, simulations)
        out.append(PowerPoint(int(n), est, lo, hi, simulations))
    return out
