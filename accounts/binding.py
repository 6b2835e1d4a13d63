"""Which addresses a server may bind, and which Host names it answers, before it serves anything."""
from __future__ import annotations

import ipaddress

from .users import AccountsError, Users
from workspace.settings import current

LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")


def host_of(address: str) -> str:
    """The host of a bind address (``0.0.0.0:8050``, ``[::1]:80``, ``localhost``, ``unix:/run/x``) in lower case."""
    address = address.strip()
    if address.startswith(("unix:", "fd://")):
        return address
    if address.startswith("["):
        return address[1:address.find("]")].lower()
    if address.count(":") == 1:
        address = address.split(":")[0]
    return address.lower()


def is_loopback(host: str) -> bool:
    """Whether ``host`` (a name or an address) can only be reached from this machine."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_bind(addresses: list[str]) -> list[str]:
    """Refuse to serve beyond this machine without a login; returns the bound host names.

    Raises
    ------
    AccountsError
        If an address is not loopback and no login is configured (``CANDOR_USERS_FILE``,
        ``CANDOR_AUTH_HEADER`` or ``CANDOR_RESEARCHER_PASSWORD``), or it binds every address
        (``0.0.0.0``, ``::``) and ``CANDOR_ALLOWED_HOSTS`` does not name the hosts clients use.
    """
    hosts = [host_of(a) for a in addresses]
    outside = [h for h in hosts if not is_loopback(h)]
    if outside and not Users.login_configured():
        raise AccountsError(
            f"refusing to serve on {', '.join(outside)} without a login: anyone who can reach it could change "
            "what every user sees. Set CANDOR_USERS_FILE (python -m app users add NAME --role ROLE), "
            "CANDOR_AUTH_HEADER (a reverse proxy that logs users in) or CANDOR_RESEARCHER_PASSWORD (one "
            "researcher account), and CANDOR_ALLOWED_HOSTS for a wildcard address; or bind 127.0.0.1")
    Users().validate()
    wildcard = [h for h in outside if h in ("0.0.0.0", "::", "") or h.startswith(("unix:", "fd://"))]
    if wildcard and not current().allowed_hosts:
        raise AccountsError(
            f"serving on {', '.join(wildcard)}: set CANDOR_ALLOWED_HOSTS to the host names clients use "
            "(comma-separated, e.g. candor.example.org); requests naming another Host are refused")
    return hosts
