"""The server of :mod:`benchmarks.load`: the Procfile's gunicorn (``gunicorn -c gunicorn.conf.py``) on
127.0.0.1 over a store, with a users file of viewer accounts, in its own process group."""
from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import requests

from benchmarks.study_load_parts.server import free_port, group_pids, stop_group

ROOT = Path(__file__).resolve().parents[2]
PASSWORD = "load-benchmark-viewer"


def build_store(folder: Path, rows: str | None) -> Path:
    """``python -m app build`` of the bundled sample into ``folder/store`` with ``--rows rows`` if given (kept between
    runs: a build costs minutes)."""
    out = folder / "store"
    if (out / "manifest.json").exists():
        return out
    cmd = [sys.executable, "-m", "app", "build", "--out", str(out)] + (["--rows", str(rows)] if rows else [])
    subprocess.run(cmd, cwd=ROOT, check=True, stdout=subprocess.DEVNULL, env=_clean_env())
    return out


def users_file(folder: Path, n: int) -> tuple[Path, list[str]]:
    """A users file of ``n`` viewers (``viewer1`` ...), all with :data:`PASSWORD` (written once, then grown)."""
    from accounts.users import add_user, load_users

    path = folder / "users"
    have = load_users(path) if path.exists() else {}
    names = [f"viewer{i + 1}" for i in range(n)]
    for name in names:
        if name not in have:
            add_user(path, name, "viewer", PASSWORD)
    return path, names


def _clean_env() -> dict:
    return {k: v for k, v in os.environ.items() if not k.startswith("CANDOR_") and k != "WEB_CONCURRENCY"}


class Gunicorn:
    """``gunicorn -c gunicorn.conf.py --bind 127.0.0.1:PORT`` (2 workers x 16 threads unless ``WEB_CONCURRENCY`` /
    ``CANDOR_THREADS`` say otherwise), over ``store``, with fresh state, cache and session folders."""

    def __init__(self, folder: Path, store: Path, users: Path, *, config: str = "gunicorn.conf.py",
                 workers: int | None = None, threads: int | None = None):
        self.folder, self.port, self.config = folder, free_port(), config
        self.base = f"http://127.0.0.1:{self.port}"
        run = folder / f"run-{self.port}"
        run.mkdir(parents=True)
        live_store = run / "store"  # rows the store lacks are added to it: each run starts from the built store
        shutil.copytree(store, live_store)
        self.env = {**_clean_env(), "CANDOR_STORE": str(live_store), "CANDOR_USERS_FILE": str(users),
                    "CANDOR_ALLOWED_HOSTS": "127.0.0.1", "CANDOR_CACHE_DIR": str(run / "cache"),
                    "CANDOR_STATE_DIR": str(run / "state"), "CANDOR_UPLOAD_DIR": str(run / "uploads"),
                    "CANDOR_SESSION_DB": str(run / "sessions.sqlite3"), "CANDOR_LOGIN_LIMIT": "1000",
                    "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
        if workers:
            self.env["WEB_CONCURRENCY"] = str(workers)
        if threads:
            self.env["CANDOR_THREADS"] = str(threads)
        self.log = run / "gunicorn.log"
        self.proc: subprocess.Popen | None = None

    def start(self, timeout: float = 300) -> float:
        """Start and wait until ``/_candor/ready`` answers 200 (the store read, the rows drawn); return seconds."""
        t0 = time.perf_counter()
        cmd = [sys.executable, "-m", "gunicorn", "-c", self.config, "--bind", f"127.0.0.1:{self.port}"]
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(cmd, cwd=ROOT, stdout=log, stderr=log, start_new_session=True, env=self.env)
        while time.perf_counter() - t0 < timeout:
            with contextlib.suppress(requests.RequestException):
                if requests.get(self.base + "/_candor/ready", timeout=5).status_code == 200:
                    return time.perf_counter() - t0
            if self.proc.poll() is not None:
                break
            time.sleep(0.2)
        self.stop()
        raise SystemExit(f"benchmarks.load: gunicorn did not get ready; see {self.log}")

    def pids(self) -> list[int]:
        """The master, its workers and anything they forked (members of the process group), zombies left out."""
        return group_pids(self.proc.pid)

    def memory_mb(self) -> dict:
        """Sum over the process tree of resident memory now (``VmRSS``) and at its peak (``VmHWM``), in MB."""
        rss = hwm = 0
        for pid in self.pids():
            with contextlib.suppress(OSError):
                for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                    if line.startswith("VmRSS:"):
                        rss += int(line.split()[1])
                    elif line.startswith("VmHWM:"):
                        hwm += int(line.split()[1])
        return {"rss_mb": round(rss / 1024, 1), "hwm_mb": round(hwm / 1024, 1), "processes": len(self.pids())}

    def cpu_s(self) -> float:
        """User + system CPU seconds used so far by the process tree (its live members)."""
        tick = os.sysconf("SC_CLK_TCK")
        total = 0
        for pid in self.pids():
            with contextlib.suppress(OSError):
                fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
                total += int(fields[11]) + int(fields[12])
        return total / tick

    def stop(self) -> None:
        stop_group(self.proc)
