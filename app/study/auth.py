"""Researcher login: a password from the environment and a signed, expiring cookie.

``CANDOR_RESEARCHER_PASSWORD`` enables the researcher pages (without it every
request is refused). The session cookie is an :mod:`itsdangerous` timestamped
signature keyed by ``CANDOR_SECRET_KEY`` (set it when running several gunicorn
workers; otherwise a key is created once in ``instance/secret_key``). Nothing
here imports dash or flask; the callbacks read and set the cookie.
"""

from __future__ import annotations

import hmac
import os
import secrets
from pathlib import Path

from itsdangerous import BadSignature, SignatureExpired, TimestampSigner

__all__ = ["COOKIE", "MAX_AGE_S", "password_configured", "check_password", "issue", "verify"]

COOKIE = "candor_researcher"
MAX_AGE_S = 8 * 3600
_SALT = "candor-researcher-login"


def _secret() -> bytes:
    env = os.environ.get("CANDOR_SECRET_KEY")
    if env:
        return env.encode()
    path = Path("instance") / "secret_key"
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as fh:
            fh.write(secrets.token_hex(32))
    except FileExistsError:
        pass
    return path.read_text().strip().encode()


def password_configured() -> bool:
    """Whether ``CANDOR_RESEARCHER_PASSWORD`` is set (researcher pages enabled)."""
    return bool(os.environ.get("CANDOR_RESEARCHER_PASSWORD"))


def check_password(candidate: str | None) -> bool:
    """Constant-time comparison with ``CANDOR_RESEARCHER_PASSWORD``."""
    expected = os.environ.get("CANDOR_RESEARCHER_PASSWORD", "")
    return bool(expected) and hmac.compare_digest((candidate or "").encode(), expected.encode())


def issue() -> str:
    """A signed session value for the cookie."""
    return TimestampSigner(_secret(), salt=_SALT).sign(b"researcher").decode()


def verify(value: str | None) -> bool:
    """True if ``value`` is a valid, unexpired session and login is enabled."""
    if not value or not password_configured():
        return False
    try:
        return TimestampSigner(_secret(), salt=_SALT).unsign(value, max_age=MAX_AGE_S) == b"researcher"
    except (BadSignature, SignatureExpired):
        return False
