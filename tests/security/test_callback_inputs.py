"""No forged callback input gets an HTTP 500 or a traceback (issue 27).

Every server callback the app declares (its ``/_dash-dependencies``) is posted, by a user holding the role it
needs (:mod:`app.serve.callback_roles`), ``None``, wrong types (text for a number, an object for a list, a list for
text), huge and negative numbers and long strings in every input and state, then random mixes (hypothesis,
a bounded number of examples). FAILED before ``app/serve/callback_inputs.py``: 37 requests answered 500 (the table's
``page_size="abc"``, the overview row's ``None``, the persuasive row ``10**12``, the study timing, ...), and
``page_size=10**9`` sent a viewer the whole table.

Background jobs are posted only values their guard refuses (a valid-looking one would fork a job per example).
"""
from __future__ import annotations

import json
import logging

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from app.serve.callback_inputs import problem
from app.serve.callback_roles import PARTICIPANT, required_role
from tests.security.access_support import ORIGIN, dash_app, isolated, login, users_file  # noqa: F401

BAD = [None, "abc", {"a": 1}, [1], 10 ** 12, -5, "x" * 5000, 1.5, True, [[[[[[[[[[1]]]]]]]]]], {"k": "y" * 3000}]
"""Values every input and state gets, one position at a time (the others None)."""

USERS = {"viewer": ("vera", "vera-pass-1"), "analyst": ("ann", "ann-pass-1"), "researcher": ("rita", "rita-pass-1")}


def _parse_id(cid: str):
    try:
        return json.loads(cid)
    except ValueError:
        return cid


def _outputs(key: str) -> list[dict]:
    parts = key[2:-2].split("...") if key.startswith("..") else [key]
    return [{"id": _parse_id(p.rpartition(".")[0]), "property": p.rpartition(".")[2].split("@")[0]} for p in parts]


def _body(dep: dict, values: list) -> dict:
    """The JSON a browser would post for ``dep`` with ``values`` for its inputs then its states."""
    items = [{"id": _parse_id(x["id"]), "property": x["property"], "value": v}
             for x, v in zip(dep["inputs"] + dep["state"], values)]
    n = len(dep["inputs"])
    outs = _outputs(dep["output"])
    first = dep["inputs"][0] if dep["inputs"] else None
    return {"output": dep["output"], "outputs": outs if dep["output"].startswith("..") else outs[0],
            "inputs": items[:n], "state": items[n:],
            "changedPropIds": [f"{first['id']}.{first['property']}"] if first else []}


@pytest.fixture
def callers(dash_app, isolated, monkeypatch):
    """(server callbacks declared by the app, a client per role, the set of background callbacks)."""
    users_file(isolated, monkeypatch, **{name: (role, pw) for role, (name, pw) in USERS.items()})
    clients = {PARTICIPANT: dash_app.server.test_client()}
    for role, (name, pw) in USERS.items():
        clients[role] = dash_app.server.test_client()
        assert login(clients[role], name, pw).status_code == 303
    deps = clients["viewer"].get("/_dash-dependencies").get_json()
    server = [d for d in deps if not d.get("clientside_function")]
    background = {k for k, v in dash_app.callback_map.items() if v.get("background")}
    assert len(server) >= 40 and background  # the app's real callbacks, not an empty list
    return server, clients, background


def _post(callers, dep, values):
    _, clients, background = callers
    body = _body(dep, values)
    role = required_role(dep["output"], body, background=dep["output"] in background)
    return clients[role].post("/_dash-update-component", json=body, headers={"Origin": ORIGIN})


def _refused_by_guard(dep, values) -> bool:
    return any(problem(x, v) for x, v in zip(dep["inputs"] + dep["state"], values))


def _assert_clean(got, dep, values, caplog):
    assert got.status_code < 500, (dep["output"][:80], [repr(v)[:30] for v in values], got.get_data(as_text=True)[:300])
    tracebacks = [r for r in caplog.records if r.exc_info or "Traceback" in r.getMessage()]
    assert not tracebacks, (dep["output"][:80], tracebacks[0].getMessage()[:300])


def test_every_callback_survives_bad_values_in_every_input(callers, caplog):
    """Attack: post each callback None, wrong types, huge/negative numbers and long text, input by input."""
    caplog.set_level(logging.WARNING)
    server, _, background = callers
    for dep in server:
        width = len(dep["inputs"]) + len(dep["state"])
        for pos in range(width):
            for bad in BAD:
                values = [None] * width
                values[pos] = bad
                if dep["output"] in background and not _refused_by_guard(dep, values):
                    continue
                _assert_clean(_post(callers, dep, values), dep, values, caplog)


def test_a_viewer_never_gets_more_than_a_page_of_the_table(callers):
    """Attack: a viewer asks the table's callback for a page of a billion rows (it sent the whole table)."""
    server, clients, _ = callers
    dep = next(d for d in server if d["output"].startswith("..overview-table.data"))
    got = _post(callers, dep, [0, 10 ** 9, 1, ""])  # page, page size, column page, filter
    assert got.status_code == 204  # refused: nothing changed
    fine = _post(callers, dep, [0, 12, 1, ""])
    assert fine.status_code == 200
    assert len(json.loads(fine.get_data(as_text=True))["response"]["overview-table"]["data"]) == 12


JSON = st.recursive(st.none() | st.booleans() | st.integers(-10 ** 15, 10 ** 15) | st.floats(allow_nan=False)
                    | st.text(max_size=40), lambda inner: st.lists(inner, max_size=4)
                    | st.dictionaries(st.text(max_size=8), inner, max_size=4), max_leaves=8)


@settings(max_examples=120, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=st.data())
def test_random_mixes_of_values_never_give_a_500(callers, caplog, data):
    """Attack: any JSON in any mix of a callback's inputs and states (hypothesis, 120 examples)."""
    caplog.set_level(logging.WARNING)
    server, _, background = callers
    dep = data.draw(st.sampled_from(server))
    values = data.draw(st.lists(JSON, min_size=len(dep["inputs"]) + len(dep["state"]),
                                max_size=len(dep["inputs"]) + len(dep["state"])))
    if dep["output"] in background and not _refused_by_guard(dep, values):
        return
    _assert_clean(_post(callers, dep, values), dep, values, caplog)


@pytest.mark.parametrize("error, shown", [
    (RuntimeError("/srv/private/cache.db is locked"), "reference"),
    (None, "the model failed on 1 rows (ValueError: boom)"),
])
def test_a_callback_that_fails_on_good_values_says_so_in_one_line(callers, caplog, monkeypatch, error, shown):
    """A callback raising on inputs that pass answered HTTP 204 (nothing, silently) before: now 422 with one line
    for the page, a CandorError's own line or a log reference (never another error's text: it may hold paths)."""
    from workspace.errors import CandorError

    caplog.set_level(logging.WARNING)
    server, clients, _ = callers
    dep = next(d for d in server if d["output"].startswith("..overview-table.data"))
    err = error if error is not None else CandorError(shown)

    def fail(*_a, **_k):
        raise err
    from app.views import overview
    monkeypatch.setattr(overview.services, "data_page", fail)
    got = _post(callers, dep, [0, 12, 1, ""])
    text = got.get_data(as_text=True)
    assert got.status_code == 422, (got.status_code, text[:200])
    assert text.count("\n") == 1 and text.startswith("candor: ")
    assert shown in text and "/srv/private" not in text
    logged = [r.getMessage() for r in caplog.records if "failed (ref" in r.getMessage()]
    assert len(logged) == 1 and type(err).__name__ in logged[0]
    assert not [r for r in caplog.records if r.exc_info]
