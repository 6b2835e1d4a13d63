"""How each kind of setting's text becomes a value, for :mod:`workspace.settings` (split from it at 400 lines).

Each parser takes the environment mapping and the variable's name and returns the value, or raises a
:class:`~workspace.errors.CandorError` whose one line names the variable and what is wrong with it; none reads
``os.environ`` itself (``workspace/settings.py`` passes the mapping it read once).
"""
from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import urlsplit

from .errors import CandorError


def _text(env, name):
    value = env.get(name, "").strip()
    return value or None


def _path(env, name):
    value = _text(env, name)
    return Path(value).expanduser() if value else None


_SECRET_PARAM = re.compile(r"(?i)((?:^|[?&;])[^=&;#]*(?:pass|pwd|secret|token|auth|key)[^=&;#]*=)[^&;#]*")


def redact_url(url: str) -> str:
    """``url`` with its secrets replaced by ``***``, for error messages and logs.

    Parameters
    ----------
    url : str
        Any text given as a URL (it may not parse as one).

    Returns
    -------
    str
        The user information before the last ``@`` (a ``user:password`` pair keeps ``user``) and the value of
        every query parameter whose name holds ``pass``, ``pwd``, ``secret``, ``token``, ``auth`` or ``key``
        replaced by ``***``; the scheme, host, port and path as given.
    """
    scheme, sep, rest = url.partition("://")
    scheme, rest = (scheme + sep, rest) if sep else ("", url)
    rest = _SECRET_PARAM.sub(r"\1***", rest)
    if "@" in rest:  # the last @: a password may hold an unencoded @ or /
        userinfo, host = rest.rsplit("@", 1)
        user = userinfo.split(":", 1)[0] if ":" in userinfo else ""
        rest = f"{user}:***@{host}"
    return scheme + rest


def _redis_url(env):
    value = _text(env, "CANDOR_REDIS_URL")
    if value and not value.startswith(("redis://", "rediss://", "unix://")):
        raise CandorError(f"CANDOR_REDIS_URL must start with redis://, rediss:// or unix://, got {redact_url(value)!r}")
    if value and not value.startswith("unix://"):
        try:  # urllib's message may quote part of a password holding a "/": not shown
            urlsplit(value).port  # noqa: B018 (raises for a port that is not a number)
        except ValueError:
            raise CandorError(f"CANDOR_REDIS_URL {redact_url(value)!r} is not a valid URL (its port is not a "
                              "number from 0 to 65535)") from None
    return value


MIN_SECRET_KEY = 32
"""Fewest characters of ``CANDOR_SECRET_KEY`` (32 hex digits are 128 bits)."""


def _secret_key(env):
    value = env.get("CANDOR_SECRET_KEY") or None
    if value is not None and len(value.strip()) < MIN_SECRET_KEY:
        raise CandorError(f"CANDOR_SECRET_KEY must be at least {MIN_SECRET_KEY} characters, got "
                          f"{len(value.strip())}; make one with: python -c \"import secrets; "
                          "print(secrets.token_hex(32))\"")
    return value


def _number(env, name, default, *, zero_ok=False):
    raw = env.get(name, "").strip()
    if not raw:
        return float(default)
    try:
        value = float(raw)
    except ValueError:
        value = float("nan")
    if not (value > 0 or (value == 0 and zero_ok)) or value == float("inf"):
        raise CandorError(f"{name}={raw!r} is not a positive number")
    return value


def _whole(env, name, default, what):
    raw = env.get(name, "").strip()
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value <= 0:
        raise CandorError(f"{name} must be a positive whole number of {what}, got {raw!r}")
    return value


def _hosts(env, name):
    raw = env.get(name, "")
    return tuple(h.strip() for h in raw.split(",") if h.strip())


def _frame_ancestors(env, name):
    raw = env.get(name, "").replace(",", " ").split()
    for o, parts in ((o, urlsplit(o)) for o in raw):
        if parts.scheme not in ("http", "https") or not parts.netloc or parts.path not in ("", "/") or parts.query:
            raise CandorError(f"{name} takes origins such as https://portal.example.org, got {o!r}")
    return tuple(o.rstrip("/") for o in raw)


def _hops(env, name):
    if (raw := env.get(name, "").strip() or "0") not in {"0", "1", "2", "3", "4", "5"}:
        raise CandorError(f"{name} must be the number of proxies in front, 0 to 5, got {raw!r}")
    return int(raw)


def _warm(env, name):
    raw = env.get(name, "").strip()
    choices = {"": True, "1": True, "0": False, "sync": "sync"}
    if raw not in choices:
        raise CandorError(f"{name} must be 1, 0 or sync, got {raw!r}")
    return choices[raw]


def _flag(env, name):
    raw = env.get(name, "").strip()
    if raw not in ("", "0", "1"):
        raise CandorError(f"{name} must be 0 or 1, got {raw!r}")
    return raw == "1"
