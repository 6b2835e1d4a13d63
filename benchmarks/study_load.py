"""Study mode under load: 50 simulated participants at once through gunicorn, then a crash mid-study.

Run ``python -m benchmarks.study_load`` (sample models built). Loopback only, bounded in count
and time. Each run starts ``gunicorn app.server:server`` as the Procfile does (``--preload``,
``CANDOR_WARM=sync``) with several workers on 127.0.0.1, over a throwaway database: a SQLite
file in a temporary folder, or a fresh database on the PostgreSQL server named by
``CANDOR_BENCH_POSTGRES_URL`` (``scripts/start_postgres.sh`` starts one). The study is
``tests/study/data/small_study.yaml`` (three arms, stratified, three cases, an attention check,
two questionnaires: 24 stored responses per participant).

Every simulated participant is a thread that talks to the server exactly as the browser does:
a page load is ``GET /study/<id>``, ``GET /_dash-layout``, ``GET /_dash-dependencies`` and the
callbacks the renderer fires on load (the pages router, the navbar ones, the study step), and
each answer is the ``submit_step`` callback (``POST /_dash-update-component`` with the answers
on screen and the timing the clientside callback would add) followed by the ``render_step``
callback. A participant reads the buttons and inputs of the screen the server rendered, waits
a short think time, answers, and goes on until the completion code. Like a browser, it resends
a request once on a new connection when the server closed the kept-alive one it reused (gunicorn
drops connections idle for ``--keepalive`` = 2 s); these resends are counted and printed. Any
other failure makes it reload the page (``?t=<token>``) and carry on from the step the server shows.

- **clean run**: every participant completes. ``sent`` counts the responses in submissions
  sent (a trial phase or an attention check is one response, a questionnaire one per item),
  ``acked`` those in submissions answered 200 with no error, ``stored`` the rows in
  ``trial_log`` + ``questionnaire_responses``. All three must be equal. ``p95_ms`` is the p95
  of every request a participant made.
- **kill run**: when 40 % of the expected responses are acknowledged, the gunicorn master and
  its workers get SIGKILL. The server is started again; before anyone may resume, every
  response acknowledged before the kill is looked up in the database (same participant, step
  and answer). Then the participants resume as a browser would (reload with ``?t=<token>``)
  and finish; the database must then hold exactly the responses of every participant, none
  twice. A consent in flight at the kill can enrol a participant whose browser never got the
  token; such orphans are counted (they have no responses).

SIGKILL tests a crash of the server processes, not a power cut: the database server (or the
SQLite file's page cache) survives. The last line is one JSON object: ``sent``, ``stored``,
``p95_ms`` (clean run), ``acked_before_kill``, ``stored_after_restart`` (kill run), then more.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import requests

ROOT = Path(__file__).resolve().parent.parent
STUDY_FILE = ROOT / "tests" / "study" / "data" / "small_study.yaml"
STUDY_ID = "trust-pilot"
SUBMIT_OUTPUT = "..study-token.data...study-refresh.data...study-error.children.."
ROUTER_OUTPUT = ".._pages_content.children..._pages_store.data.."


# --------------------------------------------------------------------------- server and database

def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """``gunicorn app.server:server`` on 127.0.0.1 in its own process group (so SIGKILL reaches all)."""

    def __init__(self, env: dict, port: int, workers: int, threads: int, log: Path, warm: str = "sync"):
        self.env, self.port, self.workers, self.threads, self.log, self.warm = env, port, workers, threads, log, warm
        self.proc: subprocess.Popen | None = None
        self.base = f"http://127.0.0.1:{port}"

    def start(self, timeout: float = 240) -> float:
        """Start and wait until ``GET /study/<id>`` answers; return the seconds it took."""
        t0 = time.perf_counter()
        cmd = [sys.executable, "-m", "gunicorn", "app.server:server", "--preload", "--workers", str(self.workers),
               "--threads", str(self.threads), "--timeout", "120", "--bind", f"127.0.0.1:{self.port}",
               "--no-control-socket"]
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(cmd, cwd=ROOT, stdout=log, stderr=log, start_new_session=True,
                                         env={**self.env, "CANDOR_WARM": self.warm})
        while True:
            try:
                if requests.get(f"{self.base}/study/{STUDY_ID}", timeout=5).status_code == 200:
                    return time.perf_counter() - t0
            except requests.RequestException:
                time.sleep(0.1)
            if self.proc.poll() is not None or time.perf_counter() - t0 > timeout:
                self.stop()
                raise SystemExit(f"gunicorn did not start; see {self.log}")

    def pids(self) -> list[int]:
        """The master and its workers (members of the process group)."""
        pgid = self.proc.pid
        out = []
        for d in Path("/proc").iterdir():
            if d.name.isdigit():
                try:
                    fields = (d / "stat").read_text().rsplit(")", 1)[1].split()
                except OSError:
                    continue
                if int(fields[2]) == pgid and fields[0] != "Z":
                    out.append(int(d.name))
        return sorted(out)

    def kill(self) -> int:
        """SIGKILL the master and every worker at once; wait until they are gone; return how many."""
        n = len(self.pids())
        os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=30)
        deadline = time.time() + 30
        while self.pids() and time.time() < deadline:
            time.sleep(0.05)
        return n

    def stop(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGTERM)
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=30)


@contextlib.contextmanager
def throwaway_database(tmp: Path, pg_url: str | None):
    """Yield ``(backend, url)`` of an empty database, dropped afterwards."""
    if not pg_url:
        yield "sqlite", f"sqlite:///{tmp / 'study.sqlite3'}"
        return
    from sqlalchemy import create_engine, text
    from sqlalchemy.engine import make_url

    from study.db import resolve_url

    base = make_url(resolve_url(pg_url))
    name = "candor_bench_" + uuid.uuid4().hex[:12]
    admin = create_engine(base, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    try:
        yield "postgresql", base.set(database=name).render_as_string(hide_password=False)
    finally:
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


# --------------------------------------------------------------------------- the simulated browser

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


@dataclass
class Submission:
    """One answer sent: which participant (token), step and phase, the answer, and its fate."""

    token: str | None
    step: object
    phase: str
    kind: str
    answers: dict
    rows: int
    acked: bool = False
    error: str = ""


@dataclass
class Ledger:
    """Everything the participants saw, shared between their threads."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    latency: list = field(default_factory=list)        # (kind, seconds)
    failures: Counter = field(default_factory=Counter)  # request kind / error -> count
    resent: Counter = field(default_factory=Counter)    # request kind -> resends after a dropped keep-alive
    submissions: list = field(default_factory=list)
    sent_rows: int = 0
    acked_rows: int = 0
    tokens: dict = field(default_factory=dict)         # participant number -> token
    codes: dict = field(default_factory=dict)          # participant number -> completion code
    reloads: int = 0
    in_flight: int = 0

    def add(self, sub: Submission) -> None:
        with self.lock:
            self.submissions.append(sub)
            self.sent_rows += sub.rows

    def ack(self, sub: Submission) -> None:
        with self.lock:
            sub.acked = True
            self.acked_rows += sub.rows


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
        out = self._callback("render", "study-body.children", {"id": "study-body", "property": "children"},
                             [{"id": "study-token", "property": "data", "value": self.token},
                              {"id": "study-refresh", "property": "data", "value": self.refresh}],
                             [{"id": "study-id", "property": "data", "value": STUDY_ID}])
        self.body = out["study-body"]["children"]

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
                  "client_ts": int(time.time() * 1000), "nonce": self.rng.random()}
        ids = [c["props"]["id"] for c in fields]
        state = [[{"id": i, "property": "value", "value": values[i["field"]]} for i in ids],
                 [{"id": i, "property": "id", "value": i} for i in ids],
                 {"id": "study-token", "property": "data", "value": self.token},
                 {"id": "study-id", "property": "data", "value": STUDY_ID},
                 {"id": "study-refresh", "property": "data", "value": self.refresh},
                 {"id": "study-recruitment", "property": "data", "value": {}}]  # a plain link: no platform ids
        out = self._callback("submit", SUBMIT_OUTPUT,
                             [{"id": "study-token", "property": "data"}, {"id": "study-refresh", "property": "data"},
                              {"id": "study-error", "property": "children"}],
                             [{"id": "study-timing", "property": "data", "value": timing}], state)
        error = out.get("study-error", {}).get("children", "")
        if error:
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


# --------------------------------------------------------------------------- checks on the database

def responses_per_participant(study, participant) -> int:
    from study import flow

    n = 0
    for s in flow.steps(study, participant):
        if s.kind == "trial":
            n += len(flow.trial_phases(study))
        elif s.kind == "attention":
            n += 1
        elif s.kind == "questionnaire":
            n += len(next(q for q in study.questionnaires if q.id == s.questionnaire_id).items)
    return n


def expected_rows(study) -> int:
    """Responses per participant for a between-subjects study (the trigger of the kill)."""
    per_trial = (1 if "forward_prediction" in study.tasks else 0) + (2 if "decision_with_advice" in study.tasks else 0)
    questionnaire_items = sum(len(q.items) for q in study.questionnaires)
    return len(study.stimuli) * per_trial + len(study.attention_checks) + questionnaire_items


def database_state(url: str, study) -> dict:
    """Counts read straight from the database (no server)."""
    from sqlalchemy import func, select
    from sqlalchemy.orm import Session

    from study.db import make_engine
    from study.models import Participant, QuestionnaireResponse, TrialLog

    eng = make_engine(url)
    try:
        with eng.connect() as conn:
            trial = conn.scalar(select(func.count()).select_from(TrialLog).where(TrialLog.study_id == study.id))
            quest = conn.scalar(select(func.count()).select_from(QuestionnaireResponse)
                                .where(QuestionnaireResponse.study_id == study.id))
            dup_t = conn.execute(select(TrialLog.participant_id, TrialLog.trial_index, TrialLog.phase)
                                 .group_by(TrialLog.participant_id, TrialLog.trial_index, TrialLog.phase)
                                 .having(func.count() > 1)).all()
        with Session(eng) as s:
            people = s.scalars(select(Participant).where(Participant.study_id == study.id)).all()
            by_arm = Counter((p.stratum, p.condition) for p in people)
            per = {p.resume_token_hash: (p, s.scalar(select(func.count()).select_from(TrialLog)
                                                    .where(TrialLog.participant_id == p.id))
                                         + s.scalar(select(func.count()).select_from(QuestionnaireResponse)
                                                    .where(QuestionnaireResponse.participant_id == p.id)))
                   for p in people}
            s.expunge_all()
    finally:
        eng.dispose()
    return {"stored": trial + quest, "trial_rows": trial, "questionnaire_rows": quest, "duplicates": len(dup_t),
            "participants": len(people), "completed": sum(p.status == "completed" for p in people),
            "by_arm": dict(by_arm), "per_participant": per}


def verify_acked(url: str, study, subs: list[Submission]) -> tuple[int, int, list[str]]:
    """Look up every acknowledged response: ``(rows acknowledged, rows found with the same answer, problems)``."""
    from sqlalchemy import select
    from sqlalchemy.orm import Session

    from study import flow
    from study.db import make_engine
    from study.models import Participant, QuestionnaireResponse, TrialLog
    from study.store import hash_token

    eng = make_engine(url)
    acked = found = 0
    problems = []
    try:
        with Session(eng) as s:
            for sub in subs:
                if not sub.acked or sub.rows == 0:
                    continue
                acked += sub.rows
                p = s.scalar(select(Participant).where(Participant.resume_token_hash == hash_token(sub.token)))
                if p is None:
                    problems.append(f"no participant for an acknowledged token ({sub.kind} step {sub.step})")
                    continue
                step = flow.steps(study, p)[int(sub.step)]
                if sub.kind in ("trial", "attention"):
                    got = s.scalar(select(TrialLog.response).where(
                        TrialLog.participant_id == p.id, TrialLog.trial_index == step.trial_index,
                        TrialLog.phase == sub.phase))
                    want = str(sub.answers.get("response"))
                    if got == want:
                        found += 1
                    else:
                        problems.append(f"{p.id} step {sub.step} {sub.phase}: stored {got!r}, acknowledged {want!r}")
                else:
                    q = QuestionnaireResponse
                    rows = dict(s.execute(select(q.item_label, q.response).where(
                        QuestionnaireResponse.participant_id == p.id,
                        QuestionnaireResponse.block_index == step.block_index,
                        QuestionnaireResponse.questionnaire_id == step.questionnaire_id)).all())
                    for k, v in sub.answers.items():
                        if k.startswith("q:") and rows.get(k[2:]) == v:
                            found += 1
                        elif k.startswith("q:"):
                            problems.append(f"{p.id} {step.questionnaire_id}/{k[2:]}: stored {rows.get(k[2:])!r}, "
                                            f"acknowledged {v!r}")
    finally:
        eng.dispose()
    return acked, found, problems


# --------------------------------------------------------------------------- one run

@dataclass
class RunResult:
    name: str
    backend: str
    participants: int
    completed_clients: int
    sent: int
    acked: int
    db: dict
    expected_stored: int
    latency: list
    failures: Counter
    wall_s: float
    start_s: float
    kill: dict | None = None
    problems: list = field(default_factory=list)
    resent: Counter = field(default_factory=Counter)

    @property
    def stored(self) -> int:
        return self.db["stored"]

    def p(self, q: float, kind: str | None = None) -> float:
        ms = [t * 1000 for k, t in self.latency if kind is None or k == kind]
        return float(np.percentile(ms, q)) if ms else float("nan")


def run(name: str, *, participants: int, pg_url: str | None, kill_at: float | None, workers: int, threads: int,
        think: tuple[float, float], time_limit: float, warm: str = "sync", keep_log: str | None = None) -> RunResult:
    """Start a server over a throwaway database, let ``participants`` take the study, check the database.

    ``kill_at``: the share of the expected responses acknowledged at which the server is
    SIGKILLed and restarted (None: no kill).
    """
    from study.schema import load_study

    study = load_study(STUDY_FILE)
    tmp = Path(tempfile.mkdtemp(prefix="candor-study-load-"))
    try:
        (tmp / "studies").mkdir()
        shutil.copy(STUDY_FILE, tmp / "studies" / f"{STUDY_ID}.yaml")
        with throwaway_database(tmp, pg_url) as (backend, url):
            env = {**os.environ, "DATABASE_URL": url, "CANDOR_STUDY_DIR": str(tmp / "studies"),
                   "CANDOR_SECRET_KEY": secrets.token_hex(16), "CANDOR_CACHE_DIR": str(tmp / "cache"),
                   "CANDOR_ENROL_PER_MINUTE": "1000"}  # every simulated participant comes from 127.0.0.1
            env.pop("CANDOR_RESEARCHER_PASSWORD", None)
            server = Server(env, free_port(), workers, threads, tmp / "gunicorn.log", warm=warm)
            try:
                start_s = server.start()
                ledger, gate = Ledger(), threading.Event()
                gate.set()
                t0 = time.time()
                deadline = t0 + time_limit
                people = [Participant(i, server.base, ledger, gate, think=think, deadline=deadline)
                          for i in range(participants)]
                for p in people:
                    p.start()
                kill = None
                if kill_at is not None:
                    target = kill_at * participants * expected_rows(study)
                    # kill mid-request: once the target is reached, wait (10 s at most) for requests in flight
                    want_in_flight, t_target = max(1, min(5, participants // 10)), None
                    while time.time() < deadline and any(p.is_alive() for p in people):
                        if ledger.acked_rows >= target:
                            t_target = t_target or time.time()
                            if ledger.in_flight >= want_in_flight or time.time() - t_target > 10:
                                break
                        time.sleep(0.002)
                    t_kill = time.time() - t0
                    active, in_flight = sum(1 for p in people if p.is_alive()), ledger.in_flight
                    n_killed = server.kill()
                    gate.clear()  # from now on a participant's next request waits until the check is done
                    time.sleep(0.5)  # let threads book responses that arrived before the kill
                    with ledger.lock:
                        acked_subs = [s for s in ledger.submissions if s.acked]
                        acked_rows = ledger.acked_rows
                        sent_rows = ledger.sent_rows
                    restart_s = server.start()
                    acked, found, problems = verify_acked(url, study, acked_subs)
                    if acked != acked_rows:
                        problems.append(f"ledger: {acked_rows} rows acknowledged, {acked} in acknowledged submissions")
                    kill = {"t_s": t_kill, "processes": n_killed, "active": active, "in_flight": in_flight,
                            "acked": acked,
                            "found": found, "sent_before": sent_rows, "restart_s": restart_s, "problems": problems}
                    gate.set()
                for p in people:
                    p.join(timeout=max(0.0, deadline - time.time()) + 5)
                wall = time.time() - t0
            finally:
                server.stop()
                if keep_log:
                    shutil.copy(server.log, keep_log)
            db = database_state(url, study)
        from study.store import hash_token

        tokens = {hash_token(t) for t in ledger.tokens.values()}
        expected = sum(responses_per_participant(study, p) for h, (p, _) in db["per_participant"].items()
                       if h in tokens)
        problems = [f"participant {p.n}: {p.error}" for p in people if not p.done]
        for h, (p, n) in db["per_participant"].items():
            if h in tokens and n != responses_per_participant(study, p):
                problems.append(f"{p.id}: {n} responses stored, {responses_per_participant(study, p)} expected")
            if h not in tokens and n:
                problems.append(f"{p.id}: orphan enrolment with {n} responses")
        if db["duplicates"]:
            problems.append(f"{db['duplicates']} duplicated trial-log keys")
        return RunResult(name, backend, participants, sum(p.done for p in people), ledger.sent_rows,
                         ledger.acked_rows, db, expected, ledger.latency, ledger.failures, wall, start_s, kill,
                         problems, ledger.resent)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


# --------------------------------------------------------------------------- report

def report(clean: RunResult, killed: RunResult | None, args) -> dict:
    from study.schema import load_study

    study_rows = expected_rows(load_study(STUDY_FILE))
    print(f"study_load: {clean.participants} participants at once, study {STUDY_ID} ({study_rows} responses each), "
          f"gunicorn --preload {args.workers} workers x {args.threads} threads, {clean.backend}, "
          f"think time {args.think[0]}-{args.think[1]} s, CPU cores: {os.cpu_count()}")
    print(f"{'run':<13}{'done':>6}{'sent':>7}{'acked':>7}{'stored':>8}{'expect':>8}{'orphan':>8}{'requests':>10}"
          f"{'p50 ms':>9}{'p95 ms':>9}{'max ms':>9}{'fail':>6}{'wall s':>8}")
    for r in (clean, killed):
        if r is None:
            continue
        orphans = r.db["participants"] - r.completed_clients
        print(f"{r.name:<13}{r.completed_clients:>6}{r.sent:>7}{r.acked:>7}{r.stored:>8}{r.expected_stored:>8}"
              f"{orphans:>8}{len(r.latency):>10}{r.p(50):>9.1f}{r.p(95):>9.1f}{r.p(100):>9.1f}"
              f"{sum(r.failures.values()):>6}{r.wall_s:>8.1f}")
    print(f"latency by request (clean run), ms: " + ", ".join(
        f"{k} p50 {clean.p(50, k):.0f} / p95 {clean.p(95, k):.0f} (n={sum(1 for kk, _ in clean.latency if kk == k)})"
        for k in ("page", "layout", "dependencies", "router", "navbar", "row-status", "render", "submit")))
    arms = sorted(clean.db["by_arm"].items())
    print("enrolment (stratum, condition): " + ", ".join(f"{s}/{c} {n}" for (s, c), n in arms))
    if killed is not None and killed.kill:
        k = killed.kill
        print(f"kill: SIGKILL to {k['processes']} gunicorn processes (master + workers) {k['t_s']:.1f} s into the run, "
              f"{k['active']} participants mid-study, {k['in_flight']} requests in flight; {k['sent_before']} responses "
              f"sent, {k['acked']} acknowledged before the kill; after restart ({k['restart_s']:.1f} s) {k['found']} "
              f"of them stored with the same answer")
        print(f"kill run failures seen by participants: {dict(killed.failures) or 'none'}")
    problems = clean.problems + (killed.problems + killed.kill["problems"] if killed else [])
    if clean.failures:
        print(f"clean run failures: {dict(clean.failures)}")
    for r in (clean, killed):
        if r is not None and r.resent:
            print(f"{r.name}: requests resent once on a new connection after the server dropped a kept-alive one "
                  f"(as a browser does): {dict(r.resent)}")
    for p in problems[:20]:
        print(f"PROBLEM: {p}")
    server_errors = {k: n for r in (clean, killed) if r for k, n in r.failures.items() if "HTTP 5" in k}
    problems += [f"{n} x {k}" for k, n in server_errors.items()]
    ok = (clean.sent == clean.acked == clean.stored == clean.expected_stored
          and clean.completed_clients == clean.participants and not clean.failures and not problems)
    if killed is not None:
        ok = ok and killed.kill["found"] == killed.kill["acked"] and killed.stored == killed.expected_stored \
            and killed.completed_clients == killed.participants
    print("PASS" if ok else "FAIL")
    result = {"sent": clean.sent, "stored": clean.stored, "p95_ms": round(clean.p(95), 1),
              "acked_before_kill": killed.kill["acked"] if killed else None,
              "stored_after_restart": killed.kill["found"] if killed else None,
              "ok": ok, "backend": clean.backend, "participants": clean.participants,
              "completed": clean.completed_clients, "acked": clean.acked, "p50_ms": round(clean.p(50), 1),
              "p95_submit_ms": round(clean.p(95, "submit"), 1), "p95_render_ms": round(clean.p(95, "render"), 1),
              "requests": len(clean.latency), "resent": sum(clean.resent.values()), "wall_s": round(clean.wall_s, 1),
              "load_avg_1m": round(os.getloadavg()[0], 1)}
    if killed is not None:
        result.update({"kill_run_sent": killed.sent, "kill_run_acked": killed.acked, "kill_run_stored": killed.stored,
                       "kill_run_expected": killed.expected_stored, "kill_run_completed": killed.completed_clients,
                       "kill_run_orphans": killed.db["participants"] - killed.completed_clients,
                       "kill_t_s": round(killed.kill["t_s"], 1), "restart_s": round(killed.kill["restart_s"], 1)})
    print(json.dumps(result))
    return result


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--participants", type=int, default=50)
    ap.add_argument("--workers", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--think", type=float, nargs=2, default=(0.2, 1.0), metavar=("MIN_S", "MAX_S"))
    ap.add_argument("--kill-at", type=float, default=0.4, help="share of responses acknowledged at the kill")
    ap.add_argument("--time-limit", type=float, default=300, help="seconds per run")
    ap.add_argument("--no-kill", action="store_true")
    ap.add_argument("--keep-logs", metavar="DIR", help="copy the gunicorn logs here")
    args = ap.parse_args(argv)
    pg = os.environ.get("CANDOR_BENCH_POSTGRES_URL") or None
    common = dict(participants=args.participants, pg_url=pg, workers=args.workers, threads=args.threads,
                  think=tuple(args.think), time_limit=args.time_limit)
    logs = Path(args.keep_logs) if args.keep_logs else None
    if logs:
        logs.mkdir(parents=True, exist_ok=True)
    clean = run("clean", kill_at=None, keep_log=logs and logs / "clean.log", **common)
    killed = None if args.no_kill else run("kill+resume", kill_at=args.kill_at,
                                           keep_log=logs and logs / "kill.log", **common)
    result = report(clean, killed, args)
    if not result["ok"]:
        sys.exit(1)
    return result


if __name__ == "__main__":
    main()
