"""Study mode under load: 50 simulated participants at once through gunicorn, then a crash mid-study.

Run ``python -m benchmarks.study_load`` (sample models built). Loopback only, bounded in count
and time. Each run starts ``gunicorn app.serve.server:server`` as the Procfile does (``--preload``,
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

- **database outage** (issue 26): when 40 % of the expected responses are acknowledged, the database
  becomes unreachable while the server runs on (PostgreSQL stopped for 5 s and started again,
  ``--pg-dir``; SQLite write-locked by another process for 12 s, past its 10 s busy timeout). A
  participant whose answer is answered "being saved" re-sends the same request (same idempotency
  key) every 2 s, as the page does, and a step screen answered "one moment" is rendered again.
  ``participant_errors`` counts every error sentence (other than "being saved") and HTTP 5xx a
  participant got; it must be 0, every participant must finish, and sent = acked = stored, with no
  duplicate. ``--outage-only`` runs it alone.

``--quick`` (for CI; its figures are not the measured ones): 3 participants, one worker, think times of
0-50 ms; both runs.

SIGKILL tests a crash of the server processes, not a power cut: the database server (or the
SQLite file's page cache) survives. The last line is one JSON object: ``sent``, ``stored``,
``p95_ms`` (clean run), ``acked_before_kill``, ``stored_after_restart`` (kill run),
``duplicates`` and ``participant_errors`` (all runs), ``outage`` (``sent``, ``acked``, ``stored``,
``duplicates``, ``participant_errors`` of the outage run), then more.
"""
from __future__ import annotations

import argparse
import json
import os
import secrets
import shutil
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from benchmarks.study_load_parts import STUDY_FILE, STUDY_ID
from benchmarks.study_load_parts.database_checks import (database_state, expected_rows, responses_per_participant,
                                                         verify_acked)
from benchmarks.study_load_parts.ledger import Ledger
from benchmarks.study_load_parts.participant import Participant
from benchmarks.study_load_parts.server import Outage, Server, free_port, throwaway_database


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
    outage: dict | None = None
    participant_errors: int = 0

    @property
    def stored(self) -> int:
        return self.db["stored"]

    def p(self, q: float, kind: str | None = None) -> float:
        ms = [t * 1000 for k, t in self.latency if kind is None or k == kind]
        return float(np.percentile(ms, q)) if ms else float("nan")


def run(name: str, *, participants: int, pg_url: str | None, kill_at: float | None, workers: int, threads: int,
        think: tuple[float, float], time_limit: float, warm: str = "sync", keep_log: str | None = None,
        outage_at: float | None = None, outage_s: float = 5.0, pg_dir: str | None = None) -> RunResult:
    """Start a server over a throwaway database, let ``participants`` take the study, check the database.

    ``kill_at``: the share of the expected responses acknowledged at which the server is
    SIGKILLed and restarted (None: no kill). ``outage_at``: the share at which the database
    becomes unreachable for ``outage_s`` seconds while the server keeps running (:class:`Outage`;
    ``pg_dir``: the PostgreSQL server's ``CANDOR_PG_DIR``).
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
                outage = None
                if outage_at is not None:
                    cut = Outage(backend, url, pg_dir)
                    target = outage_at * participants * expected_rows(study)
                    while time.time() < deadline and any(p.is_alive() for p in people) and ledger.acked_rows < target:
                        time.sleep(0.01)
                    t_out, acked_at = time.time() - t0, ledger.acked_rows
                    cut.begin()
                    time.sleep(outage_s)
                    cut.end()
                    outage = {"t_s": t_out, "seconds": outage_s, "acked_before": acked_at,
                              "acked_during": ledger.acked_rows - acked_at}
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
        if outage is not None:
            outage.update(saving=ledger.saving, waiting_screens=ledger.waiting_screens)
        return RunResult(name, backend, participants, sum(p.done for p in people), ledger.sent_rows,
                         ledger.acked_rows, db, expected, ledger.latency, ledger.failures, wall, start_s, kill,
                         problems, ledger.resent, outage, ledger.participant_errors)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


# --------------------------------------------------------------------------- report

def report(clean: RunResult, killed: RunResult | None, args, cut: RunResult | None = None) -> dict:
    """Print the table and the findings; return the JSON line's object. ``clean`` may be the outage run alone."""
    from study.schema import load_study

    study_rows = expected_rows(load_study(STUDY_FILE))
    print(f"study_load: {clean.participants} participants at once, study {STUDY_ID} ({study_rows} responses each), "
          f"gunicorn --preload {args.workers} workers x {args.threads} threads, {clean.backend}, "
          f"think time {args.think[0]}-{args.think[1]} s, CPU cores: {os.cpu_count()}")
    print(f"{'run':<13}{'done':>6}{'sent':>7}{'acked':>7}{'stored':>8}{'expect':>8}{'orphan':>8}{'requests':>10}"
          f"{'p50 ms':>9}{'p95 ms':>9}{'max ms':>9}{'fail':>6}{'wall s':>8}")
    for r in (clean, killed, cut if cut is not clean else None):
        if r is None:
            continue
        orphans = r.db["participants"] - r.completed_clients
        print(f"{r.name:<13}{r.completed_clients:>6}{r.sent:>7}{r.acked:>7}{r.stored:>8}{r.expected_stored:>8}"
              f"{orphans:>8}{len(r.latency):>10}{r.p(50):>9.1f}{r.p(95):>9.1f}{r.p(100):>9.1f}"
              f"{sum(r.failures.values()):>6}{r.wall_s:>8.1f}")
    print("latency by request (clean run), ms: " + ", ".join(
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
    if cut is not None:
        o = cut.outage
        how = "PostgreSQL stopped and started again" if cut.backend == "postgresql" else \
            "SQLite file write-locked by another process (busy timeout 10 s)"
        print(f"outage: {how} for {o['seconds']:g} s, {o['t_s']:.1f} s into the run ({o['acked_before']} responses "
              f"acknowledged before); answers re-sent while 'being saved': {o['saving']}, step screens shown "
              f"'one moment' and rendered again: {o['waiting_screens']}; error sentences or HTTP 5xx shown to "
              f"participants: {cut.participant_errors}")
    problems = clean.problems + (killed.problems + killed.kill["problems"] if killed else []) + \
        (cut.problems if cut is not None and cut is not clean else [])
    if clean.failures:
        print(f"clean run failures: {dict(clean.failures)}")
    for r in (clean, killed):
        if r is not None and r.resent:
            print(f"{r.name}: requests resent once on a new connection after the server dropped a kept-alive one "
                  f"(as a browser does): {dict(r.resent)}")
    for p in problems[:20]:
        print(f"PROBLEM: {p}")
    runs = [r for r in (clean, killed, cut if cut is not clean else None) if r is not None]
    server_errors = {k: n for r in runs for k, n in r.failures.items() if "HTTP 5" in k}
    problems += [f"{n} x {k}" for k, n in server_errors.items()]
    ok = (clean.sent == clean.acked == clean.stored == clean.expected_stored
          and clean.completed_clients == clean.participants and not clean.failures and not problems
          and not sum(r.participant_errors for r in runs))
    if cut is not None:
        ok = ok and cut.sent == cut.acked == cut.stored == cut.expected_stored and not cut.db["duplicates"] \
            and cut.completed_clients == cut.participants
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
              "load_avg_1m": round(os.getloadavg()[0], 1),
              "duplicates": sum(r.db["duplicates"] for r in runs),
              "participant_errors": sum(r.participant_errors for r in runs)}
    if cut is not None:
        result["outage"] = {"backend": cut.backend, "seconds": cut.outage["seconds"], "sent": cut.sent,
                            "acked": cut.acked, "stored": cut.stored, "duplicates": cut.db["duplicates"],
                            "participant_errors": cut.participant_errors, "resent_while_saving": cut.outage["saving"],
                            "completed": cut.completed_clients, "participants": cut.participants}
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
    ap.add_argument("--outage-at", type=float, default=0.4,
                    help="share of responses acknowledged when the database becomes unreachable")
    ap.add_argument("--outage-s", type=float, default=None,
                    help="seconds the database is unreachable (default 5 on PostgreSQL; 12 on SQLite, past its 10 s "
                         "busy timeout)")
    ap.add_argument("--no-outage", action="store_true")
    ap.add_argument("--outage-only", action="store_true", help="run the database outage alone (short)")
    ap.add_argument("--pg-dir", default=os.environ.get("CANDOR_BENCH_PG_DIR"),
                    help="CANDOR_PG_DIR of the PostgreSQL server (scripts/start_postgres.sh), to stop and start it")
    ap.add_argument("--keep-logs", metavar="DIR", help="copy the gunicorn logs here")
    ap.add_argument("--quick", action="store_true", help="3 participants, one worker: for CI (figures not asserted)")
    args = ap.parse_args(argv)
    if args.quick:
        args.participants, args.workers, args.think = 3, 1, (0.0, 0.05)
    pg = os.environ.get("CANDOR_BENCH_POSTGRES_URL") or None
    common = dict(participants=args.participants, pg_url=pg, workers=args.workers, threads=args.threads,
                  think=tuple(args.think), time_limit=args.time_limit)
    logs = Path(args.keep_logs) if args.keep_logs else None
    if logs:
        logs.mkdir(parents=True, exist_ok=True)
    cut = None
    if not args.no_outage or args.outage_only:
        seconds = args.outage_s if args.outage_s is not None else (5.0 if pg else 12.0)
        cut = run("db outage", kill_at=None, outage_at=args.outage_at, outage_s=seconds, pg_dir=args.pg_dir,
                  keep_log=logs and logs / "outage.log", **common)
    if args.outage_only:
        result = report(cut, None, args, cut)
    else:
        clean = run("clean", kill_at=None, keep_log=logs and logs / "clean.log", **common)
        killed = None if args.no_kill else run("kill+resume", kill_at=args.kill_at,
                                               keep_log=logs and logs / "kill.log", **common)
        result = report(clean, killed, args, cut)
    if not result["ok"]:
        sys.exit(1)
    return result


if __name__ == "__main__":
    main()
