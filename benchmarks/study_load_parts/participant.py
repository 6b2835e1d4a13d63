"""One simulated participant of :mod:`benchmarks.study_load`: a thread that talks to the server exactly as the
browser does (page load, on-load callbacks, ``submit_step`` then ``render_step``), resending once after a dropped
keep-alive and reloading the page after any other failure."""
from __future__ import annotations

import random
import threading
import time
import uuid

import requests

from benchmarks.study_load_parts import STUDY_ID
from benchmarks.study_load_parts.ledger import Ledger, Submission

SUBMIT_OUTPUT = ("..study-token.data...study-refresh.data...study-error.children...study-retry.disabled"
                 "...study-error.className..")
#: The sentence the page shows while the database cannot be reached (the page re-sends the answer): study.answers.SAVING
SAVING_PREFIX = "Saving your answer"
RETRY_S = 2.0  # the page's re-send and re-render interval (app/pages/study.py, app/views/study.py render)
ROUTER_OUTPUT = ".._pages_content.children..._pages_store.data.."


def components(node):
    """Every Dash component (``{"type", "namespace", "props"}``) in a serialised tree."""
    if isinstance(node, list):
        for v in node:
            yield from components(v)
    elif isinstance(node, dict):
        if "namespace" in node and "props" in node:
            yield node
            node = node["props"]
        for v in node.values():
            yield from components(v)


def find_prop(tree, component_id: str, prop: str):
    return next((c["props"].get(prop) for c in components(tree) if c["props"].get("id") == component_id), None)


def _aborted(err: BaseException) -> bool:
    """True if a request failed because an open connection was closed or reset (not refused)."""
    seen = set()
    while err is not None and id(err) not in seen:
        seen.add(id(err))
        for arg in getattr(err, "args", ()):
            if isinstance(arg, BaseException) and _aborted_leaf(arg):
                return True
        if _aborted_leaf(err):
            return True
        err = err.__cause__ or err.__context__
    return False


def _aborted_leaf(err: BaseException) -> bool:
    from http.client import RemoteDisconnected

    return isinstance(err, (RemoteDisconnected, ConnectionResetError, BrokenPipeError)) and \
        not isinstance(err, ConnectionRefusedError)


class Participant(threading.Thread):
    """One browser: loads the page, answers what the server renders, resumes after failures."""

    def __init__(self, n: int, base: str, ledger: Ledger, gate: threading.Event, *, think: tuple[float, float],
                 deadline: float, max_requests: int = 400):
        super().__init__(name=f"participant-{n}", daemon=True)
        self.n, self.base, self.ledger, self.gate = n, base, ledger, gate
        self.rng = random.Random(1000 + n)
        self.think, self.deadline, self.max_requests = think, deadline, max_requests
        self.http = requests.Session()
        self.token: str | None = None
        self.refresh = 0
        self.body = None
        self.row_value = None
        self.requests = 0
        self.done = False
        self.error: str | None = None

    # -- HTTP, timed
    def _request(self, kind: str, method: str, path: str, **kw) -> requests.Response:
        self.gate.wait(timeout=max(0.0, self.deadline - time.time()))  # closed while the server is down
        if self.requests >= self.max_requests or time.time() > self.deadline:
            raise TimeoutError("participant out of budget")
        self.requests += 1
        with self.ledger.lock:
            self.ledger.in_flight += 1
        t = time.perf_counter()
        try:
            try:
                r = self.http.request(method, self.base + path, timeout=60, **kw)
            except requests.ConnectionError as err:
                if not _aborted(err):
                    raise
                # The server closed a kept-alive connection as we reused it (gunicorn drops idle
                # ones after --keepalive seconds). A browser then resends the request once on a
                # new connection, whatever the method (Chromium: ShouldResendRequest); so do we.
                with self.ledger.lock:
                    self.ledger.resent[kind] += 1
                r = self.http.request(method, self.base + path, timeout=60, **kw)
        except requests.RequestException as err:
            with self.ledger.lock:
                self.ledger.failures[f"{kind}: {type(err).__name__}"] += 1
            raise
        finally:
            with self.ledger.lock:
                self.ledger.in_flight -= 1
        dt = time.perf_counter() - t
        with self.ledger.lock:
            self.ledger.latency.append((kind, dt))
            if r.status_code not in (200, 204):
                self.ledger.failures[f"{kind}: HTTP {r.status_code}"] += 1
            if r.status_code >= 500:  # what a participant would see as a server error
                self.ledger.participant_errors += 1
        return r

    def _callback(self, kind: str, output: str, outputs, inputs: list, state: list = ()) -> dict:
        body = {"output": output, "outputs": outputs, "inputs": inputs, "state": list(state),
                "changedPropIds": [f"{inputs[0]['id']}.{inputs[0]['property']}"] if inputs else []}
        r = self._request(kind, "POST", "/_dash-update-component", json=body,
                          headers={"Referer": self._url()})
        if r.status_code == 204:
            return {}
        r.raise_for_status()
        return r.json().get("response", {})

    def _url(self) -> str:
        return f"{self.base}/study/{STUDY_ID}" + (f"?t={self.token}" if self.token else "")

    # -- what the renderer does
    def load(self) -> None:
        """A (re)load of ``/study/<id>[?t=token]``: HTML, layout, dependencies, then the on-load callbacks."""
        search = f"?t={self.token}" if self.token else ""
        self._request("page", "GET", f"/study/{STUDY_ID}{search}").raise_for_status()
        layout = self._request("layout", "GET", "/_dash-layout", headers={"Referer": self._url()})
        layout.raise_for_status()
        self.row_value = find_prop(layout.json(), "row-input", "value")
        deps = self._request("dependencies", "GET", "/_dash-dependencies")
        deps.raise_for_status()
        # the renderer runs clientside callbacks in the browser: only server-side ones are requests
        server_side = {d["output"] for d in deps.json() if not d.get("clientside_function")}
        page = self._callback("router", ROUTER_OUTPUT,
                              [{"id": "_pages_content", "property": "children"},
                               {"id": "_pages_store", "property": "data"}],
                              [{"id": "_pages_location", "property": "pathname", "value": f"/study/{STUDY_ID}"},
                               {"id": "_pages_location", "property": "search", "value": search}])
        token_prop = find_prop(page, "study-token", "data")
        if token_prop != self.token:
            raise RuntimeError(f"the page did not carry the token from the URL: {token_prop!r}")
        if "navbar.class_name" in server_side:
            self._callback("navbar", "navbar.class_name", {"id": "navbar", "property": "class_name"},
                           [{"id": "url", "property": "pathname", "value": f"/study/{STUDY_ID}"}])
        if "row-status.children" in server_side:
            self._callback("row-status", "row-status.children", {"id": "row-status", "property": "children"},
                           [{"id": "row-input", "property": "value", "value": self.row_value}])
        self.refresh = 0
        self.render()

    def render(self) -> None:
        """The step callback; while it shows the "one moment" screen (database unreachable), again every 2 s."""
        retry = []
        while True:
            out = self._callback("render", "study-body.children", {"id": "study-body", "property": "children"},
                                 [{"id": "study-token", "property": "data", "value": self.token},
                                  {"id": "study-refresh", "property": "data", "value": self.refresh}, retry],
                                 [{"id": "study-id", "property": "data", "value": STUDY_ID}])
            self.body = out["study-body"]["children"]
            timer = next((c["props"]["id"] for c in components(self.body) if isinstance(c["props"].get("id"), dict)
                          and c["props"]["id"].get("type") == "study-render-retry"), None)
            if timer is None:
                return
            with self.ledger.lock:
                self.ledger.waiting_screens += 1
            time.sleep(RETRY_S)
            retry = [{"id": timer, "property": "n_intervals", "value": len(retry) and retry[0]["value"] + 1 or 1}]

    def answer(self) -> bool:
        """Answer the screen shown; return False when it shows the completion code."""
        comps = list(components(self.body))
        code = next((c["props"].get("children") for c in comps
                     if c["props"].get("id") == "study-completion-code"), None)
        if code is not None:
            with self.ledger.lock:
                self.ledger.codes[self.n] = code
            return False
        buttons = [c["props"]["id"] for c in comps
                   if isinstance(c["props"].get("id"), dict) and c["props"]["id"].get("type") == "study-submit"]
        fields = [c for c in comps
                  if isinstance(c["props"].get("id"), dict) and c["props"]["id"].get("type") == "study-answer"]
        if len(buttons) != 1:
            raise RuntimeError(f"expected one submit button, found {len(buttons)}")
        button = buttons[0]
        values = {}
        for c in fields:
            name, props = c["props"]["id"]["field"], c["props"]
            if name == "consent":
                values[name] = ["yes"]
            elif name == "confidence":
                values[name] = self.rng.randint(0, 100)
            else:
                values[name] = self.rng.choice(props["options"])["value"]
        kind = ("consent" if button["step"] == "consent" else "instructions" if button["phase"] == "instructions"
                else "questionnaire" if button["phase"] == "questionnaire" else
                "attention" if button["phase"] == "attention" else "trial")
        rows = (sum(1 for f in values if f.startswith("q:")) if kind == "questionnaire"
                else 1 if kind in ("trial", "attention") else 0)
        time.sleep(self.rng.uniform(*self.think))
        sub = Submission(self.token, button["step"], button["phase"], kind,
                         {k: v for k, v in values.items() if k not in ("consent",)}, rows)
        self.gate.wait(timeout=max(0.0, self.deadline - time.time()))
        self.ledger.add(sub)
        timing = {"step": button["step"], "phase": button["phase"], "rt_ms": round(self.rng.uniform(500, 4000), 1),
                  "client_ts": int(time.time() * 1000), "nonce": self.rng.random(), "key": uuid.uuid4().hex}
        ids = [c["props"]["id"] for c in fields]
        state = [[{"id": i, "property": "value", "value": values[i["field"]]} for i in ids],
                 [{"id": i, "property": "id", "value": i} for i in ids],
                 {"id": "study-token", "property": "data", "value": self.token},
                 {"id": "study-id", "property": "data", "value": STUDY_ID},
                 {"id": "study-refresh", "property": "data", "value": self.refresh},
                 {"id": "study-recruitment", "property": "data", "value": {}}]  # a plain link: no platform ids
        retries = 0
        while True:  # as the page: while the answer is "being saved", the same request (same key) every 2 s
            out = self._callback("submit", SUBMIT_OUTPUT,
                                 [{"id": "study-token", "property": "data"},
                                  {"id": "study-refresh", "property": "data"},
                                  {"id": "study-error", "property": "children"},
                                  {"id": "study-retry", "property": "disabled"},
                                  {"id": "study-error", "property": "className"}],
                                 [{"id": "study-timing", "property": "data", "value": timing},
                                  {"id": "study-retry", "property": "n_intervals", "value": retries or None}], state)
            error = out.get("study-error", {}).get("children", "")
            if not (error or "").startswith(SAVING_PREFIX):
                break
            retries += 1
            with self.ledger.lock:
                self.ledger.saving += 1
            time.sleep(RETRY_S)
        if error:
            with self.ledger.lock:
                self.ledger.participant_errors += 1
            sub.error = error
            with self.ledger.lock:
                self.ledger.failures[f"submit refused: {error[:60]}"] += 1
            raise RuntimeError(error)
        if "study-token" in out:
            self.token = out["study-token"]["data"]
            sub.token = self.token
            with self.ledger.lock:
                self.ledger.tokens[self.n] = self.token
        self.ledger.ack(sub)
        self.refresh = out.get("study-refresh", {}).get("data", self.refresh)
        self.render()
        return True

    def run(self) -> None:
        loaded = False
        backoff = 0.2
        while time.time() < self.deadline:
            try:
                if not loaded:
                    if loaded is None:
                        with self.ledger.lock:
                            self.ledger.reloads += 1
                    self.load()
                    loaded = True
                if not self.answer():
                    self.done = True
                    return
                backoff = 0.2
            except TimeoutError as err:
                self.error = str(err)
                return
            except (requests.RequestException, RuntimeError, KeyError, ValueError) as err:
                # what a participant does when the page fails: wait a little and reload it
                self.error = f"{type(err).__name__}: {err}"[:200]
                loaded = None
                time.sleep(backoff + self.rng.uniform(0, backoff))
                backoff = min(backoff * 2, 2.0)
        self.error = self.error or "deadline"
