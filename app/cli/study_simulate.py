"""``python -m app study simulate [FILE] --participants N --seed S``: simulated participants through the real flow.

Each simulated participant consents, reads the instructions, answers every trial in its stages
(own decision, then the model's advice with the condition's explanation, then the final decision
and confidence), the attention checks and the questionnaires, through
:func:`app.services.study_participant.submit_answer`, the function the participant page's submit
callback calls, on the app :func:`app.serve.server.create_app` builds, and into a study database
migrated as the server migrates it. The advice a participant reacts to is the pinned view the page
shows (:func:`~app.services.study_stimuli.stimulus_view`). Decisions come from
:class:`study.simulate.RelianceModel`, whose switching differs by condition.

The study's pre-declared exclusion rule (``exclusions.max_failed_attention_checks``) is applied
before the analysis. It prints the reliance measures by condition (Wilson intervals over trials,
:func:`study.analysis.reliance_by_condition`) as a table, then one JSON line
``{condition: {"switch_fraction": [estimate, low, high], "over_reliance": [...],
"under_reliance": [...], "rair": [...], "rsr": [...], "accuracy": [...]}}`` (RAIR and RSR: Schemmer
et al. 2023; NaN, printed as null, where undefined, e.g. in a no-advice arm). With no FILE it runs the bundled example,
``study/examples/reliance-breast-cancer.yaml``.
"""
from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

import study as study_pkg
from study import analysis, export, flow, runtime, store
from study.db import resolve_url
from study.cli import data_report
from study.schema import StudyError, load_study
from study.simulate import RelianceModel
from workspace import settings as _settings
from workspace.errors import CandorError
from workspace.settings import Settings, redact_url

from .model_flags import add_serving_arguments, load_workspace, model_args_error

BUNDLED_EXAMPLE = Path(study_pkg.__file__).resolve().parent / "examples" / "reliance-breast-cancer.yaml"
HEADLINE = ("switch_fraction", "over_reliance", "under_reliance", "rair", "rsr", "accuracy")


def _timing(step, phase, rng) -> dict:
    return {"step": step, "phase": phase, "rt_ms": round(rng.uniform(800.0, 6000.0), 1),
            "client_ts": time.time() * 1000, "nonce": rng.random()}


def _answer(study_id: str, token: str | None, timing: dict, answers: dict) -> str | None:
    from app.services.study_participant import submit_answer

    new_token, error = submit_answer(study_id, token, timing, answers, client="127.0.0.1")
    if error:
        raise RuntimeError(f"the server refused a simulated answer at step {timing['step']} "
                           f"({timing['phase']}): {error}")
    return new_token


def run_one(study, index: int, seed: int, model: RelianceModel) -> str:
    """Take one simulated participant through the whole flow; return its resume token.

    Raises
    ------
    RuntimeError
        If the server refuses an answer (the simulation never skips a step).
    """
    from app.services.study_stimuli import stimulus_view

    who = model.person(seed * 1_000_003 + index)
    rng = who.rng
    consent = {"consent": ["yes"]}
    if study.randomisation.stratify_by:
        consent["stratum"] = rng.choice(study.randomisation.strata)
    token = _answer(study.id, None, _timing("consent", None, rng), consent)
    eng = runtime.engine()
    first: dict[int, str] = {}
    for _ in range(10_000):
        p = store.participant_by_token(eng, study.id, token)
        i, step, phase = flow.current(eng, study, p)
        if step.kind == "done":
            return token
        answers: dict = {}
        if step.kind == "trial":
            item = store.trial_plan(p)[step.trial_index][2]
            cond = study.condition(p.condition_order[step.block_index])
            ctx = stimulus_view(study, item, cond.id).context  # what the page shows (advice) and logs
            advice, truth = ctx.model_prediction, ctx.truth
            if study.model.numeric:
                lo, hi = study.model.range
                if phase == "initial" or advice is None:
                    answers["response"] = model.estimate(who, float(truth), lo, hi)
                    first[step.trial_index] = answers["response"]
                else:
                    initial = first.get(step.trial_index)
                    initial = float(_logged_initial(eng, p.id, step.trial_index)) if initial is None else initial
                    answers["response"] = model.revise(who, initial, float(advice), cond.explanation, lo, hi)
                if phase == "final":
                    c_lo, c_hi = study.confidence_scale
                    answers["confidence"] = round(c_lo + (c_hi - c_lo) * who.rng.random(), 1)
            elif phase == "forward":
                answers["response"] = advice if rng.random() < 0.8 else rng.choice(study.model.outputs)
            elif phase == "initial":
                answers["response"] = first[step.trial_index] = model.initial(who, truth, study.model.outputs)
            elif advice is None:  # no-advice arm: one unaided decision
                final = model.initial(who, truth, study.model.outputs)
                lo, hi = study.confidence_scale
                answers = {"response": final, "confidence": model.confidence(who, final, final, None, lo, hi)}
            else:
                initial = first.get(step.trial_index) or _logged_initial(eng, p.id, step.trial_index)
                final = model.final(who, initial, advice, truth, cond.explanation)
                lo, hi = study.confidence_scale
                answers = {"response": final, "confidence": model.confidence(who, initial, final, advice, lo, hi)}
        elif step.kind == "attention":
            check = next(a for a in study.attention_checks if a.after_trial == step.trial_index + 1)
            answers["response"] = check.correct if rng.random() < model.attention_pass else \
                rng.choice([o for o in check.options if o != check.correct])
            phase = "attention"
        elif step.kind == "questionnaire":
            q = next(x for x in study.questionnaires if x.id == step.questionnaire_id)
            kind = study.condition(p.condition_order[step.block_index]).explanation
            answers = {f"q:{it.label}": model.likert(who, kind, q.scale_points, it.reverse) for it in q.items}
            phase = "questionnaire"
        else:
            phase = "instructions"
        token = _answer(study.id, token, _timing(i, phase, rng), answers) or token
    raise RuntimeError("a simulated participant did not finish in 10,000 steps")


def _logged_initial(eng, participant_id: str, trial_index: int) -> str:
    from sqlalchemy import select

    from study.models import TrialLog

    with eng.connect() as conn:
        return conn.scalar(select(TrialLog.response).where(TrialLog.participant_id == participant_id,
                                                           TrialLog.trial_index == trial_index,
                                                           TrialLog.phase == "initial"))


def simulate(path: str | Path, participants: int, seed: int, *, database: str | None = None,
             model: RelianceModel | None = None, args=None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Run ``participants`` simulated participants through the study at ``path``; return the reliance table.

    Parameters
    ----------
    path : str or Path
        A study file valid against its schema and the bundled sample's data.
    participants : int
        Number of participants (>= 1).
    seed : int
        Seeds every simulated participant.
    database : str or None, default=None
        SQLAlchemy URL to store into; None: a temporary SQLite file, deleted afterwards.
    model : RelianceModel or None
        The simulated decision-maker (default parameters when None).
    args : argparse.Namespace or None
        The server's model flags (:func:`app.cli.model_flags.add_serving_arguments`): the app is built over the
        model and data they name, as the server's; None: the bundled sample.

    Returns
    -------
    table : DataFrame
        :func:`study.analysis.reliance_by_condition` of the stored trial log (after exclusions).
    trials : DataFrame
        That trial log.

    Raises
    ------
    CandorError
        If the file is invalid or contradicts the data (every error listed), or the server refuses an answer.
    """
    from app.serve.server import create_app

    study = load_study(path)
    previous = _settings.current() if _settings._installed is not None else None
    with tempfile.TemporaryDirectory(prefix="candor-simulate-") as tmp:
        studies = Path(tmp) / "studies"
        studies.mkdir()
        shutil.copy(path, studies / f"{study.id}.yaml")
        env = {"CANDOR_STUDY_DIR": str(studies), "DATABASE_URL": database or f"sqlite:///{Path(tmp) / 'sim.sqlite3'}",
               "CANDOR_ENROL_PER_MINUTE": "1000000", "CANDOR_ENROL_STUDY_PER_MINUTE": "1000000"}
        runtime.reset()
        try:
            create_app(warm=False, settings=Settings.from_args(args, env) if args is not None else
                       Settings.from_env(env))
            served = runtime.get_study(study.id)
            if database:  # a database of the server's: never mix simulated participants with real ones
                held = len(export.table_rows(runtime.engine(), "participants", study.id))
                if held:
                    raise CandorError(f"{redact_url(database)} already holds {held} participants of study "
                                      f"{study.id!r}; simulated participants would mix with them: pass --database "
                                      "URL of an empty database (or none: a temporary SQLite file)")
            m = model or RelianceModel()
            for i in range(participants):
                run_one(served, i, seed, m)
            trials = pd.DataFrame(export.table_rows(runtime.engine(), "trial_log", study.id))
            trials, _, excluded = analysis.apply_exclusions(trials, pd.DataFrame(), study.max_failed_attention_checks)
            if not excluded.empty:
                print(f"excluded {len(excluded)} of {participants} participants by the study's pre-declared rule "
                      f"(more than {study.max_failed_attention_checks} failed attention checks)", file=sys.stderr)
        except RuntimeError as err:
            raise CandorError(str(err)) from None
        finally:
            runtime.reset()
            _settings.install(previous)
    return analysis.reliance_by_condition(trials), trials


def mixed_lines(trials: pd.DataFrame) -> list[str]:
    """The main contrast from :func:`study.mixed.over_reliance_contrast`, one line per condition."""
    from study import mixed

    try:
        contrasts = mixed.over_reliance_contrast(trials)
    except ValueError as err:
        return [f"mixed model: {err}"]
    return [f"mixed model, over-reliance {c.condition} vs {c.reference}: odds ratio {c.odds_ratio[0]:.2f} "
            f"[{c.odds_ratio[1]:.2f}, {c.odds_ratio[2]:.2f}] (log-odds {c.effect:+.3f} ± {c.sd:.3f}; "
            f"{c.n_trials} trials, {c.n_participants} participants, {c.n_items} items)" for c in contrasts]


def headline(table: pd.DataFrame) -> dict:
    """``{condition: {measure: [estimate, low, high]}}`` for :data:`HEADLINE` measures, 4 decimals
    (None where a measure is undefined, e.g. reliance in a no-advice arm: JSON has no NaN)."""
    out: dict = {}
    for row in table.itertuples(index=False):
        if row.measure in HEADLINE:
            out.setdefault(row.condition, {})[row.measure] = [round(float(v), 4) if v == v else None for v in
                                                              (row.mean, row.ci_low, row.ci_high)]
    return out


def format_table(table: pd.DataFrame) -> str:
    """The reliance table as aligned text: condition, measure, estimate [95% Wilson], trials, participants."""
    lines = [f"{'condition':<14}{'measure':<22}{'estimate':>9}  {'95% Wilson':<18}{'trials':>7}{'people':>8}"]
    for r in table.itertuples(index=False):
        lines.append(f"{r.condition:<14}{r.measure:<22}{r.mean:>9.3f}  [{r.ci_low:.3f}, {r.ci_high:.3f}]    "
                     f"{r.n:>7}{r.n_participants:>8}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """``python -m app study simulate [FILE] --participants N --seed S [--database URL]``; 0, or 2 on a bad input."""
    parser = argparse.ArgumentParser(prog="python -m app study simulate",
                                     description="Simulated participants through the real participant flow.")
    parser.add_argument("file", nargs="?", help=f"study file (default: the bundled example, {BUNDLED_EXAMPLE.name})")
    parser.add_argument("--participants", type=int, default=60)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--database", help="SQLAlchemy URL to keep the responses in (default: the server's, "
                                           "DATABASE_URL; without it a temporary SQLite file, deleted afterwards)")
    add_serving_arguments(parser)
    parser.set_defaults(text_model=None)
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return int(exc.code or 0)
    if not 1 <= args.participants <= 100_000:
        print(f"candor: error: --participants must be 1..100000, got {args.participants}")
        return 2
    problem = model_args_error(args)
    if problem:
        print(f"candor: error: {problem}")
        return 2
    path = args.file or str(BUNDLED_EXAMPLE)
    database = args.database or Settings.from_env().database_url  # the server's setting, as the server reads it
    try:
        errors, warnings, summary = data_report(path, load=lambda: load_workspace(args))
    except (StudyError, OSError, UnicodeDecodeError, CandorError) as err:
        print(f"candor: error: {err}")
        return 2
    for line in errors + warnings:
        print(line)
    if errors:
        return 2
    print(f"{path}: {summary}; {args.participants} simulated participants, seed {args.seed}", file=sys.stderr)
    try:
        table, trials = simulate(path, args.participants, args.seed, database=database, args=args)
    except CandorError as err:
        print(f"candor: error: {err}")
        return 2
    print(f"responses stored in {redact_url(resolve_url(database))}" if database else
          "responses stored in a temporary SQLite file, deleted afterwards (--database URL or DATABASE_URL keeps "
          "them)", file=sys.stderr)
    print(format_table(table))
    for line in mixed_lines(trials):
        print(line)
    print(json.dumps(headline(table)))
    return 0
