"""Checks of :mod:`benchmarks.study_load` read straight from the database: the responses a participant should
have, the counts stored, and every acknowledged response looked up with its answer."""
from __future__ import annotations

from collections import Counter

from benchmarks.study_load_parts.ledger import Submission


def responses_per_participant(study, participant) -> int:
    from study import flow

    n = 0
    for s in flow.steps(study, participant):
        if s.kind == "trial":
            n += len(flow.trial_phases(study))
        elif s.kind == "attention":
            n += 1
        elif s.kind == "questionnaire":
            n += len(next(q for q in study.questionnaires if q.id == s.questionnaire_id).items)
    return n


def expected_rows(study) -> int:
    """Responses per participant for a between-subjects study (the trigger of the kill)."""
    per_trial = (1 if "forward_prediction" in study.tasks else 0) + (2 if "decision_with_advice" in study.tasks else 0)
    questionnaire_items = sum(len(q.items) for q in study.questionnaires)
    return len(study.stimuli) * per_trial + len(study.attention_checks) + questionnaire_items


def database_state(url: str, study) -> dict:
    """Counts read straight from the database (no server)."""
    from sqlalchemy import func, select
    from sqlalchemy.orm import Session

    from study.db import make_engine
    from study.models import Participant, QuestionnaireResponse, TrialLog

    eng = make_engine(url)
    try:
        with eng.connect() as conn:
            trial = conn.scalar(select(func.count()).select_from(TrialLog).where(TrialLog.study_id == study.id))
            quest = conn.scalar(select(func.count()).select_from(QuestionnaireResponse)
                                .where(QuestionnaireResponse.study_id == study.id))
            dup_t = conn.execute(select(TrialLog.participant_id, TrialLog.trial_index, TrialLog.phase)
                                 .group_by(TrialLog.participant_id, TrialLog.trial_index, TrialLog.phase)
                                 .having(func.count() > 1)).all()
        with Session(eng) as s:
            people = s.scalars(select(Participant).where(Participant.study_id == study.id)).all()
            by_arm = Counter((p.stratum, p.condition) for p in people)
            per = {p.resume_token_hash: (p, s.scalar(select(func.count()).select_from(TrialLog)
                                                    .where(TrialLog.participant_id == p.id))
                                         + s.scalar(select(func.count()).select_from(QuestionnaireResponse)
                                                    .where(QuestionnaireResponse.participant_id == p.id)))
                   for p in people}
            s.expunge_all()
    finally:
        eng.dispose()
    return {"stored": trial + quest, "trial_rows": trial, "questionnaire_rows": quest, "duplicates": len(dup_t),
            "participants": len(people), "completed": sum(p.status == "completed" for p in people),
            "by_arm": dict(by_arm), "per_participant": per}


def verify_acked(url: str, study, subs: list[Submission]) -> tuple[int, int, list[str]]:
    """Look up every acknowledged response: ``(rows acknowledged, rows found with the same answer, problems)``."""
    from sqlalchemy import select
    from sqlalchemy.orm import Session

    from study import flow
    from study.db import make_engine
    from study.models import Participant, QuestionnaireResponse, TrialLog
    from study.store import hash_token

    eng = make_engine(url)
    acked = found = 0
    problems = []
    try:
        with Session(eng) as s:
            for sub in subs:
                if not sub.acked or sub.rows == 0:
                    continue
                acked += sub.rows
                p = s.scalar(select(Participant).where(Participant.resume_token_hash == hash_token(sub.token)))
                if p is None:
                    problems.append(f"no participant for an acknowledged token ({sub.kind} step {sub.step})")
                    continue
                step = flow.steps(study, p)[int(sub.step)]
                if sub.kind in ("trial", "attention"):
                    got = s.scalar(select(TrialLog.response).where(
                        TrialLog.participant_id == p.id, TrialLog.trial_index == step.trial_index,
                        TrialLog.phase == sub.phase))
                    want = str(sub.answers.get("response"))
                    if got == want:
                        found += 1
                    else:
                        problems.append(f"{p.id} step {sub.step} {sub.phase}: stored {got!r}, acknowledged {want!r}")
                else:
                    q = QuestionnaireResponse
                    rows = dict(s.execute(select(q.item_label, q.response).where(
                        QuestionnaireResponse.participant_id == p.id,
                        QuestionnaireResponse.block_index == step.block_index,
                        QuestionnaireResponse.questionnaire_id == step.questionnaire_id)).all())
                    for k, v in sub.answers.items():
                        if k.startswith("q:") and rows.get(k[2:]) == v:
                            found += 1
                        elif k.startswith("q:"):
                            problems.append(f"{p.id} {step.questionnaire_id}/{k[2:]}: stored {rows.get(k[2:])!r}, "
                                            f"acknowledged {v!r}")
    finally:
        eng.dispose()
    return acked, found, problems
