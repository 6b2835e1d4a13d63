"""What ``create_app`` checks of the study files before serving, without the study database (issue 23).

Kept apart from :mod:`app.services.study_stimuli` (the pinned stimuli: SQLAlchemy, Alembic), so that
a launch that never runs a study imports neither: :func:`check_study_files` reads only the study files and the
workspace.
"""
from __future__ import annotations

from pathlib import Path

from app import services
from study import runtime
from study import truth as study_truth
from study.schema import Study, StudyError
from workspace.errors import CandorError


def check_truth(study: Study, ws=None) -> dict[str, study_truth.Facts]:
    """The data's truth and model label of every stimulus; refuse a file that declares otherwise.

    Raises
    ------
    CandorError
        If the study's outputs are not the model's classes, a row is outside the table, or a declared
        ``truth``/``model_correct`` differs from the data (every such stimulus is named with the declared
        and the actual value, :func:`study.truth.check`).
    """
    ws = ws or services.workspace()
    try:
        facts = study_truth.facts_from_workspace(study, ws)
    except ValueError as err:
        raise CandorError(str(err)) from None
    errors = study_truth.check(study, facts)
    if errors:
        raise CandorError(f"study {study.id!r} declares values that differ from the data: "
                          + "; ".join(e.format(f"{study.id}.yaml") for e in errors))
    return facts


def check_study_files(ws=None) -> None:
    """At server start: refuse to serve when a live study's file changed (:func:`study.runtime.changed_live_studies`),
    or a study file for this model declares a truth the data contradict.

    Only schema-valid files whose outputs are this model's classes are checked for truth (a folder may hold
    studies of other models; they are refused when served). Reads a study database only if one exists.

    Raises
    ------
    CandorError
        Naming every changed live study, or every conflicting stimulus of every such file.
    """
    from study.schema import load_study

    changed = runtime.changed_live_studies()  # a live study's file changed: refused, whatever its model
    if changed:
        raise CandorError(" | ".join(changed))
    ws = ws or services.workspace()
    if len(ws.classes) != 2:
        return
    problems = []
    for sid in runtime.list_studies():
        try:
            study = load_study(runtime.study_path(sid))
        except (StudyError, OSError, UnicodeDecodeError):
            continue  # listed with its errors on the researcher page; participants are told it is unavailable
        if tuple(study.model.outputs) != tuple(str(c) for c in ws.classes) or study.model.kind != "tabular":
            continue
        if runtime.is_example(sid) and Path(str(ws.metadata.get("model_file", ""))).stem != study.model.id:
            continue  # a bundled example is written for the bundled sample; a user's binary model is not it
        try:
            check_truth(study, ws)
        except CandorError as err:
            problems.append(str(err))
    if problems:
        raise CandorError(" | ".join(problems) + " (python -m app study validate FILE lists each with its line)")
