"""``python -m app users add NAME --role ROLE``, ``python -m app users revoke NAME`` and ``... unlock NAME``."""
from __future__ import annotations

import argparse
import getpass
import sys

from . import login_limits, sessions
from .roles import ROLES
from .users import AccountsError, add_user, check_name
from workspace.settings import current


def _read_password() -> str:
    """The new password: asked twice on a terminal, else the first line of stdin."""
    if sys.stdin.isatty():
        first = getpass.getpass("Password: ")
        if first != getpass.getpass("Password again: "):
            raise AccountsError("the two passwords differ")
        return first
    return sys.stdin.readline().rstrip("\r\n")


def main(argv: list[str]) -> int:
    """Run the ``users`` sub-command; returns the exit status (2 with ``candor: error: ...`` on bad input)."""
    parser = argparse.ArgumentParser(prog="python -m app users", description="Manage Candor logins.")
    sub = parser.add_subparsers(dest="command", required=True)
    add = sub.add_parser("add", help="add a user (or set a user's role and password) in the users file; "
                                     "the password is read from the terminal or from stdin")
    add.add_argument("name")
    add.add_argument("--role", required=True, choices=ROLES)
    add.add_argument("--file", default=current().users_file,
                     help="users file (default: CANDOR_USERS_FILE)")
    rev = sub.add_parser("revoke", help="end every session of a user now (CANDOR_SESSION_DB)")
    rev.add_argument("name")
    unl = sub.add_parser("unlock", help="end the lock of an account after failed logins from many addresses and "
                                        "forget its failed logins (CANDOR_SESSION_DB)")
    unl.add_argument("name")
    args = parser.parse_args(argv)
    try:
        if args.command == "add":
            if not args.file:
                raise AccountsError("no users file: pass --file or set CANDOR_USERS_FILE")
            check_name(args.name)
            new = add_user(args.file, args.name, args.role, _read_password())
            print(f"{'added' if new else 'updated'} {args.name} ({args.role}) in {args.file}")
        elif args.command == "unlock":
            n = login_limits.unlock(check_name(args.name))
            print(f"unlocked {args.name}; forgot {n} failed login(s)")
        else:
            n = sessions.revoke_user(check_name(args.name))
            print(f"revoked {n} session(s) of {args.name}")
    except AccountsError as err:
        print(f"candor: error: {err}", file=sys.stderr)
        return 2
    return 0
