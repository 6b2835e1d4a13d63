"""The server of :mod:`benchmarks.study_load`: gunicorn on 127.0.0.1 in its own process group, over a
throwaway database (a SQLite file, or a fresh PostgreSQL database dropped afterwards)."""
from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

import requests

from benchmarks.study_load_parts import ROOT, STUDY_ID


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def group_pids(pgid: int) -> list[int]:
    """Live members of process group ``pgid`` (a server started with ``start_new_session``), zombies left out."""
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


def stop_group(proc: subprocess.Popen | None) -> None:
    """SIGTERM ``proc``'s process group, SIGKILL after 30 s; nothing if it is not running."""
    if proc is None or proc.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)


class Server:
    """``gunicorn app.serve.server:server`` on 127.0.0.1 in its own process group (so SIGKILL reaches all)."""

    def __init__(self, env: dict, port: int, workers: int, threads: int, log: Path, warm: str = "sync"):
        self.env, self.port, self.workers, self.threads, self.log, self.warm = env, port, workers, threads, log, warm
        self.proc: subprocess.Popen | None = None
        self.base = f"http://127.0.0.1:{port}"

    def start(self, timeout: float = 240) -> float:
        """Start and wait until ``GET /study/<id>`` answers; return the seconds it took."""
        t0 = time.perf_counter()
        cmd = [sys.executable, "-m", "gunicorn", "app.serve.server:server", "--preload", "--workers", str(self.workers),
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
        return group_pids(self.proc.pid)

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
        stop_group(self.proc)


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
    admin = create_engine(base, isolation_level="AUTOCOMMIT", pool_pre_ping=True)  # survives the outage run
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    try:
        yield "postgresql", base.set(database=name).render_as_string(hide_password=False)
    finally:
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


class Outage:
    """Make the study database unreachable for a while, then bring it back.

    PostgreSQL: the server is stopped (``scripts/start_postgres.sh --pause DIR``, a fast shutdown
    that drops every connection) and started again on the same port (``--resume DIR``); ``DIR`` is the
    ``CANDOR_PG_DIR`` it was started in. SQLite: another process holds the file's write lock
    (``BEGIN EXCLUSIVE``); the server's writers wait SQLite's busy timeout (10 s) and then fail with
    ``database is locked``, so a SQLite outage shorter than that only delays answers.
    """

    def __init__(self, backend: str, url: str, pg_dir: str | None):
        if backend == "postgresql" and not pg_dir:
            raise SystemExit("study_load: an outage on PostgreSQL needs --pg-dir (the CANDOR_PG_DIR of "
                             "scripts/start_postgres.sh) to stop and start that server")
        self.backend, self.url, self.pg_dir = backend, url, pg_dir
        self._lock = None

    def begin(self) -> None:
        if self.backend == "postgresql":
            subprocess.run(["bash", str(ROOT / "scripts" / "start_postgres.sh"), "--pause", self.pg_dir],
                           check=True, capture_output=True, timeout=120)
            return
        import sqlite3

        from sqlalchemy.engine import make_url

        self._lock = sqlite3.connect(make_url(self.url).database, timeout=60, isolation_level=None)
        self._lock.execute("BEGIN EXCLUSIVE")

    def end(self) -> None:
        if self.backend == "postgresql":
            subprocess.run(["bash", str(ROOT / "scripts" / "start_postgres.sh"), "--resume", self.pg_dir],
                           check=True, capture_output=True, timeout=120)
            return
        self._lock.execute("ROLLBACK")
        self._lock.close()
