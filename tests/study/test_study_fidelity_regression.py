"""Issue 26: trust and reliance regressed on the fidelity logged with each trial, against an independent
computation (numpy least squares, the classical and the participant-clustered sandwich variance written
out here) on a seeded trial log."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from study import fidelity_regression as fr

CLASSES = ("a", "b")


def _study_log(seed: int = 3, surrogate: bool = False):
    """8 advised participants (two arms) x 10 trials, plus a no-advice participant; fidelity varies by trial.

    ``surrogate_agreement`` is logged as missing (None: an attribution explanation), or, with ``surrogate``,
    varies by trial as for explanations with a rule surrogate."""
    rng = np.random.default_rng(seed)
    trials, answers = [], []
    for p in range(9):
        cond = "alone" if p == 8 else ("desc" if p % 2 else "pers")
        for t in range(10):
            truth = CLASSES[t % 2]
            model = truth if t % 3 else CLASSES[1 - t % 2]  # wrong on trials 0, 3, 6, 9
            first, final = (rng.choice(CLASSES) for _ in range(2))
            fid = None if cond == "alone" else (1.0 if cond == "desc" else float(rng.uniform(0.3, 0.9)))
            meas = None if fid is None else {"mass_retained": fid, "sufficiency": float(rng.uniform(0, 0.3)),
                                             "r2_restricted": None if t == 5 else float(rng.uniform(0.2, 0.9)),
                                             "surrogate_agreement": float(rng.uniform(0.6, 1.0)) if surrogate else None}
            base = dict(participant_id=f"p{p}", condition=cond, trial_index=t, item_id=f"i{t}", truth=truth,
                        model_prediction=None if cond == "alone" else model, model_correct=None, fidelity=fid,
                        fidelity_measures=meas, confidence=50.0, correct=None)
            if cond != "alone":
                trials.append(base | dict(phase="initial", response=first))
            trials.append(base | dict(phase="final", response=final))
        for item in ("q1", "q2"):
            answers.append(dict(participant_id=f"p{p}", condition=cond, block_index=0, questionnaire_id="trust",
                                instrument="custom", item_label=item, response=int(rng.integers(1, 8)),
                                scale_points=7, reverse=False))
    return pd.DataFrame(trials), pd.DataFrame(answers)


def _classical(y, x):
    X = np.column_stack([np.ones_like(x), x])
    beta, *_ = np.linalg.lstsq(X, y, rcond=None)
    u = y - X @ beta
    s2 = u @ u / (len(y) - 2)
    return beta, math.sqrt(s2 * np.linalg.inv(X.T @ X)[1, 1])


def _clustered(y, x, groups):
    X = np.column_stack([np.ones_like(x), x])
    beta, *_ = np.linalg.lstsq(X, y, rcond=None)
    u = y - X @ beta
    bread = np.linalg.inv(X.T @ X)
    meat = np.zeros((2, 2))
    for g in np.unique(groups):
        s = X[groups == g].T @ u[groups == g]
        meat += np.outer(s, s)
    n, G = len(y), len(np.unique(groups))
    c = G / (G - 1) * (n - 1) / (n - 2)
    return beta, math.sqrt(c * (bread @ meat @ bread)[1, 1])


def test_slopes_and_standard_errors_equal_an_independent_least_squares():
    trials, answers = _study_log()
    got = fr.fidelity_regression(trials, answers, questionnaire_id="trust").set_index(["level", "outcome", "predictor"])
    # independent: from the raw rows, without study.analysis
    fin = trials[trials["phase"] == "final"].set_index(["participant_id", "trial_index"])
    ini = trials[trials["phase"] == "initial"].set_index(["participant_id", "trial_index"])["response"]
    adv = fin[fin["condition"] != "alone"].copy()
    adv["initial"] = ini
    adv["sufficiency"] = [m["sufficiency"] for m in adv["fidelity_measures"]]
    adv["r2_restricted"] = [np.nan if m["r2_restricted"] is None else m["r2_restricted"] for m in adv["fidelity_measures"]]
    first_right, model_right = adv["initial"] == adv["truth"], adv["model_prediction"] == adv["truth"]
    who = adv.index.get_level_values("participant_id").to_numpy()
    cases = {"rair": (~first_right & model_right, adv["response"] == adv["model_prediction"]),
             "rsr": (first_right & ~model_right, adv["response"] == adv["initial"]),
             "over_reliance": (~model_right, adv["response"] == adv["model_prediction"])}
    checked = 0
    for out, (base, hit) in cases.items():
        for fig in ("fidelity", "sufficiency", "r2_restricted"):
            keep = base.to_numpy() & np.isfinite(adv[fig].to_numpy(float))
            beta, se = _clustered(hit.to_numpy(float)[keep], adv[fig].to_numpy(float)[keep], who[keep])
            row = got.loc[("trial", out, fig)]
            assert (row["slope"], row["intercept"], row["se"]) == (pytest.approx(beta[1], abs=1e-10),
                                                                    pytest.approx(beta[0], abs=1e-10),
                                                                    pytest.approx(se, abs=1e-10)), (out, fig)
            assert row["n"] == keep.sum() and row["n_participants"] == len(set(who[keep]))
            checked += 1
    # participant level: trust = the mean of the two items; the participant's mean figure over their advised trials
    trust = answers.groupby("participant_id")["response"].mean()
    for fig in ("fidelity", "sufficiency"):
        m = adv.groupby(level="participant_id")[fig].mean()
        beta, se = _classical(trust[m.index].to_numpy(float), m.to_numpy(float))
        row = got.loc[("participant", "trust", fig)]
        assert (row["slope"], row["se"], row["n"]) == (pytest.approx(beta[1], abs=1e-10), pytest.approx(se, abs=1e-10), 8)
        checked += 1
    assert checked == 11
    # the no-advice participant has no fidelity and is in no regression; a logged figure that is constant has no slope
    assert (got["n_participants"] <= 8).all() and "comprehensiveness" not in set(got.index.get_level_values(2))


def test_a_figure_that_does_not_vary_gives_no_slope_and_says_why():
    trials, answers = _study_log()
    trials = trials.assign(fidelity=trials["fidelity"].where(trials["fidelity"].isna(), 0.5))
    got = fr.fidelity_regression(trials, answers, questionnaire_id="trust").set_index(["level", "outcome", "predictor"])
    row = got.loc[("participant", "trust", "fidelity")]
    assert math.isnan(row["slope"]) and row["note"] == "fidelity does not vary over these 8 rows"
    by = fr.by_condition(trials, answers, questionnaire_id="trust").set_index("condition")
    assert list(by.index) == ["desc", "pers"] and (by["n_participants"] == 4).all()


def test_surrogate_agreement_slopes_equal_an_independent_least_squares():
    trials, answers = _study_log(seed=5, surrogate=True)
    got = fr.fidelity_regression(trials, answers, questionnaire_id="trust").set_index(["level", "outcome", "predictor"])
    fin = trials[trials["phase"] == "final"].set_index(["participant_id", "trial_index"])
    ini = trials[trials["phase"] == "initial"].set_index(["participant_id", "trial_index"])["response"]
    adv = fin[fin["condition"] != "alone"].copy()
    adv["initial"] = ini
    adv["sa"] = [m["surrogate_agreement"] for m in adv["fidelity_measures"]]
    who = adv.index.get_level_values("participant_id").to_numpy()
    first_right, model_right = adv["initial"] == adv["truth"], adv["model_prediction"] == adv["truth"]
    cases = {"rair": (~first_right & model_right, adv["response"] == adv["model_prediction"]),
             "rsr": (first_right & ~model_right, adv["response"] == adv["initial"]),
             "over_reliance": (~model_right, adv["response"] == adv["model_prediction"])}
    for out, (base, hit) in cases.items():
        keep = base.to_numpy()
        beta, se = _clustered(hit.to_numpy(float)[keep], adv["sa"].to_numpy(float)[keep], who[keep])
        row = got.loc[("trial", out, "surrogate_agreement")]
        assert (row["slope"], row["intercept"], row["se"], row["n"]) == (
            pytest.approx(beta[1], abs=1e-10), pytest.approx(beta[0], abs=1e-10), pytest.approx(se, abs=1e-10),
            keep.sum()), out
    trust = answers.groupby("participant_id")["response"].mean()
    m = adv.groupby(level="participant_id")["sa"].mean()
    beta, se = _classical(trust[m.index].to_numpy(float), m.to_numpy(float))
    row = got.loc[("participant", "trust", "surrogate_agreement")]
    assert (row["slope"], row["se"], row["n"]) == (pytest.approx(beta[1], abs=1e-10), pytest.approx(se, abs=1e-10), 8)
    means = fr.by_condition(trials, answers, questionnaire_id="trust").set_index("condition")["surrogate_agreement"]
    assert means["pers"] == pytest.approx(adv[adv["condition"] == "pers"].groupby(level=0)["sa"].mean().mean())


def test_a_surrogate_agreement_logged_as_missing_is_stated_as_missing():
    """What every attribution explanation logs today: the regression names the figure and says why it has no slope."""
    trials, answers = _study_log()
    got = fr.fidelity_regression(trials, answers, questionnaire_id="trust").set_index(["level", "outcome", "predictor"])
    row = got.loc[("trial", "over_reliance", "surrogate_agreement")]
    assert math.isnan(row["slope"]) and row["n"] == 0
    assert row["note"] == "surrogate_agreement is missing on all 32 rows: no explanation shown has a rule surrogate"
    assert got.loc[("participant", "trust", "surrogate_agreement")]["note"].startswith(
        "surrogate_agreement is missing on all 8 rows")
