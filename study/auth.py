"""Researcher login for ``/study-admin``: server-side sessions of the ``researcher`` role.

``CANDOR_RESEARCHER_PASSWORD`` is a shorthand for one account, ``researcher`` (role ``researcher``),
that logs in with the password field of the researcher page; accounts of a users file
(``CANDOR_USERS_FILE``) log in at ``/login``. Either way the cookie holds only a random session id;
the session lives in :mod:`accounts.sessions` (shared by every worker), ends on logout, on expiry or
with ``python -m app users revoke NAME``. Nothing here imports dash or flask; the callbacks read
and set the cookie.
"""

from __future__ import annotations

from accounts import sessions
from accounts.roles import has_role
from accounts.users import RESEARCHER_ACCOUNT, Users

__all__ = ["COOKIE", "MAX_AGE_S", "password_configured", "check_password", "issue", "verify", "revoke"]

COOKIE = "candor_session"
MAX_AGE_S = 8 * 3600  # default of CANDOR_SESSION_HOURS; the cookie's max_age is accounts.sessions.session_seconds()
_users = Users()


def password_configured() -> bool:
    """Whether researchers can log in (``CANDOR_RESEARCHER_PASSWORD`` or a users file)."""
    return Users.login_configured()


def check_password(candidate: str | None) -> bool:
    """Whether ``candidate`` is the password of the ``researcher`` account (constant time, not rate-limited)."""
    return _users.check(RESEARCHER_ACCOUNT, candidate) is not None


def issue(user_name: str = RESEARCHER_ACCOUNT) -> str:
    """Start a server-side session for ``user_name``; returns the cookie value."""
    return sessions.create(user_name)


def verify(value: str | None) -> bool:
    """True if ``value`` is a live session of a user who holds the researcher role now."""
    session = sessions.lookup(value)
    user = _users.get(session.user_name) if session else None
    return user is not None and has_role(user.role, "researcher")


def revoke(value: str | None) -> None:
    """End the session ``value`` (logout)."""
    sessions.delete(value)
