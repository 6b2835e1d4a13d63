"""Failed-login limits that slow a guesser without letting them lock other people out.

Why not one count per address and one per name (the rule before issue 27): five wrong passwords a minute
for a name, from anywhere, locked that name, and five from one address locked every account behind that
address (a proxy or a NAT), so one person could lock everyone out. The rules now (SECURITY.md states them):

1. **Per (account, address)**: ``CANDOR_LOGIN_LIMIT`` (default 5) failures in a row are free; after the
   n-th the pair waits ``2 ** (n - limit)`` seconds from its last failure (1, 2, 4, ... s), at most
   ``CANDOR_LOGIN_MAX_DELAY_S`` (default 900). A correct password clears the pair; failures are kept 24 h.
2. **Per address**: past ``CANDOR_LOGIN_ADDRESS_LIMIT`` (default 20) failures in 15 minutes from one address,
   across accounts, that address's pairs get no free failures (the delays start at the first). An account
   that address has not failed on is checked as usual, so another account's correct password goes through.
3. **Per account, last resort**: ``CANDOR_LOGIN_LOCKOUT`` = ``FAILURES/ADDRESSES/MINUTES`` (default
   ``50/10/30``): an account with that many failures from at least that many addresses within an hour is
   locked for that many minutes, its correct password refused too. The lock ends by itself (the owner then
   logs in with the right password; failures before the lock no longer count towards another), or at once
   with ``python -m app users unlock NAME``, which also forgets the account's failures.

An attempt is counted before its password is checked, in the same ``BEGIN IMMEDIATE`` transaction that
reads the counts (concurrent guesses cannot all pass the check first); a refused attempt is not counted.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

from . import sessions
from workspace.errors import CandorError
from workspace.settings import current

ADDRESS_WINDOW_S = 15 * 60
"""Failures from one address counted over this window (rule 2)."""
LOCKOUT_WINDOW_S = 60 * 60
"""Failures of one account counted over this window (rule 3)."""
MEMORY_S = 24 * 60 * 60
"""A failure is forgotten after this long."""
_now = time.time
"""The clock (tests replace it to step through the delays without waiting)."""


class LoginRefused(Exception):
    """A login refused before its password was checked: one line for the user and when to try again.

    Parameters
    ----------
    message : str
        What to show (one line).
    retry_after : float
        Seconds until this account may be tried again from this address.
    """

    def __init__(self, message: str, retry_after: float):
        super().__init__(message)
        self.retry_after = retry_after


@dataclass(frozen=True)
class LoginLimits:
    """The limits of the three rules (module docstring), from Settings.

    Parameters
    ----------
    free : int, default=5
        Failures in a row a pair may make before it waits (``CANDOR_LOGIN_LIMIT``).
    address_limit : int, default=20
        Failures from one address in 15 minutes after which its pairs have none free.
    max_delay_s : float, default=900
        The longest wait of a pair.
    lockout_failures, lockout_addresses : int, default=50, 10
        Failures of one account within an hour, from at least this many addresses, that lock it.
    lockout_s : float, default=1800
        How long a lock lasts.
    """

    free: int = 5
    address_limit: int = 20
    max_delay_s: float = 900.0
    lockout_failures: int = 50
    lockout_addresses: int = 10
    lockout_s: float = 1800.0

    @classmethod
    def from_settings(cls) -> LoginLimits:
        """The limits of :func:`workspace.settings.current`.

        Raises
        ------
        CandorError
            Naming the variable and its value, if one is not a positive whole number (or, for
            ``CANDOR_LOGIN_LOCKOUT``, not three of them separated by ``/``).
        """
        s = current()
        lockout = (s.login_lockout or "50/10/30").split("/")
        if len(lockout) != 3:
            raise CandorError(f"CANDOR_LOGIN_LOCKOUT must be FAILURES/ADDRESSES/MINUTES (e.g. 50/10/30), "
                              f"got {s.login_lockout!r}")
        failures, addresses, minutes = (_whole("CANDOR_LOGIN_LOCKOUT", v) for v in lockout)
        return cls(free=_whole("CANDOR_LOGIN_LIMIT", s.login_limit or "5"),
                   address_limit=_whole("CANDOR_LOGIN_ADDRESS_LIMIT", s.login_address_limit or "20"),
                   max_delay_s=float(_whole("CANDOR_LOGIN_MAX_DELAY_S", s.login_max_delay_s or "900")),
                   lockout_failures=failures, lockout_addresses=addresses, lockout_s=60.0 * minutes)


def _whole(variable: str, text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise CandorError(f"{variable} must be a positive whole number, got {text!r}")
    return value


def pair_delay(failures: int, free: int, max_delay_s: float) -> float:
    """Seconds a pair waits after its ``failures``-th failure in a row: 0 below ``free``, then 1, 2, 4, ...

    Parameters
    ----------
    failures : int
        The pair's failures since its last success (within 24 h).
    free : int
        Failures allowed without a wait (0 from an address over its limit).
    max_delay_s : float
        The cap.

    Returns
    -------
    float
        ``min(2 ** (failures - max(free, 1)), max_delay_s)`` once ``failures >= max(free, 1)``, else 0.
    """
    first = max(free, 1)
    if failures < first:
        return 0.0
    return float(min(2.0 ** min(failures - first, 60), max_delay_s))


def _account_key(name: str) -> str:
    return (name or "")[:64].lower()


def reserve(name: str, address: str, *, limits: LoginLimits | None = None, now: float | None = None) -> int:
    """Count one attempt of ``name`` from ``address`` as a failure before its password is checked.

    Parameters
    ----------
    name : str
        The user name typed (compared in lower case, first 64 characters).
    address : str
        The client address.
    limits : LoginLimits, optional
        Default :meth:`LoginLimits.from_settings`.
    now : float, optional
        Unix seconds; default the clock (tests pass their own).

    Returns
    -------
    int
        The attempt's token for :func:`succeeded`.

    Raises
    ------
    LoginRefused
        The account is locked (rule 3) or the pair must still wait (rules 1 and 2); nothing is counted.
    """
    limits = limits or LoginLimits.from_settings()
    now = _now() if now is None else now
    account, address = _account_key(name), str(address or "")
    with sessions.connect() as conn:
        conn.execute("BEGIN IMMEDIATE")
        try:
            lock = conn.execute("SELECT until FROM login_lockouts WHERE account = ?", (account,)).fetchone()
            if lock and lock[0] > now:
                raise LoginRefused(f"this account is locked until {_clock(lock[0])} after failed logins from many "
                                   f"addresses; the operator can unlock it now (python -m app users unlock)",
                                   lock[0] - now)
            since = max(now - LOCKOUT_WINDOW_S, lock[0] if lock else 0.0)
            failures, addresses = conn.execute(
                "SELECT COUNT(*), COUNT(DISTINCT address) FROM login_failed WHERE account = ? AND at > ?",
                (account, since)).fetchone()
            if failures >= limits.lockout_failures and addresses >= limits.lockout_addresses:
                until = now + limits.lockout_s
                conn.execute("INSERT OR REPLACE INTO login_lockouts VALUES (?, ?)", (account, until))
                raise LoginRefused(f"this account is locked until {_clock(until)} after {failures} failed logins "
                                   f"from {addresses} addresses; the operator can unlock it now "
                                   f"(python -m app users unlock)", limits.lockout_s)
            (from_address,) = conn.execute("SELECT COUNT(*) FROM login_failed WHERE address = ? AND at > ?",
                                           (address, now - ADDRESS_WINDOW_S)).fetchone()
            free = 0 if from_address >= limits.address_limit else limits.free
            n, last = conn.execute("SELECT COUNT(*), MAX(at) FROM login_failed WHERE account = ? AND address = ?",
                                   (account, address)).fetchone()
            wait = pair_delay(n, free, limits.max_delay_s)
            if wait and now < last + wait:
                left = last + wait - now
                raise LoginRefused(f"too many failed logins for this name from your address: try again in "
                                   f"{max(1, round(left))} s", left)
            token = conn.execute("INSERT INTO login_failed (account, address, at) VALUES (?, ?, ?)",
                                 (account, address, now)).lastrowid
            conn.execute("DELETE FROM login_failed WHERE at <= ?", (now - MEMORY_S,))
            return token
        finally:
            conn.execute("COMMIT")


def succeeded(name: str, address: str, token: int) -> None:
    """The password of attempt ``token`` was right: forget the failures of this name from this address."""
    del token  # the pair's rows include it
    with sessions.connect() as conn:
        conn.execute("DELETE FROM login_failed WHERE account = ? AND address = ?", (_account_key(name), str(address or "")))


def unlock(name: str) -> int:
    """End the lock of ``name`` and forget its failures from every address; returns how many were forgotten."""
    account = _account_key(name)
    with sessions.connect() as conn:
        conn.execute("DELETE FROM login_lockouts WHERE account = ?", (account,))
        return conn.execute("DELETE FROM login_failed WHERE account = ?", (account,)).rowcount


def _clock(at: float) -> str:
    return time.strftime("%H:%M UTC", time.gmtime(at))
