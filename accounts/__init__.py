"""Accounts of a Candor server: roles, hashed passwords, server-side sessions, login rate limits.

Nothing here imports dash or flask (the Flask hooks live in :mod:`app.serve.access`), so the
``python -m app users`` command and the tests use it without a server.
"""
from .passwords import hash_password, verify_password
from .roles import ROLES, has_role, role_rank
from .users import AccountsError, User, Users, add_user, load_users

__all__ = ["ROLES", "AccountsError", "User", "Users", "add_user", "has_role", "hash_password", "load_users",
           "role_rank", "verify_password"]
