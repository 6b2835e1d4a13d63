"""Simulation-based power for a study's main contrast: over-reliance, second condition vs first.

A study's design (its stimuli, which of them the model gets wrong, from the data) is run many
times with simulated participants (the decision-maker of :class:`study.simulate.RelianceModel`,
vectorised here in numpy), and each simulated data set is analysed on the same trials and the same
question as the results page's main contrast (:mod:`study.mixed`): the log-odds of following wrong
advice, second arm against the first, with trials clustered in participants. The results page fits
a logistic mixed model (participant and item random intercepts); a variational fit costs about 3 s
at 30 participants per arm, too slow for thousands of simulated studies, so each one is tested with
the **documented equivalent**: a logistic GEE with an independence working correlation and the
participant-clustered sandwich variance (Liang & Zeger 1986), whose Wald test of the arm effect is
the test of the same null hypothesis (no difference in following wrong advice) on the same trials
with the same unit of replication (participants). With one binary arm covariate it has a closed
form (:func:`cluster_wald`; checked against statsmodels' GEE in the tests): per arm, ``p = (Σy +
0.5) / (Σm + 1)`` (a half count keeps an arm where everyone or no one followed finite),
``Var(logit p) = n/(n-1) · Σ (y_i - m_i p)² / (Σ m_i p(1-p))²``, ``z = Δ logit / sqrt(Var_1 +
Var_2)``, significant when ``|z| > Φ⁻¹(1 - α/2)``. Its estimate is the population-averaged
log-odds ratio (the mixed model's is subject-specific and larger in magnitude); the null hypothesis
and hence the decision it approximates are the same. Power is the share of simulated studies with
a significant Wald test, with a Wilson interval over the simulations.

The effect is the difference in expected over-reliance between the arms. A participant with
first-answer accuracy ``a`` who switches to wrong advice with probability ``w`` follows it with
probability ``(1 - a) + a·w`` (their first answer already equals wrong advice when it is wrong, in
a two-class task), so the second arm's ``w`` is the first's plus ``effect / a``; :func:`baseline`
gives both arms' expected over-reliance.

References
----------
.. [1] Yin, M., Wortman Vaughan, J., Wallach, H. (2019). CHI. doi 10.1145/3290605.3300509.
.. [2] Liang, K.-Y., Zeger, S. L. (1986). Longitudinal data analysis using generalized linear
   models. Biometrika 73(1), 13-22.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats

from explainers.intervals import wilson
from .simulate import RelianceModel

__all__ = ["PowerPoint", "simulate_over_reliance", "power_curve", "cluster_wald", "baseline", "TEST"]

TEST = ("Wald test of the arm effect in a logistic GEE on model-wrong trials (independence working correlation, "
        "participant-clustered sandwich variance), the documented equivalent of the results' mixed model")


@dataclass(frozen=True)
class PowerPoint:
    """Power at one sample size: ``n_per_arm``, ``power`` with its Wilson ``low``/``high``, ``simulations``."""

    n_per_arm: int
    power: float
    low: float
    high: float
    simulations: int


def _logit(p):
    return np.log(p / (1 - p))


def baseline(model: RelianceModel, kinds: tuple[str, str], effect: float) -> tuple[float, float, float, float]:
    """Both arms' expected over-reliance: ``(q_first, q_second, switch_first, switch_second)``.

    ``q = (1 - a) + a·w`` with ``a`` the model's first-answer accuracy and ``w`` the switch
    probability on wrong advice (the first arm's from ``model.switch[kinds[0]]``).
    """
    w1 = model.switch[kinds[0]]["wrong"]
    w2 = w1 + effect / model.accuracy
    a = model.accuracy
    return (1 - a) + a * w1, (1 - a) + a * w2, w1, w2


def cluster_wald(y1: np.ndarray, y2: np.ndarray, m: int) -> np.ndarray:
    """Wald z of the second arm against the first, logistic GEE with participant-clustered variance.

    Parameters
    ----------
    y1, y2 : ndarray of shape (..., n1) and (..., n2)
        Each participant's number of model-wrong trials on which they followed the advice (leading
        axes: independent simulated studies).
    m : int
        Model-wrong trials per participant.

    Returns
    -------
    ndarray of shape (...)
        ``z`` (positive when the second arm follows wrong advice more); see the module notes.
    """
    def arm(y):
        n = y.shape[-1]
        p = (y.sum(-1) + 0.5) / (n * m + 1.0)
        u = y - m * p[..., None]
        var = n / (n - 1) * (u ** 2).sum(-1) / (n * m * p * (1 - p)) ** 2
        return _logit(p), var

    l1, v1 = arm(np.asarray(y1, dtype=float))
    l2, v2 = arm(np.asarray(y2, dtype=float))
    return (l2 - l1) / np.sqrt(v1 + v2)


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
    p_switch = 1 / (1 + np.exp(-(float(_logit(switch_wrong)) + shift)))[:, None]
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
    m = int(wrong.sum())
    crit = float(stats.norm.ppf(1 - alpha / 2))
    out = []
    for n in sizes:
        if n < 2:
            raise ValueError(f"expected at least 2 participants per arm, got {n}")
        a = np.stack([simulate_over_reliance(rng, n, wrong, model, base["wrong"]) for _ in range(simulations)])
        b = np.stack([simulate_over_reliance(rng, n, wrong, model, w2) for _ in range(simulations)])
        z = cluster_wald(np.rint(a * m), np.rint(b * m), m)
        hits = int((np.abs(z) > crit).sum())
        est, lo, hi = wilson(hits, simulations)
        out.append(PowerPoint(int(n), est, lo, hi, simulations))
    return out
