"""Command line for study files: ``python -m app study validate FILE``.

Wire it from ``app/__main__.py`` with::

    if sys.argv[1:2] == ["study"]:
        from study.cli import main
        raise SystemExit(main(sys.argv[2:]))
"""

from __future__ import annotations

import argparse
import sys

from .schema import validate_file

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    """Run the ``study`` sub-command.

    Parameters
    ----------
    argv : list of str or None, default=None
        Arguments after ``study`` (``["validate", "FILE"]``); ``sys.argv[1:]`` when None.

    Returns
    -------
    int
        0 when the file is valid, 2 when it has errors (one line per error on
        stdout, formatted ``FILE:LINE: PATH: MESSAGE``) or the arguments are wrong.
    """
    parser = argparse.ArgumentParser(prog="python -m app study", description="Study-mode tools.")
    sub = parser.add_subparsers(dest="command", required=True)
    val = sub.add_parser("validate", help="check a study YAML file and name every error with its line")
    val.add_argument("file")
    try:
        args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    except SystemExit as exc:  # argparse exits 2 on usage errors
        return int(exc.code or 0)
    errors = validate_file(args.file)
    for e in errors:
        print(e.format(args.file))
    if not errors:
        print(f"{args.file}: valid")
    return 2 if errors else 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
