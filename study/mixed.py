"""The main contrast as a mixed-effects model: over-reliance by condition, participants and items as
random intercepts.

On the trials where the model's advice was wrong, ``followed ~ condition + (1 | participant) +
(1 | item)``, a logistic mixed model with crossed random intercepts, fitted by statsmodels'
variational Bayes (``BinomialBayesMixedGLM.fit_vb``; Gaussian priors, standard deviation 10 on
the fixed effects). Each condition's effect against the reference (the study's first condition) is
reported on the log-odds scale and as an odds ratio, with a 95% interval from the approximate
posterior (mean ± 1.96 posterior SD). Unlike the Wilson intervals of
:func:`study.analysis.reliance_by_condition`, it accounts for repeated trials of one participant and
one item.

References
----------
.. [1] Baayen, R. H., Davidson, D. J., Bates, D. M. (2008). Mixed-effects modeling with crossed
   random effects for subjects and items. J. Memory and Language 59(4), 390-412.
.. [2] Seabold, S., Perktold, J. (2010). statsmodels: Econometric and statistical modeling with
   Python. Proc. SciPy.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .analysis import decision_table

__all__ = ["Contrast", "over_reliance_contrast", "METHOD"]

METHOD = ("logistic mixed model on model-wrong trials, followed ~ condition + (1|participant) + (1|item), "
          "statsmodels BinomialBayesMixedGLM (variational Bayes); 95% interval = posterior mean ± 1.96 SD")


@dataclass(frozen=True)
class Contrast:
    """One condition against the reference: log-odds ``effect`` with its posterior ``sd`` and 95% interval."""

    condition: str
    reference: str
    effect: float
    sd: float
    low: float
    high: float
    n_trials: int
    n_participants: int
    n_items: int

    @property
    def odds_ratio(self) -> tuple[float, float, float]:
        """``exp`` of the effect and of its interval bounds."""
        return float(np.exp(self.effect)), float(np.exp(self.low)), float(np.exp(self.high))


def over_reliance_contrast(trials: pd.DataFrame, reference: str | None = None) -> list[Contrast]:
    """Fit the mixed model of following wrong advice; one :class:`Contrast` per non-reference condition.

    Parameters
    ----------
    trials : DataFrame
        Rows of ``trial_log`` (after any exclusions).
    reference : str or None
        Reference condition; default the first in sorted order.

    Returns
    -------
    list of Contrast
        Empty when fewer than two conditions have model-wrong trials.

    Raises
    ------
    ValueError
        If ``reference`` has no model-wrong trials.
    """
    from statsmodels.genmod.bayes_mixed_glm import BinomialBayesMixedGLM

    dec = decision_table(trials)
    d = dec[dec["model_wrong"]].copy() if not dec.empty else dec
    conds = sorted(d["condition"].unique()) if not d.empty else []
    if len(conds) < 2:
        return []
    ref = reference if reference is not None else conds[0]
    if ref not in conds:
        raise ValueError(f"reference condition {ref!r} has no model-wrong trials; conditions with some: {conds}")
    others = [c for c in conds if c != ref]
    d["y"] = d["agree"].astype(float)
    d["pid"] = d["participant_id"].astype(str)
    d["item"] = d["item_id"].astype(str)
    for c in others:
        d[f"c{others.index(c)}"] = (d["condition"] == c).astype(float)
    exog = np.column_stack([np.ones(len(d))] + [d[f"c{i}"].to_numpy() for i in range(len(others))])
    pids, items = sorted(d["pid"].unique()), sorted(d["item"].unique())
    z = np.column_stack([(d["pid"] == p).to_numpy(float) for p in pids]
                        + [(d["item"] == i).to_numpy(float) for i in items])
    ident = np.array([0] * len(pids) + [1] * len(items))
    model = BinomialBayesMixedGLM(d["y"].to_numpy(), exog, z, ident, fe_p=10.0,
                                  fep_names=["Intercept"] + others, vcp_names=["participant", "item"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # convergence chatter of the optimiser; the fit is checked below
        fit = model.fit_vb()
    mean, sd = np.asarray(fit.fe_mean), np.asarray(fit.fe_sd)
    if not (np.all(np.isfinite(mean)) and np.all(np.isfinite(sd))):
        raise ValueError("the mixed model did not converge (non-finite posterior); see the Wilson intervals instead")
    out = []
    for k, c in enumerate(others, start=1):
        out.append(Contrast(c, ref, float(mean[k]), float(sd[k]), float(mean[k] - 1.96 * sd[k]),
                            float(mean[k] + 1.96 * sd[k]), len(d), len(pids), len(items)))
    return out
