"""Command line for study files: ``python -m app study validate FILE``.

``validate`` checks the file's schema, then its stimuli against the data: the
bundled sample model and table, or the model and data the server's own flags name
(``python -m app`` passes them: ``--model --data --target --classes --features-file --store`` ...,
loaded as the server loads them). A declared ``truth`` or ``model_correct`` that differs from
the data is an error; a design that cannot measure over- or under-reliance, or
is unbalanced, is a warning (:mod:`study.truth`). ``power FILE --effect D`` is a
simulation-based power analysis of the over-reliance contrast (:mod:`study.power`);
``prereg FILE`` drafts the preregistration with its planned N (:mod:`study.prereg`).
``simulate`` runs through the server's own code and is wired in ``app/__main__.py``.
"""

from __future__ import annotations

import argparse
import sys

from workspace.errors import CandorError


from ._located import Error
from .schema import load_study, parse_study, read_study_text, stimuli_part, validate_file

__all__ = ["main", "data_report", "data_check"]


def _load_workspace(model: str | None, data: str | None, target: str | None):
    from workspace.workspace import load_sample_workspace, load_user_workspace

    if model:
        return load_user_workspace(model, data, target)
    return load_sample_workspace()


def _plain_flags(p: argparse.ArgumentParser) -> None:
    """``--model --data --target``: the flags when this module runs alone (``python -m app`` passes the server's)."""
    p.add_argument("--model", help="the model the study runs on (default: the bundled sample)")
    p.add_argument("--data", help="its table (with --model)")
    p.add_argument("--target", help="the target column of --data")


def _plain_load(args):
    given = [args.model, args.data, args.target]
    if any(given) and not all(given):
        raise CandorError("--model, --data and --target go together")
    return _load_workspace(args.model, args.data, args.target)


def data_report(path: str, *, model: str | None = None, data: str | None = None,
                target: str | None = None, load=None) -> tuple[list[str], list[str], str]:
    """:func:`data_check` with its errors formatted ``FILE:LINE: PATH: MESSAGE``."""
    errors, warnings, summary = data_check(path, model=model, data=data, target=target, load=load)
    return [e.format(path) for e in errors], warnings, summary


def data_check(path: str, *, model: str | None = None, data: str | None = None,
               target: str | None = None, load=None) -> tuple[list[Error], list[str], str]:
    """Check a schema-valid study file against the data.

    Parameters
    ----------
    path : str
        The study file.
    model, data, target : str or None
        The user's model, table and target column; None for the bundled sample.
    load : callable or None
        Returns the workspace to check against, called only if the data are checked; given, it
        replaces ``model``/``data``/``target`` (``python -m app study`` passes the server's loader).

    Returns
    -------
    errors : list of Error
        Each with its line: declared truth or model_correct that differ from the data,
        every row outside the table, outputs that are not the classes. The file may
        have schema errors elsewhere (its id, model and stimuli are still checked).
    warnings : list of str
        ``FILE: warning: ...`` lines (:func:`study.truth.design_warnings`).
    summary : str
        ``model wrong on K of N stimuli (P%)``, or why the data were not checked.
    """
    from . import truth

    schema_errors = validate_file(path)
    try:
        text = read_study_text(path)
    except CandorError:
        return [], [], "not checked against the data: the file cannot be read"
    study = stimuli_part(text, schema_errors) if schema_errors else parse_study(text, path)
    if study is None:
        return [], [], "not checked against the data: fix the errors in id, model or stimuli first"
    if all(s.row is None for s in study.stimuli):
        return [], [], "text stimuli: not checked against data (no text-model service for studies)"
    try:
        ws = load() if load is not None else _load_workspace(model, data, target)
        problems, facts = truth.check_against(study, ws)
    except (CandorError, ValueError) as err:
        return [Error(1, "", str(err))], [], ""
    from .instruments import wording_warnings

    warnings = [] if schema_errors else [f"{path}: warning: {w}" for w in truth.design_warnings(study, facts)
                                         + wording_warnings(study.questionnaires)]
    return problems, warnings, f"{truth.summary_line(facts)} on {ws.name}" if facts else ""


def main(argv: list[str] | None = None, *, add_flags=None, load=None) -> int:
    """Run the ``study`` sub-command.

    Parameters
    ----------
    argv : list of str or None, default=None
        Arguments after ``study`` (``["validate", "FILE"]``); ``sys.argv[1:]`` when None.
    add_flags : callable or None
        Adds the flags that name the model and data to a sub-command's parser; ``python -m app`` passes the
        server's (:func:`app.cli.model_flags.add_serving_arguments`: ``--model --data --target --classes
        --features-file --store`` ...). None: ``--model --data --target``.
    load : callable or None
        Parsed arguments -> the workspace those flags name, as the server loads it
        (:func:`app.cli.model_flags.load_workspace`); raises CandorError. None: the plain loader.

    Returns
    -------
    int
        0 when the file is valid (warnings are printed but do not fail), 2 when it
        has errors (one line per error on stdout, formatted ``FILE:LINE: PATH:
        MESSAGE``) or the arguments are wrong.
    """
    add_flags, load = add_flags or _plain_flags, load or _plain_load
    parser = argparse.ArgumentParser(prog="python -m app study", description="Study-mode tools.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="{validate,power,prereg,simulate}")
    val = sub.add_parser("validate", help="check a study YAML file against its schema and the data; name every "
                                          "error with its line")
    val.add_argument("file")
    add_flags(val)
    val.add_argument("--schema-only", action="store_true", help="check the file only, not against the data")
    pw = sub.add_parser("power", help="simulation-based power of the over-reliance contrast (second condition vs "
                                      "first) for this design")
    pw.add_argument("file")
    _power_arguments(pw)
    add_flags(pw)
    pr = sub.add_parser("prereg", help="a preregistration draft in the OSF Prereg template's sections (hypotheses, "
                                       "design, planned N with its simulated power, exclusions, measures, analysis)")
    pr.add_argument("file")
    _power_arguments(pr, effect=0.2, sizes="10,20,30,40,60,80")
    pr.add_argument("--power", type=float, default=0.8, help="power the planned N must reach (default 0.8)")
    pr.add_argument("--out", help="write the Markdown here (default: standard output)")
    add_flags(pr)
    sub.add_parser("simulate", add_help=False,
                   help="simulated participants through the server's own participant flow, then the reliance "
                        "analysis: simulate [FILE] --participants N --seed S [--database URL] and the model flags "
                        "(see python -m app study simulate --help)")
    try:
        args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    except SystemExit as exc:  # argparse exits 2 on usage errors
        return int(exc.code or 0)
    if args.command == "simulate":  # python -m app dispatches it to app/cli/study_simulate.py
        print("candor: error: run it as python -m app study simulate")
        return 2
    workspace = _once(lambda: load(args))
    if args.command in ("power", "prereg"):
        return (_power if args.command == "power" else _prereg)(args, workspace)
    schema = validate_file(args.file)
    errors = [e.format(args.file) for e in schema]
    warnings, summary = [], ""
    if args.schema_only:
        pass
    elif not any(e.line == 0 for e in schema):  # line 0: the file cannot be read
        found, warnings, summary = data_check(args.file, load=workspace)
        errors = [e.format(args.file) for e in sorted(schema + found)]  # both checks in one run, in line order
    for line in errors + warnings:
        print(line)
    if not errors:
        print(f"{args.file}: valid" + (f" ({summary})" if summary else ""))
    return 2 if errors else 0


def _once(make):
    """``make`` called at most once (the workspace is loaded when the data are first needed)."""
    kept = []

    def get():
        if not kept:
            kept.append(make())
        return kept[0]
    return get


def _power_arguments(pw: argparse.ArgumentParser, effect: float | None = None, sizes: str = "10,20,40,80") -> None:
    pw.add_argument("--effect", type=float, required=effect is None, default=effect,
                    help="difference in over-reliance to detect, second condition minus first (e.g. 0.15)"
                         + (f"; default {effect:g}" if effect is not None else ""))
    pw.add_argument("--participants", default=sizes, help="participants per arm, comma-separated")
    pw.add_argument("--simulations", type=int, default=1000)
    pw.add_argument("--seed", type=int, default=0)
    pw.add_argument("--alpha", type=float, default=0.05)


def _simulated_power(args, workspace):
    """The power simulation of ``study power`` and ``prereg``; None after printing why it cannot run.

    Returns ``(study, summary, arms, model, (q1, q2, w1, w2), points, model_wrong)``.
    """
    from . import truth
    from .power import baseline, power_curve
    from .simulate import RelianceModel

    errors = [e.format(args.file) for e in validate_file(args.file)]
    if not errors:
        errors, _warnings, summary = data_report(args.file, load=workspace)
    if errors:
        for line in errors:
            print(line)
        return None
    try:
        sizes = [int(x) for x in args.participants.split(",") if x.strip()]
        if not 1 <= args.simulations <= 1_000_000 or not 0 < args.alpha < 1:
            raise ValueError(f"expected --simulations in 1..1000000 and --alpha in (0, 1), got {args.simulations}, "
                             f"{args.alpha}")
        study = load_study(args.file)
        facts = truth.facts_from_workspace(study, workspace())
        arms = [c for c in study.conditions if c.explanation != "none"][:2]  # over-reliance needs advice
        if len(arms) < 2:
            raise ValueError("power compares over-reliance between two arms that show advice; the study has "
                             f"{len(arms)}")
        kinds = (arms[0].explanation, arms[1].explanation)
        model = RelianceModel()
        base = baseline(model, kinds, args.effect)
        wrong = [not facts[s.id].model_correct for s in study.stimuli if s.id in facts]
        points = power_curve(wrong, args.effect, sizes, simulations=args.simulations, seed=args.seed,
                             alpha=args.alpha, kinds=kinds, model=model)
    except (ValueError, CandorError) as err:
        print(f"candor: error: {err}")
        return None
    return study, summary, arms, model, base, points, sum(wrong)


def _power(args, workspace) -> int:
    """``study power``: print a table of power by participants per arm, then one JSON line."""
    import json

    from .power import TEST

    run = _simulated_power(args, workspace)
    if run is None:
        return 2
    _study, summary, arms, model, (q1, q2, w1, w2), points, _wrong = run
    c0, c1 = arms[0].id, arms[1].id
    print(f"{args.file}: {summary}; over-reliance {c1} - {c0} = {args.effect:+g}")
    print(f"baseline (simulated participants, study/simulate.py): {c0} over-reliance {q1:.3f} (first-answer accuracy "
          f"{model.accuracy:g} ± {model.accuracy_sd:g}, switch to wrong advice {w1:.3f}), {c1} {q2:.3f} (switch "
          f"{w2:.3f}); person spread {model.shift_sd:g} on the logit scale")
    print(f"test: {TEST}, alpha {args.alpha:g}; {args.simulations} simulated studies per size, seed {args.seed}")
    print(f"{'per arm':>8}  {'power':>6}  95% Wilson")
    for p in points:
        print(f"{p.n_per_arm:>8}  {p.power:>6.3f}  [{p.low:.3f}, {p.high:.3f}]")
    print(json.dumps({str(p.n_per_arm): [round(p.power, 4), round(p.low, 4), round(p.high, 4)] for p in points}))
    return 0


def _prereg(args, workspace) -> int:
    """``study prereg``: the preregistration (:mod:`study.prereg`) to ``--out`` or stdout."""
    import hashlib
    from pathlib import Path

    from .power import TEST
    from .prereg import PowerPlan, document

    run = _simulated_power(args, workspace)
    if run is None:
        return 2
    study, summary, arms, _model, (q1, q2, _w1, _w2), points, wrong = run
    plan = PowerPlan(args.effect, args.alpha, args.simulations, args.seed, (arms[0].id, arms[1].id), (q1, q2),
                     tuple(points), TEST, target=args.power)
    sha = hashlib.sha256(study.source_text.encode()).hexdigest()  # the hash the server records at go-live
    text = document(study, sha, wrong, plan, summary.rsplit(" on ", 1)[-1] if " on " in summary else "the data")
    if args.out:
        Path(args.out).write_text(text, encoding="utf-8")
        print(f"{args.out}: preregistration of {args.file} (sha256 {sha[:12]}), planned "
              + (f"{plan.planned.n_per_arm} per condition" if plan.planned else "N not reached"), file=sys.stderr)
    else:
        print(text)
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
