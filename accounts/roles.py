"""The roles, from least to most trusted; each role holds every right of the roles before it.

``viewer``: reads every page. ``analyst``: also uploads, switches the model or the class, goes
back to the sample and starts background jobs (surrogate refit, text head analysis). ``researcher``:
also reads and exports study data (``/study-admin``). Study participants (``/study/<id>``) have no
role and no account: they reach only the participant callbacks.
"""
from __future__ import annotations

ROLES = ("viewer", "analyst", "researcher")


def role_rank(role: str | None) -> int:
    """0 for no role (anonymous), else 1 + the role's index in :data:`ROLES`.

    Raises
    ------
    ValueError
        If ``role`` is not ``None`` and not one of :data:`ROLES`.
    """
    if role is None:
        return 0
    if role not in ROLES:
        raise ValueError(f"unknown role {role!r}; roles are {', '.join(ROLES)}")
    return 1 + ROLES.index(role)


def has_role(held: str | None, needed: str) -> bool:
    """Whether a user holding role ``held`` (``None``: anonymous) may do what needs role ``needed``."""
    return role_rank(held) >= role_rank(needed) > 0
