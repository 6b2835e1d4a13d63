"""Researcher dashboard content: enrolment, completion, results with CIs, calibration, exports."""
from __future__ import annotations

import io
import tempfile
import zipfile
from pathlib import Path

import dash_bootstrap_components as dbc
import pandas as pd
from dash import dcc, html

from app.views import figures_study
from app.views.components import card, fmt
from study import analysis, export, export_analysis, runtime
from study.instruments import wording_warnings
from study.schema import StudyError

from app.services.study_stimuli import pin_status

MEASURES = {
    "agreement": "Agreement (final = model)", "switch_fraction": "Switch fraction (to the model's advice)",
    "over_reliance": "Over-reliance (followed wrong advice)", "under_reliance": "Under-reliance (rejected right advice)",
    "rair": "RAIR (switched to right advice after a wrong first answer)",
    "rsr": "RSR (kept a right first answer against wrong advice)", "initial_accuracy": "Accuracy before advice",
    "accuracy": "Accuracy after advice", "forward_accuracy": "Forward prediction", "confidence": "Confidence (final)",
    "weight_of_advice": "Weight of advice (0 keeps own estimate, 1 adopts the model's)",
}


def _table(frame: pd.DataFrame) -> dbc.Table:
    head = html.Thead(html.Tr([html.Th(c) for c in frame.columns]))
    body = html.Tbody([html.Tr([html.Td(v) for v in row]) for row in frame.astype(str).itertuples(index=False)])
    return dbc.Table([head, body], size="sm", striped=True, className="study-table")


def dashboard(study_id: str) -> html.Div:
    """Enrolment per condition, completion, results by condition and trust vs fidelity."""
    try:
        study = runtime.get_study(study_id)
    except StudyError as err:  # the researcher is the one who can fix the file: show every error with its line
        return dbc.Alert([html.P(f"{study_id}.yaml has {len(err.errors)} error(s); participants cannot take this "
                                 f"study until they are fixed (python -m app study validate):"),
                          html.Pre(str(err))], color="danger")
    if study is None:
        return html.P("No such study.")
    eng = runtime.engine()
    changed = pin_status(study)
    pinned = [dbc.Alert(changed, color="warning", id="study-pin-warning")] if changed else []
    pinned += [dbc.Alert(w, color="warning", className="study-wording-warning")
               for w in wording_warnings(study.questionnaires)]
    if runtime.is_example(study_id):
        pinned.append(dbc.Alert(f"Bundled example, read-only ({runtime.study_path(study_id)}): participants can take "
                                f"it at /study/{study_id}. To change it, copy it into {runtime.study_dir()}/ (that "
                                "copy takes precedence); python -m app study simulate fills a database with "
                                "simulated participants.", color="info", id="study-example-note"))
    people = pd.DataFrame(export.table_rows(eng, "participants", study_id))
    trials = pd.DataFrame(export.table_rows(eng, "trial_log", study_id))
    answers = pd.DataFrame(export.table_rows(eng, "questionnaire_responses", study_id))
    if people.empty:
        return html.Div(pinned + [html.P("No participants yet.")])
    enrol = (people.groupby(["condition", "stratum", "status"]).size().unstack("status", fill_value=0).reset_index())
    parts = pinned + [card("Enrolment and completion", _table(enrol),
                  source="Counts from the participants table; allocation by seeded permuted blocks, stratified when the study says so.")]
    trials, answers, excluded = analysis.apply_exclusions(trials, answers, study.max_failed_attention_checks)
    parts.append(_exclusion_card(study, excluded))
    if not trials.empty:  # questionnaire scores join in once answers exist
        s = analysis.summary_by_condition(trials, answers, numeric=study.model.numeric)
        s["measure"] = s["measure"].map(lambda m: MEASURES.get(m, m))
        none = s["n"] == 0  # e.g. reliance in a no-advice arm: no advised trial to measure it on
        s["95% CI"] = ["—" if z else f"[{fmt(lo)}, {fmt(hi)}]" for z, lo, hi in zip(none, s["ci_low"], s["ci_high"])]
        s["mean"] = [fmt(m) if not z else _undefined(study, c) for z, m, c in zip(none, s["mean"], s["condition"])]
        s = s.rename(columns={"mean": "estimate", "n": "n (trials or participants)", "n_participants": "participants"})
        parts.append(card("Results by condition", _table(s[["condition", "measure", "estimate", "95% CI",
                                                              "n (trials or participants)", "participants"]]),
                          source=f"{analysis.CI_METHOD}. Reliance as in Yin et al. 2019, Bansal et al. 2021 and "
                                 "Schemmer et al. 2023 (RAIR, RSR); "
                                 "trust: Jian et al. 2000; satisfaction: Hoffman et al. 2018."))
    if not trials.empty:
        parts += _reliance_plots(study, trials, answers)
    return html.Div(parts)


def _undefined(study, condition: str) -> str:
    """Why a measure has no trial to be computed on: the arm shows no advice, or no trial of that kind
    (e.g. RAIR in an advised arm where no first answer was wrong on right advice)."""
    try:
        advised = study.advised(condition)
    except KeyError:  # a condition the file no longer names
        advised = True
    return "undefined (no trials of that kind)" if advised else "undefined (no advice)"


def _exclusion_card(study, excluded: pd.DataFrame):
    """Who the study's pre-declared exclusion rule removes from every result below, and why."""
    rule = study.max_failed_attention_checks
    if rule is None:
        return card("Exclusions", html.P("The study file declares no exclusion rule: every participant is analysed."),
                    source="exclusions.max_failed_attention_checks in the study file, declared before data collection.")
    body = [html.P(f"{len(excluded)} participant(s) excluded from every result below: more than {rule} failed "
                   f"attention check(s).", id="study-exclusion-count")]
    if not excluded.empty:
        body.append(_table(excluded[["participant_id", "condition", "reason"]]))
    return card("Exclusions", body, source="The study file's pre-declared rule (exclusions.max_failed_attention_checks), "
                                           "applied to the trial log before any analysis.")


def _mixed_card(study, trials: pd.DataFrame) -> list:
    """The main contrast, over-reliance by condition, from the mixed-effects model (or why it is missing)."""
    from study import mixed

    try:
        contrasts = mixed.over_reliance_contrast(trials, reference=None)
    except ValueError as err:
        return [card("Main contrast: over-reliance (mixed-effects model)", html.P(str(err)), source=mixed.METHOD)]
    if not contrasts:
        return []
    rows = pd.DataFrame([{
        "condition": c.condition, "vs": c.reference, "log-odds": fmt(c.effect),
        "95% interval": f"[{fmt(c.low)}, {fmt(c.high)}]",
        "odds ratio": f"{fmt(c.odds_ratio[0])} [{fmt(c.odds_ratio[1])}, {fmt(c.odds_ratio[2])}]",
        "trials": c.n_trials, "participants": c.n_participants, "items": c.n_items} for c in contrasts])
    return [card("Main contrast: over-reliance (mixed-effects model)", _table(rows), source=mixed.METHOD)]


def _graph(fig) -> dcc.Graph:
    return dcc.Graph(figure=fig, config={"displaylogo": False})


def _trust_questionnaire(study) -> tuple[str, str] | None:
    """(questionnaire id, label) of the trust score for calibration: Jian et al. 2000, else a custom 'trust' form."""
    q = next((q for q in study.questionnaires if q.instrument == "jian2000"), None) or \
        next((q for q in study.questionnaires if "trust" in q.id), None)
    if q is None:
        return None
    return q.id, ("Jian et al. 2000 trust (total)" if q.instrument == "jian2000" else f"{q.id} (mean item score)")


def _reliance_plots(study, trials: pd.DataFrame, answers: pd.DataFrame) -> list:
    """Reliance bars with Wilson intervals, confidence by advice correctness, and the calibration scatter."""
    out = []
    table = analysis.reliance_by_condition(trials)
    dec = analysis.decision_table(trials)
    if not dec.empty:
        out.append(card("Reliance by condition", _graph(figures_study.reliance_bars(table)),
                        source="Shares of two-stage decision trials (own answer, then advice and explanation, then "
                               "final answer; Yin et al. 2019): switch fraction, over-reliance (followed wrong "
                               "advice), under-reliance (rejected right advice), RAIR and RSR (Schemmer et al. "
                               "2023), accuracy; 95% Wilson intervals pooled over a condition's trials."))
        out.append(card("Appropriateness of reliance", _graph(figures_study.appropriateness(table)),
                        source="Schemmer et al. 2023 (IUI): RAIR, of the trials whose first answer was wrong and "
                               "the advice right, the share switched to the advice; RSR, of the trials whose first "
                               "answer was right and the advice wrong, the share kept. Top right is appropriate "
                               "reliance; 95% Wilson intervals."))
        if dec["confidence"].notna().any():
            out.append(card("Trust vs correctness", _graph(figures_study.confidence_by_correctness(dec)),
                            source="Final-answer confidence by whether the model's advice was right (truth from "
                                   "the data); each point is a trial, its hover gives the fidelity of the "
                                   "explanation shown (share of |attribution| kept)."))
    out += _mixed_card(study, trials)
    tq = _trust_questionnaire(study)
    if tq is not None and not answers.empty:
        cal = analysis.calibration(trials, answers, questionnaire_id=tq[0])
        if cal["n"]:
            out.append(card("Trust vs fidelity (calibration)", _graph(figures_study.calibration_scatter(
                cal["points"], cal["r"], (cal["ci_low"], cal["ci_high"]), tq[1])),
                source=f"{tq[1]} against the mean fidelity (share of |attribution| kept) of the explanations each "
                       f"participant saw; Pearson r with its Fisher-z 95% interval, n = {cal['n']} participants."))
    if not dec.empty:
        out += _fidelity_cards(trials, answers, tq)
    return out


def _fidelity_cards(trials: pd.DataFrame, answers: pd.DataFrame, tq) -> list:
    """Trust and reliance by advised condition beside the fidelity shown, and their regressions on it."""
    from study import fidelity_regression as fr

    qid = tq[0] if tq is not None and not answers.empty else None
    means = fr.by_condition(trials, answers, questionnaire_id=qid)
    if means.empty:
        return []
    shown = ["condition", "n_participants", "trust", "rair", "rsr", "over_reliance",
             *[f for f in fr.FIGURES if f in means.columns]]
    means = means[[c for c in shown if c in means.columns]].copy()
    for c in means.columns[2:]:
        means[c] = [fmt(v) for v in means[c]]
    reg = fr.fidelity_regression(trials, answers, questionnaire_id=qid)
    reg = pd.DataFrame({"level": reg["level"], "outcome": reg["outcome"], "fidelity figure": reg["predictor"],
                        "slope [95% CI]": [n or f"{fmt(b)} [{fmt(lo)}, {fmt(hi)}]" for b, lo, hi, n in
                                           zip(reg["slope"], reg["ci_low"], reg["ci_high"], reg["note"])],
                        "p": [fmt(v) for v in reg["p"]], "n": reg["n"], "participants": reg["n_participants"]})
    return [card("Trust and reliance against the fidelity shown", [_table(means), _table(reg)],
                 source="Advised arms only. Means of participants' trust (" + (tq[1] if qid else "no trust "
                        "questionnaire") + "), RAIR, RSR and over-reliance beside the mean of each fidelity figure "
                        "logged with the trials (share of |attribution| shown, ERASER sufficiency and "
                        "comprehensiveness, the local surrogate's R² on the kept features, the agreement with the model of "
                        "the explanation's rule surrogate, missing for attribution explanations, which have none); "
                        "then OLS slopes of each "
                        "on each figure: per participant (classical SE) and per trial (linear probability, SE "
                        "clustered by participant). Persuasive explanations that raise trust but not RAIR and RSR "
                        "show as a trust slope without a reliance slope (study/fidelity_regression.py).")]


def export_zip(study_id: str, fmt_name: str) -> dict:
    """A ``dcc.Download`` payload: a zip of one file per table (see :mod:`study.export`) and ``analysis.py``.

    ``analysis.py`` (:mod:`study.export_analysis`) reruns the reliance analysis on the unzipped
    folder without Candor: exclusions, Wilson intervals and the mixed model of the main contrast.
    """
    writer = export.export_parquet if fmt_name == "parquet" else export.export_csv
    buf = io.BytesIO()
    with tempfile.TemporaryDirectory() as tmp:
        paths = writer(runtime.engine(), tmp, study_id=study_id)
        with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
            for p in paths:
                zf.write(p, arcname=Path(p).name)
            zf.write(export_analysis.__file__, arcname="analysis.py")
    return dcc.send_bytes(buf.getvalue(), f"{study_id}-{fmt_name}.zip")
