"""Failed-login limits that nobody can turn into a lockout of others (issue 27, accounts/login_limits.py).

They FAIL on ef3d3fe: five wrong passwords from one address counted against the address, so anyone behind
the same proxy or NAT was refused (HTTP 429) with the right password, and five for a name from anywhere
refused that name from every address.
"""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest

from accounts import login_limits
from accounts.login_limits import LoginLimits, LoginRefused
from tests.security.access_support import dash_app, isolated, login, users_file  # noqa: F401

ATTACKER = "10.0.0.66"  # X: the attacker, and everyone behind the same NAT
ELSEWHERE = "10.0.0.77"  # Y


@pytest.fixture
def clock(monkeypatch):
    """A clock the test moves by hand (no wait ends unless the test says so)."""
    now = [1.8e9]
    monkeypatch.setattr(login_limits, "_now", lambda: now[0])
    return now


def test_hammering_a_from_x_stops_neither_b_from_x_nor_a_from_y(dash_app, isolated, monkeypatch, clock):
    """40 concurrent wrong passwords for ann from X, with bob's and ann's own correct logins among them
    (bob from X, ann from Y): 5 guesses are checked, the rest refused, and both owners get in."""
    users_file(isolated, monkeypatch, ann=("analyst", "ann-pass-1"), bob=("viewer", "bob-pass-1"))
    attempts = [("ann", f"guess-{i}", ATTACKER) for i in range(40)]
    attempts[20:20] = [("bob", "bob-pass-1", ATTACKER), ("ann", "ann-pass-1", ELSEWHERE)]

    def attempt(a):
        return login(dash_app.server.test_client(), a[0], a[1], ip=a[2]).status_code

    with ThreadPoolExecutor(max_workers=12) as pool:
        statuses = list(pool.map(attempt, attempts))
    owners = [statuses.pop(20), statuses.pop(20)]
    assert owners == [303, 303]
    assert statuses.count(401) == 5 and statuses.count(429) == 35
    # after the hammering, the same again, one at a time
    client = dash_app.server.test_client()
    assert login(client, "bob", "bob-pass-1", ip=ATTACKER).status_code == 303
    assert login(client, "ann", "ann-pass-1", ip=ELSEWHERE).status_code == 303
    assert login(client, "ann", "ann-pass-1", ip=ATTACKER).status_code == 429  # the hammered pair waits


def test_an_address_spraying_many_names_still_lets_another_account_in(dash_app, isolated, monkeypatch, clock):
    """X fails once on each of 30 names (past the address limit of 20 in 15 minutes): X's pairs then wait from
    their first failure, but bob, whom X has not failed on, logs in from X with his password."""
    users_file(isolated, monkeypatch, bob=("viewer", "bob-pass-1"))
    client = dash_app.server.test_client()
    with ThreadPoolExecutor(max_workers=10) as pool:
        statuses = list(pool.map(lambda i: login(dash_app.server.test_client(), f"user{i}", "guess",
                                                 ip=ATTACKER).status_code, range(30)))
    assert statuses == [401] * 30
    assert login(client, "user3", "guess-2", ip=ATTACKER).status_code == 429  # no free failures left at X
    assert login(client, "user3", "guess-2", ip=ELSEWHERE).status_code == 401
    assert login(client, "bob", "bob-pass-1", ip=ATTACKER).status_code == 303


def _fail(name, address, now, limits):
    """One attempt; returns None if it was counted (checked), else the wait it was told."""
    try:
        login_limits.reserve(name, address, limits=limits, now=now)
    except LoginRefused as refused:
        return refused.retry_after
    return None


def test_delays_grow_as_stated(isolated):
    """After the free failures a pair waits 1, 2, 4, 8, 16 s from its last failure, capped (here at 16 s)."""
    limits = LoginLimits(free=3, address_limit=1000, max_delay_s=16)
    t = 1.8e9
    assert [_fail("ann", ATTACKER, t, limits) for _ in range(3)] == [None] * 3
    waits = []
    for _ in range(7):
        wait = _fail("ann", ATTACKER, t, limits)
        assert wait is not None and _fail("ann", ATTACKER, t + wait - 0.01, limits) is not None
        t += wait
        waits.append(wait)
        assert _fail("ann", ATTACKER, t, limits) is None  # counted: the next failure
    assert waits == [1, 2, 4, 8, 16, 16, 16]
    assert [login_limits.pair_delay(n, 5, 900) for n in (4, 5, 6, 7, 14, 15, 40)] == [0, 1, 2, 4, 512, 900, 900]
    # from an address over its limit, the waits start at the first failure
    assert [login_limits.pair_delay(n, 0, 900) for n in (0, 1, 2, 3)] == [0, 1, 2, 4]


def test_many_addresses_lock_the_account_until_it_is_unlocked_or_the_lock_ends(isolated, monkeypatch, capsys):
    """The last resort: 20 failures of ann from 5 addresses within an hour lock ann (even a new address, even her
    password is not checked) for 10 minutes; then she gets in, or `users unlock ann` ends it at once."""
    from accounts.cli import main

    limits = LoginLimits(free=5, lockout_failures=20, lockout_addresses=5, lockout_s=600)
    t = 1.8e9
    for k in range(4):  # 4 addresses x 5 failures: 20 failures but only 4 addresses, no lock
        assert [_fail("ann", f"10.1.0.{k}", t, limits) for _ in range(5)] == [None] * 5
    assert _fail("ann", "10.2.0.1", t, limits) is None  # the fifth address: 21 failures from 5
    with pytest.raises(LoginRefused, match="this account is locked until .* after 21 failed logins from 5 addresses"):
        login_limits.reserve("Ann", "10.9.9.9", limits=limits, now=t)
    assert _fail("ann", "10.9.9.9", t + 599, limits) == pytest.approx(1)
    assert _fail("bob", "10.1.0.1", t, limits) is None  # other accounts are not locked
    assert _fail("ann", "10.9.9.9", t + 600, limits) is None  # the lock ended; old failures no longer count
    assert _fail("ann", "10.9.9.8", t + 600, limits) is None
    # lock it again and unlock it by hand
    for k in range(5):
        for _ in range(4):
            _fail("ann", f"10.3.0.{k}", t + 700, limits)
    assert _fail("ann", "10.9.9.7", t + 700, limits) == 600
    assert main(["unlock", "ann"]) == 0
    assert capsys.readouterr().out.startswith("unlocked ann; forgot ")
    assert _fail("ann", "10.9.9.7", t + 700, limits) is None


def test_bad_limits_are_named(monkeypatch):
    """A bad value is one line naming the variable (the server refuses to start with it)."""
    from workspace.errors import CandorError

    monkeypatch.setenv("CANDOR_LOGIN_LOCKOUT", "50/10")
    with pytest.raises(CandorError, match=r"CANDOR_LOGIN_LOCKOUT must be FAILURES/ADDRESSES/MINUTES .* got '50/10'"):
        LoginLimits.from_settings()
    monkeypatch.setenv("CANDOR_LOGIN_LOCKOUT", "50/10/30")
    monkeypatch.setenv("CANDOR_LOGIN_ADDRESS_LIMIT", "0")
    with pytest.raises(CandorError, match="CANDOR_LOGIN_ADDRESS_LIMIT must be a positive whole number, got '0'"):
        LoginLimits.from_settings()


def test_names_differing_only_in_case_are_one_account(tmp_path):
    """Found by an attack: 'ann' and 'Ann' could be two accounts, and the limits (which count a name in lower
    case) locked both when one was attacked. A second such name is now refused when it is added."""
    from accounts.users import AccountsError, add_user

    users = tmp_path / "users"
    add_user(users, "ann", "viewer", "ann-pass-123")
    with pytest.raises(AccountsError, match="'ann' exists; names that differ only in case are one name"):
        add_user(users, "Ann", "analyst", "ann-pass-456")
    assert add_user(users, "ann", "analyst", "ann-pass-789") is False  # the same name is replaced, as before
    assert [ln.split(":")[:2] for ln in users.read_text().splitlines()] == [["ann", "analyst"]]
