"""Helpers of the access-control tests: one in-process app, Dash callback POSTs, users files, logins."""
from __future__ import annotations

import pytest

from accounts.users import add_user

ORIGIN = "http://localhost"


@pytest.fixture(scope="module")
def dash_app():
    from app.serve.server import create_app

    return create_app(warm=False)


@pytest.fixture
def isolated(monkeypatch, tmp_path):
    """No login settings from the outside; a fresh session file and selection folder for this test."""
    for name in ("CANDOR_USERS_FILE", "CANDOR_AUTH_HEADER", "CANDOR_RESEARCHER_PASSWORD", "CANDOR_ALLOWED_HOSTS",
                 "CANDOR_BIND_HOSTS", "CANDOR_LOGIN_LIMIT", "CANDOR_AUTH_ROLES", "CANDOR_LOGIN_ADDRESS_LIMIT",
                 "CANDOR_LOGIN_MAX_DELAY_S", "CANDOR_LOGIN_LOCKOUT"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("CANDOR_SESSION_DB", str(tmp_path / "sessions.sqlite3"))
    monkeypatch.setenv("CANDOR_STATE_DIR", str(tmp_path / "state"))
    return tmp_path


def users_file(tmp_path, monkeypatch, **accounts: tuple[str, str]):
    """Write ``name=(role, password)`` accounts to a users file and configure it."""
    path = tmp_path / "users"
    for name, (role, password) in accounts.items():
        add_user(path, name, role, password)
    monkeypatch.setenv("CANDOR_USERS_FILE", str(path))
    return path


def key_of(dash_app, *fragments: str) -> str:
    """The callback key (the request's ``output``) containing every fragment."""
    found = [k for k in dash_app.callback_map if all(f in k for f in fragments)]
    assert len(found) == 1, (fragments, found)
    return found[0]


def dash_post(client, key: str, inputs: list[dict], state: list[dict] = (), headers: dict | None = None):
    """POST one callback call as the Dash renderer does (JSON, same-origin ``Origin`` unless given)."""
    parts = key[2:-2].split("...") if key.startswith("..") else [key]
    outputs = [{"id": p.rpartition(".")[0], "property": p.rpartition(".")[2]} for p in parts]
    body = {"output": key, "outputs": outputs if key.startswith("..") else outputs[0], "inputs": list(inputs),
            "state": list(state), "changedPropIds": [f"{inputs[0]['id']}.{inputs[0]['property']}"]}
    return client.post("/_dash-update-component", json=body, headers={"Origin": ORIGIN, **(headers or {})})


def login(client, name: str, password: str, *, ip: str = "127.0.0.1"):
    """Log in at /login as a browser would; returns the response (303 on success)."""
    return client.post("/login", data={"username": name, "password": password, "next": "/"},
                       headers={"Origin": ORIGIN}, environ_base={"REMOTE_ADDR": ip})
