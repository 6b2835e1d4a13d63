"""Behavioural and questionnaire measures of a study, by condition.

Measures (docs/methods.md, "Study mode"):

- agreement fraction ``mean(final == model)`` and switch fraction
  ``#(initial != model and final == model) / #(initial != model)`` (Yin et al. 2019);
- over-reliance ``P(final == model | model wrong)``, under-reliance
  ``P(final != model | model right)``, team accuracy ``P(final == truth)``
  (Bansal et al. 2021);
- forward-prediction accuracy ``P(forward == model)`` (Hase & Bansal 2020);
- questionnaire scores (Jian et al. 2000 total, trust and distrust sub-scores;
  Hoffman et al. 2018 satisfaction mean; custom means);
- calibration: each participant's trust against the mean fidelity of the
  explanations they saw.

- relative AI reliance ``RAIR = #(final == model | initial wrong, model right) / #(initial wrong, model right)``
  and relative self-reliance ``RSR = #(final == initial | initial right, model wrong) / #(initial right,
  model wrong)`` (Schemmer et al. 2023), and accuracy per condition, before (``initial_accuracy``)
  and after advice. (The share of "appropriate" final decisions, following right advice or
  rejecting wrong advice, is final accuracy itself in a two-class task and is not reported apart.)
- weight of advice ``(final - initial) / (advice - initial)`` for numeric answers
  (Harvey & Fischer 1997), capped to [0, 1] as in Logg, Minson & Moore (2019).

Intervals respect their range (:mod:`explainers.intervals`): a proportion pooled over a
condition's decision trials gets the **Wilson** interval, a mean of participant
scores (questionnaires, confidence) a seeded **percentile bootstrap** over
participants, and the trust–fidelity correlation the Fisher z interval. The Wilson
interval treats a condition's trials as independent; the confirmatory mixed-effects
analysis (participant and item random intercepts, docs/methods.md, "Study mode")
is run on the exported trial log.

References
----------
.. [1] Yin, M., Wortman Vaughan, J., Wallach, H. (2019). CHI. doi 10.1145/3290605.3300509.
.. [2] Bansal, G. et al. (2021). Does the Whole Exceed its Parts? CHI. arXiv 2006.14779.
.. [3] Jian, J.-Y., Bisantz, A. M., Drury, C. G. (2000). Int. J. Cognitive Ergonomics 4(1).
.. [4] Hoffman, R. R. et al. (2018). arXiv 1812.04608.
.. [5] Harvey, N., Fischer, I. (1997). Taking advice: accepting help, improving judgment,
   and sharing responsibility. OBHDP 70(2), 117-133.
.. [6] Logg, J. M., Minson, J. A., Moore, D. A. (2019). Algorithm appreciation. OBHDP 151, 90-103.
.. [7] Schemmer, M., Kuehl, N., Benz, C., Bartos, A., Satzger, G. (2023). Appropriate reliance on AI
   advice: conceptualization and the effect of explanations. IUI '23. doi 10.1145/3581641.3584066.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np
import pandas as pd
from scipy import stats

from .exclusions import apply_exclusions, exclusions
from .instruments import score
from .numeric import weight_of_advice, woa_per_trial
from explainers.intervals import bootstrap_mean, wilson

__all__ = [
    "Reliance", "reliance", "weight_of_advice", "woa_per_trial", "woa_by_condition", "decision_table", "per_participant",
    "questionnaire_scores", "reliance_by_condition", "summary_by_condition", "calibration", "CI_METHOD",
    "PROPORTIONS", "exclusions", "apply_exclusions",
]

CI_METHOD = ("95%: Wilson interval for proportions pooled over a condition's decision trials; "
             "percentile bootstrap over participants (2000 resamples, seed 0) for means")
#: Reliance proportions: measure -> (numerator, denominator) column names of :func:`decision_table` flags.
#: Every reliance measure's denominator holds advised trials only, so in a no-advice arm
#: (``explanation: none``) they have ``n = 0`` and are undefined (NaN); ``accuracy`` is defined in every arm.
PROPORTIONS = {
    "agreement": ("agree", "advised"), "switch_fraction": ("switched", "initial_disagree"),
    "over_reliance": ("agree", "model_wrong"), "under_reliance": ("disagree", "model_right"),
    "rair": ("rair_hit", "rair_base"), "rsr": ("rsr_hit", "rsr_base"),
    "initial_accuracy": ("initial_correct", "initial_known"),
    "accuracy": ("final_correct", "known"), "forward_accuracy": None,
}


@dataclass(frozen=True)
class Reliance:
    """Reliance measures over a set of decision trials (NaN when undefined)."""

    n: int
    agreement: float
    switch: float
    over_reliance: float
    under_reliance: float
    team_accuracy: float
    rair: float = float("nan")
    rsr: float = float("nan")
    initial_accuracy: float = float("nan")


def _frac(num: int, den: int) -> float:
    return num / den if den else float("nan")


def reliance(initial: Sequence, model: Sequence, final: Sequence, truth: Sequence | None = None) -> Reliance:
    """Agreement, switching, over/under-reliance and Schemmer et al.'s RAIR and RSR.

    Parameters
    ----------
    initial, model, final : sequence of labels, each of length n_trials
        Participant's answer before advice, the model's advice, answer after advice.
    truth : sequence of labels or None, default=None
        True labels; without them over/under-reliance, RAIR, RSR and team accuracy are NaN.

    Returns
    -------
    Reliance

    Examples
    --------
    docs/methods.md, "Tests with exact oracles", T15(a):

    >>> r = reliance(list("ABBA"), list("AAAB"), list("AABB"))
    >>> r.agreement, round(r.switch, 4)
    (0.75, 0.6667)
    """
    i, m, f = (np.asarray(x, dtype=object) for x in (initial, model, final))
    if not len(i) == len(m) == len(f):
        raise ValueError(f"expected equal lengths, got {len(i)}, {len(m)}, {len(f)}")
    agree = f == m
    disagree0 = i != m
    out = dict(n=len(f), agreement=_frac(int(agree.sum()), len(f)),
               switch=_frac(int((disagree0 & agree).sum()), int(disagree0.sum())))
    if truth is None:
        out.update(over_reliance=float("nan"), under_reliance=float("nan"), team_accuracy=float("nan"))
    else:
        t = np.asarray(truth, dtype=object)
        wrong = m != t
        out.update(over_reliance=_frac(int((agree & wrong).sum()), int(wrong.sum())),
                   under_reliance=_frac(int((~agree & ~wrong).sum()), int((~wrong).sum())),
                   team_accuracy=_frac(int((f == t).sum()), len(f)),
                   rair=_frac(int((agree & (i != t) & ~wrong).sum()), int(((i != t) & ~wrong).sum())),
                   rsr=_frac(int(((f == i) & (i == t) & wrong).sum()), int(((i == t) & wrong).sum())),
                   initial_accuracy=_frac(int((i == t).sum()), len(f)))
    return Reliance(**out)


def decision_table(trials: pd.DataFrame) -> pd.DataFrame:
    """One row per two-stage decision trial: both answers, each stage's timing, and the reliance flags.

    Columns: the final phase's ``participant_id, condition, trial_index, item_id,
    model_prediction, truth, model_correct, fidelity, confidence``; ``initial`` and
    ``final`` answers; ``rt_initial_ms``/``rt_final_ms`` and
    ``server_timestamp_initial``/``server_timestamp_final`` per stage; and the flags
    ``agree, disagree, initial_disagree, switched, known, model_wrong, model_right,
    initial_correct, final_correct`` and Schemmer et al.'s cases ``rair_base`` (first answer wrong,
    advice right), ``rair_hit`` (of those, final = advice), ``rsr_base`` (first answer right, advice
    wrong), ``rsr_hit`` (of those, final = first answer) (see :data:`PROPORTIONS`).

    Parameters
    ----------
    trials : DataFrame
        Rows of the ``trial_log`` table.
    """
    cols = ["participant_id", "condition", "trial_index", "item_id", "model_prediction", "truth",
            "model_correct", "fidelity"]
    dec = trials[trials["phase"].isin(["initial", "final"])]
    if "initial" not in set(dec["phase"]):  # only no-advice trials: pivot_table would drop the column
        dec = pd.concat([dec, dec.iloc[:0]])
    if dec.empty:
        return pd.DataFrame(columns=cols + ["initial", "final", "agree", "switched"])
    wide = dec.pivot_table(index="participant_id trial_index".split(), columns="phase", values="response",
                           aggfunc="first").reset_index()
    for extra in ("rt_ms", "server_timestamp"):  # each stage's own timing (empty columns when not logged)
        if extra in dec:
            t = dec.pivot_table(index="participant_id trial_index".split(), columns="phase", values=extra,
                                aggfunc="first")
            t.columns = [f"{extra.replace('_ms', '')}_{c}" + ("_ms" if extra == "rt_ms" else "") for c in t.columns]
            wide = wide.merge(t.reset_index(), on=["participant_id", "trial_index"], how="left")
    meta = dec[dec["phase"] == "final"][cols + [c for c in ("confidence",) if c in dec]]
    out = meta.merge(wide, on=["participant_id", "trial_index"], how="inner")
    if "initial" not in out:
        out["initial"] = None
    out = out.dropna(subset=["final"]).copy()
    # advised: the two-stage trial of an arm that shows advice; a no-advice trial has a final answer only
    advised = out["initial"].notna() & out["model_prediction"].notna()
    follows = out["final"] == out["model_prediction"]
    out["advised"] = advised
    out["agree"] = advised & follows
    out["disagree"] = advised & ~follows
    out["initial_disagree"] = advised & (out["initial"] != out["model_prediction"])
    out["switched"] = out["initial_disagree"] & out["agree"]
    out["known"] = out["truth"].notna()
    out["advised_known"] = advised & out["known"]
    out["model_wrong"] = out["advised_known"] & (out["model_prediction"] != out["truth"])
    out["model_right"] = out["advised_known"] & (out["model_prediction"] == out["truth"])
    out["initial_known"] = out["known"] & out["initial"].notna()
    out["initial_correct"] = out["initial_known"] & (out["initial"] == out["truth"])
    out["rair_base"] = out["model_right"] & out["initial_known"] & ~out["initial_correct"]
    out["rair_hit"] = out["rair_base"] & out["agree"]
    out["rsr_base"] = out["model_wrong"] & out["initial_correct"]
    out["rsr_hit"] = out["rsr_base"] & (out["final"] == out["initial"])
    out["final_correct"] = out["known"] & (out["final"] == out["truth"])
    return out.reset_index(drop=True)


def woa_by_condition(trials: pd.DataFrame, level: float = 0.95) -> pd.DataFrame:
    """Weight of advice of numeric two-stage trials by condition, with a bootstrap interval over participants.

    Parameters
    ----------
    trials : DataFrame
        Rows of ``trial_log`` whose ``initial``/``final`` responses and ``model_prediction`` are
        numbers (text that parses as a float).

    Returns
    -------
    DataFrame
        ``condition, mean, ci_low, ci_high, n_trials, n_excluded, n_participants``: the mean over
        participants of each one's mean per-trial weight (:func:`woa_per_trial`), its percentile
        bootstrap interval over participants (:func:`explainers.intervals.bootstrap_mean`),
        the trials used, and those excluded because the advice equalled the first estimate.
    """
    cols = ["condition", "mean", "ci_low", "ci_high", "n_trials", "n_excluded", "n_participants"]
    dec = decision_table(trials)
    dec = dec[dec["advised"]] if not dec.empty else dec
    rows = []
    for cond, g in dec.groupby("condition", sort=True):
        w = woa_per_trial(*(pd.to_numeric(g[c]).to_numpy(float) for c in ("initial", "model_prediction", "final")))
        per = pd.Series(w, index=g.index).groupby(g["participant_id"]).mean()
        mean, lo, hi, people = bootstrap_mean(per.tolist(), level)
        rows.append((cond, mean, lo, hi, int((~np.isnan(w)).sum()), int(np.isnan(w).sum()), people))
    return pd.DataFrame(rows, columns=cols)


def reliance_by_condition(trials: pd.DataFrame, level: float = 0.95) -> pd.DataFrame:
    """Every reliance proportion by condition, pooled over decision trials, with its Wilson interval.

    Parameters
    ----------
    trials : DataFrame
        Rows of the ``trial_log`` table.

    Returns
    -------
    DataFrame
        Columns ``condition, measure, mean, ci_low, ci_high, n, n_participants``; ``n`` is the
        denominator in trials (``switch_fraction``: trials whose initial answer differed from the
        advice; ``over_reliance``: trials where the model was wrong; ``under_reliance``: where it
        was right; ``rair``: first answer wrong and advice right; ``rsr``: first answer right and
        advice wrong; the others: all decision trials with a known truth). Measures are named in
        :data:`PROPORTIONS`; a measure with ``n = 0`` (e.g. in a no-advice arm) is NaN.
    """
    dec = decision_table(trials)
    fwd = trials[trials["phase"] == "forward"] if "phase" in trials else trials.iloc[:0]
    conds = sorted(set(dec["condition"]) | set(fwd["condition"]))
    rows = []
    for cond in conds:
        d = dec[dec["condition"] == cond]
        for m, spec in PROPORTIONS.items():
            if spec is None:  # forward prediction: P(forward == model), when the study asks it
                if fwd.empty:
                    continue
                g = fwd[(fwd["condition"] == cond) & fwd["correct"].notna()]
                k, n, people = int(g["correct"].astype(bool).sum()), len(g), g["participant_id"].nunique()
            else:
                num, den = spec
                g = d if den is None else d[d[den]]
                k, n, people = int(g[num].sum()), len(g), g["participant_id"].nunique()
            rows.append((cond, m, *wilson(k, n, level), n, people))
    return pd.DataFrame(rows, columns=["condition", "measure", "mean", "ci_low", "ci_high", "n", "n_participants"])


def per_participant(trials: pd.DataFrame) -> pd.DataFrame:
    """Behavioural measures per participant and condition (block)."""
    rows = []
    dec = decision_table(trials)
    fwd = trials[trials["phase"] == "forward"]
    keys = trials[trials["phase"] != "attention"][["participant_id", "condition"]].drop_duplicates()
    for pid, cond in keys.itertuples(index=False):
        mine = dec[(dec["participant_id"] == pid) & (dec["condition"] == cond)]
        d = mine[mine["advised"]]  # reliance needs advice; a no-advice arm's measures stay NaN
        f = fwd[(fwd["participant_id"] == pid) & (fwd["condition"] == cond)]
        truth = None if d.empty or d["truth"].isna().any() else d["truth"].tolist()
        r = reliance(d["initial"].tolist(), d["model_prediction"].tolist(), d["final"].tolist(), truth)
        known = mine[mine["known"]]
        shown = trials[(trials["participant_id"] == pid) & (trials["condition"] == cond)]["fidelity"].dropna()
        rows.append(dict(participant_id=pid, condition=cond, n_decisions=len(mine), agreement=r.agreement,
                         switch=r.switch, over_reliance=r.over_reliance, under_reliance=r.under_reliance,
                         rair=r.rair, rsr=r.rsr,
                         team_accuracy=float(known["final_correct"].mean()) if len(known) else float("nan"),
                         forward_accuracy=f["correct"].astype(float).mean() if len(f) else float("nan"),
                         mean_fidelity=float(shown.mean()) if len(shown) else float("nan")))
    return pd.DataFrame(rows)


def questionnaire_scores(responses: pd.DataFrame) -> pd.DataFrame:
    """Scores per participant, condition and questionnaire (rows of ``questionnaire_responses``).

    Columns: ``sum`` and ``total`` (the mean) after reverse-coding the items the study marks
    reversed (:func:`study.instruments.score`), ``n_items``, and for ``jian2000`` the ``trust``
    and ``distrust`` sub-scores.
    """
    rows = []
    keys = ["participant_id", "condition", "block_index", "questionnaire_id", "instrument"]
    for key, g in responses.groupby(keys, sort=True):
        s = score(dict(zip(g["item_label"], g["response"].astype(int))), scale_points=int(g["scale_points"].iloc[0]),
                  reverse=set(g.loc[g["reverse"].astype(bool), "item_label"]), instrument=key[-1])
        rows.append(dict(zip(keys, key)) | s)
    return pd.DataFrame(rows, columns=keys + ["sum", "total", "n_items", "trust", "distrust"])


def summary_by_condition(trials: pd.DataFrame, responses: pd.DataFrame, *, numeric: bool = False) -> pd.DataFrame:
    """Every measure by condition with its estimate and 95% interval (``CI_METHOD``).

    Returns
    -------
    DataFrame
        Columns ``condition, measure, mean, ci_low, ci_high, n, n_participants``. Reliance
        proportions come from :func:`reliance_by_condition` (Wilson; ``n`` in trials); with
        ``numeric=True`` (a numeric study) the weight of advice of :func:`woa_by_condition` instead;
        ``confidence`` (final answers) and questionnaire measures, named
        ``<questionnaire_id>.<sum|total|trust|distrust>`` (``total`` is the item mean), are means of participant scores with a
        percentile bootstrap interval (``n`` in participants).
    """
    cols = ["condition", "measure", "mean", "ci_low", "ci_high", "n", "n_participants"]
    if numeric:  # numbers, not labels: weight of advice (bootstrap over participants; n in trials used)
        w = woa_by_condition(trials)
        parts = [pd.DataFrame({"condition": w["condition"], "measure": "weight_of_advice", "mean": w["mean"],
                               "ci_low": w["ci_low"], "ci_high": w["ci_high"], "n": w["n_trials"],
                               "n_participants": w["n_participants"]}, columns=cols)]
    else:
        parts = [reliance_by_condition(trials)]
    out = []
    final = trials[(trials["phase"] == "final") & trials["confidence"].notna()] if "confidence" in trials else None
    if final is not None and not final.empty:
        per = final.groupby(["condition", "participant_id"])["confidence"].mean()
        for cond, g in per.groupby(level="condition", sort=True):
            mean, lo, hi, n = bootstrap_mean(g.tolist())
            out.append((cond, "confidence", mean, lo, hi, n, n))
    qs = questionnaire_scores(responses) if not responses.empty else pd.DataFrame(
        columns=["condition", "questionnaire_id", "sum", "total", "trust", "distrust"])
    for (cond, qid), g in qs.groupby(["condition", "questionnaire_id"], sort=True):
        for m in ("sum", "total", "trust", "distrust"):
            if g[m].notna().any():
                mean, lo, hi, n = bootstrap_mean(g[m].tolist())
                out.append((cond, f"{qid}.{m}", mean, lo, hi, n, n))
    parts.append(pd.DataFrame(out, columns=cols))
    return pd.concat([p for p in parts if not p.empty] or [pd.DataFrame(columns=cols)], ignore_index=True)


def calibration(trials: pd.DataFrame, responses: pd.DataFrame, *, questionnaire_id: str = "jian2000",
                measure: str = "total") -> dict:
    """Trust against the fidelity of the explanations each participant saw.

    Returns
    -------
    dict
        ``n``, Pearson ``r`` between participant trust and mean fidelity shown,
        its 95% Fisher-z interval ``ci_low``/``ci_high`` (NaN when n < 4), and
        ``points``: a DataFrame of ``participant_id, condition, mean_fidelity,
        trust`` for a scatter plot. Well-calibrated trust rises with fidelity.
    """
    pp = per_participant(trials)[["participant_id", "condition", "mean_fidelity"]]
    qs = questionnaire_scores(responses)
    qs = qs[qs["questionnaire_id"] == questionnaire_id][["participant_id", "condition", measure]]
    pts = pp.merge(qs.rename(columns={measure: "trust"}), on=["participant_id", "condition"]).dropna()
    n = len(pts)
    r = lo = hi = float("nan")
    if n >= 3 and pts["mean_fidelity"].std() > 0 and pts["trust"].std() > 0:
        r = float(np.corrcoef(pts["mean_fidelity"], pts["trust"])[0, 1])
        if n >= 4 and abs(r) < 1:
            z, se = math.atanh(r), 1 / math.sqrt(n - 3)
            q = stats.norm.ppf(0.975)
            lo, hi = math.tanh(z - q * se), math.tanh(z + q * se)
    return {"n": n, "r": r, "ci_low": lo, "ci_high": hi, "points": pts.reset_index(drop=True)}
