"""``scripts/start_postgres.sh --stop DIR`` stops exactly the server started in DIR (issue 27).

The script used to remember "the PostgreSQL started last" in ``/tmp/candor-pg.last`` and ``scripts/test``
stopped that one, so a second run on the machine stopped the first run's server and left its own running.
Runs the script for real (skipped where Debian's PostgreSQL binaries are not installed).
"""
from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "start_postgres.sh"

pytestmark = pytest.mark.skipif(not glob.glob("/usr/lib/postgresql/*/bin/pg_ctl")
                                or (os.geteuid() == 0 and not shutil.which("runuser")),
                                reason="no PostgreSQL binaries (Debian package postgresql)")


def _start(folder: Path) -> str:
    out = subprocess.run(["bash", str(SCRIPT)], env=dict(os.environ, CANDOR_PG_DIR=str(folder)),
                         capture_output=True, text=True, timeout=300, check=True)
    return out.stdout.strip()


def _stop(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", str(SCRIPT), "--stop", *args], capture_output=True, text=True, timeout=120)


def _answers(url: str) -> bool:
    port = int(url.rsplit(":", 1)[1].split("/")[0])
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


def test_each_run_stops_the_server_it_started():
    first, second = (Path(tempfile.mkdtemp(prefix="candor-pg.")) for _ in range(2))
    try:
        url_a = _start(first)
        url_b = _start(second)  # a second run on the machine, its own folder and (free) port
        assert url_a != url_b and _answers(url_a) and _answers(url_b)
        assert _stop().returncode == 2  # no "server started last" to guess at
        assert _stop(str(first)).returncode == 0
        assert not first.exists() and not _answers(url_a)
        assert _answers(url_b)  # the other run's server keeps running
        import psycopg

        with psycopg.connect(url_b, connect_timeout=30) as conn:
            assert conn.execute("SELECT 1").fetchone() == (1,)
        assert _stop(str(second)).returncode == 0
        assert not second.exists() and not _answers(url_b)
    finally:
        for folder in (first, second):
            if folder.exists():
                _stop(str(folder))
