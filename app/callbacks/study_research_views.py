"""Researcher dashboard content: enrolment, completion, results with CIs, calibration, exports."""
from __future__ import annotations

import io
import tempfile
import zipfile
from pathlib import Path

import dash_bootstrap_components as dbc
import pandas as pd
from dash import dcc, html

from app.components import card, fmt
from study import analysis, export, runtime
from study.schema import StudyError

from .study_service import pin_status

MEASURES = {
    "agreement": "Agreement (final = model)", "switch_fraction": "Switch fraction (to the model's advice)",
    "over_reliance": "Over-reliance (followed wrong advice)", "under_reliance": "Under-reliance (rejected right advice)",
    "appropriate_reliance": "Appropriate reliance", "initial_accuracy": "Accuracy before advice",
    "accuracy": "Accuracy after advice", "forward_accuracy": "Forward prediction", "confidence": "Confidence (final)",
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
    people = pd.DataFrame(export.table_rows(eng, "participants", study_id))
    trials = pd.DataFrame(export.table_rows(eng, "trial_log", study_id))
    answers = pd.DataFrame(export.table_rows(eng, "questionnaire_responses", study_id))
    if people.empty:
        return html.Div(pinned + [html.P("No participants yet.")])
    enrol = (people.groupby(["condition", "stratum", "status"]).size().unstack("status", fill_value=0).reset_index())
    parts = pinned + [card("Enrolment and completion", _table(enrol),
                  source="Counts from the participants table; allocation by seeded permuted blocks, stratified when the study says so.")]
    if not trials.empty and not answers.empty:
        s = analysis.summary_by_condition(trials, answers)
        s["measure"] = s["measure"].map(lambda m: MEASURES.get(m, m))
        s["95% CI"] = [f"[{fmt(lo)}, {fmt(hi)}]" for lo, hi in zip(s["ci_low"], s["ci_high"])]
        s["mean"] = s["mean"].map(fmt)
        s = s.rename(columns={"mean": "estimate", "n": "n (trials or participants)", "n_participants": "participants"})
        parts.append(card("Results by condition", _table(s[["condition", "measure", "estimate", "95% CI",
                                                              "n (trials or participants)", "participants"]]),
                          source=f"{analysis.CI_METHOD}. Reliance as in Yin et al. 2019 and Bansal et al. 2021; "
                                 "trust: Jian et al. 2000; satisfaction: Hoffman et al. 2018."))
        if any(q.instrument == "jian2000" for q in study.questionnaires):
            qid = next(q.id for q in study.questionnaires if q.instrument == "jian2000")
            cal = analysis.calibration(trials, answers, questionnaire_id=qid)
            parts.append(card("Trust vs fidelity (calibration)", html.P(
                f"Pearson r = {fmt(cal['r'])} [{fmt(cal['ci_low'])}, {fmt(cal['ci_high'])}], n = {cal['n']}"),
                source="Jian et al. 2000 total trust score against the mean fidelity (share of |attribution| kept) "
                       "of the explanations each participant saw; Fisher-z 95% interval."))
    return html.Div(parts)


def export_zip(study_id: str, fmt_name: str) -> dict:
    """A ``dcc.Download`` payload: a zip of one file per table (see :mod:`study.export`)."""
    writer = export.export_parquet if fmt_name == "parquet" else export.export_csv
    buf = io.BytesIO()
    with tempfile.TemporaryDirectory() as tmp:
        paths = writer(runtime.engine(), tmp, study_id=study_id)
        with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
            for p in paths:
                zf.write(p, arcname=Path(p).name)
    return dcc.send_bytes(buf.getvalue(), f"{study_id}-{fmt_name}.zip")
