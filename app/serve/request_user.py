"""Who this request's user is and whether they hold a role: read by the services' own checks and the pages.

:mod:`app.serve.access` identifies the user once per request (``flask.g.candor_user``) and refuses what their role
does not allow; this module only reads that answer, and imports nothing else of :mod:`app`, so the services
(``selection.install``, uploads) check roles without importing the request hooks, which import the services
(issue 24: that made a cycle).
"""
from __future__ import annotations

import flask

from accounts.roles import has_role as _role_allows
from accounts.users import User
from workspace.errors import CandorError

__all__ = ["current_user", "has_role", "require_role"]


def current_user() -> User | None:
    """The user of this request (None: anonymous, or outside a request)."""
    return flask.g.get("candor_user") if flask.has_request_context() else None


def has_role(role: str) -> bool:
    """Whether this request's user holds ``role`` (True outside a request: the command line, tests, jobs)."""
    if not flask.has_request_context():
        return True
    user = current_user()
    return user is not None and _role_allows(user.role, role)


def require_role(role: str, doing: str) -> None:
    """Refuse ``doing`` unless this request's user holds ``role`` (checks in services, beside the hook's).

    Raises
    ------
    CandorError
        ``"<doing> needs the <role> role; ..."``, naming the user's role.
    """
    if not has_role(role):
        user = current_user()
        who = f"you are logged in as {user.name} ({user.role})" if user else "you are not logged in"
        raise CandorError(f"{doing} needs the {role} role; {who}")
