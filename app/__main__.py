"""Command line: ``python -m app`` serves the bundled sample; ``--model/--data/--target`` serve yours;
``python -m app build --model M --data D --target T --out STORE`` computes the explanations once into a
store that ``python -m app --store STORE`` serves (:mod:`app.cli.build`); ``python -m app study validate FILE``
checks a study file; ``python -m app users add NAME --role ROLE`` and
``python -m app users revoke|unlock NAME`` manage logins (:mod:`accounts`); ``python -m app check --model M --data D
--target T`` loads your pair and explains one row without serving; ``python -m app report --out FILE``
writes a self-contained review report (:mod:`app.report.cli`).

Every input problem prints one line, ``candor: error: ...``, and exits with
status 2; no traceback.
"""
from __future__ import annotations

import argparse
import dataclasses
import sys

from workspace.errors import CandorError, command_line
from workspace.settings import Settings
from .cli.model_flags import add_serving_arguments, model_args_error


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m app", description="Serve the Candor dashboard.")
    add_serving_arguments(p)
    p.add_argument("--text-model", help="a Hugging Face *ForSequenceClassification folder (save_pretrained, with "
                                        "its tokenizer) for the Text page, instead of the bundled MiniLM")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=_port, default=8050)
    return p


def _port(text: str) -> int:
    """A TCP port number from 1 to 65535 (argparse turns the ValueError into a one-line error, exit 2)."""
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a port number: {text!r}") from None
    if not 1 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"port must be from 1 to 65535, got {port}")
    return port


def _check_port_free(host: str, port: int) -> None:
    """Raise :class:`CandorError` if ``host:port`` cannot be bound (in use, or not an address here)."""
    import socket

    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError as exc:
            raise CandorError(f"cannot serve on {host}:{port} ({exc.strerror or exc}); check --host, or pass "
                              "another --port, or stop what is using it") from None


def main(argv: list[str] | None = None) -> int:
    """Run the command ``argv`` names; every error ends in one line on stderr, never a traceback.

    Input problems are :class:`CandorError` s, reported by each command (exit 2). Anything else is an error
    Candor did not foresee (a bug, or an input no check knows yet): one line naming its type, its first line
    and where it was raised, exit 1 (found by an attack, issue 27: ``check --text-column`` on a tabular model
    printed a 40-line traceback with the column's values).
    """
    try:
        return _main(sys.argv[1:] if argv is None else argv)
    except Exception as err:  # noqa: BLE001  (the command line's one place for an error nobody foresaw)
        line, status = command_line(err)
        print(f"candor: error: {line}", file=sys.stderr)
        return status


def _main(argv: list[str]) -> int:
    if argv[:1] == ["build"]:
        from .cli.build import main as build_main

        return build_main(argv[1:])
    if argv[:1] == ["check"]:
        from .cli.check import main as check_main

        return check_main(argv[1:])
    if argv[:1] == ["report"]:
        from .report.cli import main as report_main

        return report_main(argv[1:])
    if argv[:2] == ["study", "simulate"]:  # through the server's own participant flow, so it lives in app/
        from .cli.study_simulate import main as simulate_main

        return simulate_main(argv[2:])
    if argv[:1] == ["study"]:
        from study.cli import main as study_main

        from .cli.model_flags import load_workspace

        # validate, power: the model and data flags of the server, loaded as the server loads them
        return study_main(argv[1:], add_flags=add_serving_arguments, load=load_workspace)
    if argv[:1] == ["users"]:
        from accounts.cli import main as users_main

        return users_main(argv[1:])
    from .serve.deferred_load import hold_collector

    hold_collector()  # the start allocates for good: no collector walks until the model has loaded (deferred_load)
    parser = _parser()
    args = parser.parse_args(argv)
    problem = model_args_error(args)
    if problem:
        parser.exit(2, f"candor: error: {problem}\n")
    try:  # the flags over the environment, read and checked once, handed to the server (not via os.environ)
        settings = Settings.from_args(args)
    except CandorError as err:
        parser.exit(2, f"candor: error: {err}\n")
    if settings.model and settings.trust_pickle:
        print("candor: warning: --trust-model-code (--trust-pickle) lets the model file run code (pickle, "
              "TorchScript, any skops type)", file=sys.stderr)
    from accounts.binding import check_bind
    from accounts.users import AccountsError

    try:  # beyond this machine only with a login; the Host header must then name this server
        settings = dataclasses.replace(settings, bind_hosts=tuple(check_bind([args.host])))
    except AccountsError as err:
        parser.exit(2, f"candor: error: {err}\n")
    try:
        _check_port_free(args.host, args.port)
        from .serve.server import create_app

        # the model loads while the HTML and scripts are served (app.serve.deferred_load); then the address
        app = create_app(settings=settings, defer_load=lambda: print(
            f"Candor is serving on http://{args.host}:{args.port}", file=sys.stderr, flush=True))
    except CandorError as err:
        print(f"candor: error: {err}", file=sys.stderr)
        return 2
    from .serve.waitress import serve

    serve(app.server, args.host, args.port, settings.threads)
    return 0


if __name__ == "__main__":
    sys.exit(main())
