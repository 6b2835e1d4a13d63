"""Trust and reliance regressed on the fidelity of the explanations shown (issue 26).

Does a persuasive (simplified) explanation raise trust without raising appropriate reliance? Each
trial logs the fidelity of the explanation it showed: ``fidelity`` (the share of the full
explanation's |attribution| the shown one keeps, ``mass_retained``) and, for a simplification,
``fidelity_measures``, every figure of ``Simplification.fidelity_after`` (sufficiency and
comprehensiveness after DeYoung et al. 2020, ERASER; rank agreement; ``r2_restricted``, the local
surrogate's fit on the kept features; see docs/methods.md, "Persuasive layer") and
``surrogate_agreement``, the agreement with the model of the explanation's rule surrogate, logged
as missing (null) for an explanation without one.

Two levels, each an ordinary least-squares line ``outcome ~ 1 + fidelity`` per fidelity figure,
over the advised arms (a no-advice arm shows no explanation, so it has no fidelity):

- **participant**: each participant's trust score (a questionnaire's item mean) and their own
  RAIR, RSR and over-reliance against the mean of the figure over the explanations they saw;
  classical OLS standard errors (participants are independent);
- **trial**: the Schemmer et al. (2023) cases, switching to right advice after a wrong first
  answer (``rair``) and keeping a right first answer against wrong advice (``rsr``), and
  following wrong advice (``over_reliance``), each 0/1 on its trials against the trial's figure
  (a linear probability model), with standard errors clustered by participant (the sandwich
  estimator with statsmodels' small-sample factor ``G/(G-1) * (N-1)/(N-K)``; Liang & Zeger 1986).

In a between-subjects study where every arm sees the same stimuli, a participant's mean fidelity
is their arm's, so the participant-level slope is the arm contrast scaled by the arms' fidelity
difference; the trial level also uses the variation between stimuli. A slope is NaN, with the
reason, when the figure does not vary over the rows used.
"""
from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd

from .analysis import decision_table, per_participant, questionnaire_scores

__all__ = ["fidelity_figures", "participant_table", "trial_table", "fidelity_regression", "by_condition", "COLUMNS",
           "FIGURES", "MISSING"]

COLUMNS = ["level", "outcome", "predictor", "slope", "se", "ci_low", "ci_high", "p", "intercept", "r2", "n",
           "n_participants", "note"]
PARTICIPANT_OUTCOMES = ("trust", "rair", "rsr", "over_reliance")
#: The figures regressed on by default: the share of |attribution| shown, ERASER sufficiency and
#: comprehensiveness, the local surrogate's R² on the kept features (``r2_restricted``), and the
#: agreement with the model of the explanation's rule surrogate (``surrogate_agreement``; logged as
#: missing for an explanation without one, e.g. every attribution explanation).
FIGURES = ("fidelity", "sufficiency", "comprehensiveness", "r2_restricted", "surrogate_agreement")
#: Why a figure can be missing on every trial, said in the regression's note.
MISSING = {"surrogate_agreement": "no explanation shown has a rule surrogate"}
TRIAL_OUTCOMES = {"rair": ("rair_hit", "rair_base"), "rsr": ("rsr_hit", "rsr_base"),
                  "over_reliance": ("agree", "model_wrong")}


def _measures(cell) -> dict:
    if cell is None or (isinstance(cell, float) and math.isnan(cell)):
        return {}
    if isinstance(cell, str):
        cell = json.loads(cell) if cell else {}
    return {str(k): (float(v) if v is not None else float("nan")) for k, v in dict(cell).items()}


def fidelity_figures(trials: pd.DataFrame) -> pd.DataFrame:
    """Each final-answer trial's fidelity figures: ``participant_id, trial_index`` and one column per figure.

    ``fidelity`` is the logged headline figure; every key of ``fidelity_measures`` becomes a column
    (``mass_retained`` is left out when it repeats ``fidelity``). Trials without advice have NaN.
    """
    fin = trials[trials["phase"] == "final"]
    out = fin[["participant_id", "trial_index"]].copy()
    out["fidelity"] = pd.to_numeric(fin["fidelity"], errors="coerce").to_numpy()
    if "fidelity_measures" in fin:
        extra = pd.DataFrame([_measures(c) for c in fin["fidelity_measures"]], index=fin.index)
        for col in extra.columns:
            if col == "mass_retained" and np.allclose(extra[col].fillna(-1), out["fidelity"].fillna(-1)):
                continue
            out[col] = pd.to_numeric(extra[col], errors="coerce").to_numpy()
    return out.reset_index(drop=True)


def trial_table(trials: pd.DataFrame) -> pd.DataFrame:
    """:func:`study.analysis.decision_table`'s advised trials joined to their :func:`fidelity_figures`."""
    dec = decision_table(trials)
    if dec.empty:
        return dec
    dec = dec[dec["advised"]].drop(columns=["fidelity"])
    return dec.merge(fidelity_figures(trials), on=["participant_id", "trial_index"], how="left")


def participant_table(trials: pd.DataFrame, responses: pd.DataFrame, questionnaire_id: str | None) -> pd.DataFrame:
    """One row per participant and condition of an advised arm: trust, RAIR, RSR, over-reliance, mean figures.

    Parameters
    ----------
    questionnaire_id : str or None
        The questionnaire whose item mean (``total``, reverse items coded) is ``trust``; None: no trust column.
    """
    tt = trial_table(trials)
    if tt.empty:
        return pd.DataFrame(columns=["participant_id", "condition", *PARTICIPANT_OUTCOMES])
    figs = [c for c in fidelity_figures(trials).columns if c not in ("participant_id", "trial_index")]
    means = tt.groupby(["participant_id", "condition"])[figs].mean().reset_index()
    pp = per_participant(trials)[["participant_id", "condition", "rair", "rsr", "over_reliance"]]
    out = means.merge(pp, on=["participant_id", "condition"], how="left")
    if questionnaire_id is not None and not responses.empty:
        qs = questionnaire_scores(responses)
        qs = qs[qs["questionnaire_id"] == questionnaire_id].groupby(["participant_id", "condition"])["total"].mean()
        out = out.merge(qs.rename("trust").reset_index(), on=["participant_id", "condition"], how="left")
    else:
        out["trust"] = float("nan")
    return out


def _ols(y: np.ndarray, x: np.ndarray, groups: np.ndarray | None) -> dict:
    """Slope of ``y ~ 1 + x`` by statsmodels OLS; cluster-robust by ``groups`` when given."""
    import statsmodels.api as sm
    from scipy import stats

    X = sm.add_constant(x, has_constant="add")
    if groups is None:
        fit = sm.OLS(y, X).fit()
        df = fit.df_resid
    else:
        fit = sm.OLS(y, X).fit(cov_type="cluster", cov_kwds={"groups": pd.factorize(groups)[0]})
        df = len(np.unique(groups)) - 1
    se = float(fit.bse[1])
    q = float(stats.t.ppf(0.975, df)) if groups is None else float(stats.norm.ppf(0.975))
    return dict(slope=float(fit.params[1]), se=se, ci_low=float(fit.params[1]) - q * se,
                ci_high=float(fit.params[1]) + q * se, p=float(fit.pvalues[1]), intercept=float(fit.params[0]),
                r2=float(fit.rsquared))


def _row(level, outcome, predictor, y, x, who, clustered) -> dict:
    logged = np.isfinite(x)
    ok = np.isfinite(y) & logged
    n_rows = len(x)
    y, x, who = y[ok], x[ok], who[ok]
    base = dict(level=level, outcome=outcome, predictor=predictor, n=int(ok.sum()),
                n_participants=int(len(set(who))), note="")
    nan = dict(slope=math.nan, se=math.nan, ci_low=math.nan, ci_high=math.nan, p=math.nan, intercept=math.nan,
               r2=math.nan)
    if n_rows and not logged.any():  # logged as missing on every trial: say why
        why = MISSING.get(predictor, "not logged with these trials")
        return base | nan | {"note": f"{predictor} is missing on all {n_rows} rows: {why}"}
    if len(y) < 3 or (clustered and len(set(who)) < 2):
        return base | nan | {"note": "too few observations"}
    if np.ptp(x) <= 1e-9 * max(1.0, float(np.abs(x).max())):  # constant up to rounding: no slope to estimate
        return base | nan | {"note": f"{predictor} does not vary over these {len(y)} rows"}
    if np.ptp(y) == 0:
        return base | nan | {"note": f"{outcome} is {y[0]:g} on all {len(y)} rows"}
    return base | _ols(y, x, who if clustered else None)


def fidelity_regression(trials: pd.DataFrame, responses: pd.DataFrame, *, questionnaire_id: str | None = None,
                        figures: tuple[str, ...] = FIGURES) -> pd.DataFrame:
    """Every outcome regressed on every logged fidelity figure, at the participant and the trial level.

    Parameters
    ----------
    trials, responses : DataFrame
        Rows of ``trial_log`` and ``questionnaire_responses`` (after exclusions).
    questionnaire_id : str or None
        The trust questionnaire (its item mean is the trust score); None leaves trust out.
    figures : tuple of str, default=FIGURES
        The logged fidelity figures to regress on (those not logged are skipped).

    Returns
    -------
    DataFrame
        :data:`COLUMNS`: ``slope`` of the outcome per unit of the figure, its standard error and 95%
        interval (participant level: t with n - 2 df; trial level: normal, SE clustered by
        participant), ``p``, ``intercept``, ``r2``, rows ``n`` (participants or trials) and
        ``n_participants``; ``note`` says why a slope is NaN.
    """
    rows = []
    pt = participant_table(trials, responses, questionnaire_id)
    tt = trial_table(trials)
    figs = [c for c in figures if c in pt.columns]
    for f in figs:
        for out in PARTICIPANT_OUTCOMES:
            if out == "trust" and questionnaire_id is None:
                continue
            rows.append(_row("participant", out, f, pt[out].to_numpy(float), pt[f].to_numpy(float),
                             pt["participant_id"].to_numpy(), clustered=False))
        for out, (hit, base) in TRIAL_OUTCOMES.items():
            d = tt[tt[base].astype(bool)]
            rows.append(_row("trial", out, f, d[hit].astype(float).to_numpy(), d[f].to_numpy(float),
                             d["participant_id"].to_numpy(), clustered=True))
    return pd.DataFrame(rows, columns=COLUMNS)


def by_condition(trials: pd.DataFrame, responses: pd.DataFrame, *, questionnaire_id: str | None = None
                 ) -> pd.DataFrame:
    """Per advised condition: mean trust, RAIR, RSR, over-reliance (of participants) and mean fidelity shown."""
    pt = participant_table(trials, responses, questionnaire_id)
    if pt.empty:
        return pt
    cols = [c for c in pt.columns if c not in ("participant_id", "condition")]
    out = pt.groupby("condition", sort=True)[cols].mean()
    out.insert(0, "n_participants", pt.groupby("condition", sort=True).size())
    return out.reset_index()
