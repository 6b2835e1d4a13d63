"""Password hashes with the standard library's scrypt, as ``scrypt$N$r$p$salt$hash`` (base64, no colons)."""
from __future__ import annotations

import base64
import hashlib
import hmac
import secrets

_N, _R, _P = 2**14, 8, 1  # about 16 MiB and 50 ms per hash on one core
_MAXMEM = 64 * 2**20


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def hash_password(password: str) -> str:
    """A salted scrypt hash of ``password`` for a users file line.

    Raises
    ------
    ValueError
        If ``password`` is empty.
    """
    if not password:
        raise ValueError("the password is empty")
    salt = secrets.token_bytes(16)
    digest = hashlib.scrypt(password.encode(), salt=salt, n=_N, r=_R, p=_P, maxmem=_MAXMEM, dklen=32)
    return f"scrypt${_N}${_R}${_P}${_b64(salt)}${_b64(digest)}"


def is_hash(text: str) -> bool:
    """Whether ``text`` has the form :func:`hash_password` writes (parameters within sane bounds)."""
    parts = text.split("$")
    if len(parts) != 6 or parts[0] != "scrypt" or not all(p.isdigit() for p in parts[1:4]):
        return False
    n, r, p = map(int, parts[1:4])
    return 2 <= n <= 2**20 and n & (n - 1) == 0 and 1 <= r <= 32 and 1 <= p <= 16 and n * r * 128 <= _MAXMEM // 2


def verify_password(password: str | None, stored: str) -> bool:
    """Constant-time check of ``password`` against a hash from :func:`hash_password` (False if malformed)."""
    if not password or not is_hash(stored):
        return False
    _, n, r, p, salt, digest = stored.split("$")
    try:
        expected = _unb64(digest)
        got = hashlib.scrypt(password.encode(), salt=_unb64(salt), n=int(n), r=int(r), p=int(p), maxmem=_MAXMEM,
                             dklen=len(expected))
    except (ValueError, MemoryError):
        return False
    return hmac.compare_digest(got, expected)
