"""Start ``python -m app`` as a real server process for browser tests."""
from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import requests

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def _serving(cmd: list[str], env: dict, log_path: Path, ready: str, timeout: float):
    """Run ``cmd`` (which binds the port in it); yield once ``GET ready`` answers 200; stop it after.

    The server writes to ``log_path`` (a file, not a pipe: a full pipe would block the server), and a
    server that exits before answering raises with that log.
    """
    port = free_port()
    cmd = [c.replace("{port}", str(port)) for c in cmd]
    with open(log_path, "w") as log:
        proc = subprocess.Popen(cmd, cwd=ROOT, env={**os.environ, "PYTHONUNBUFFERED": "1", **env},
                                stdout=log, stderr=subprocess.STDOUT)
        base = f"http://127.0.0.1:{port}"
        try:
            deadline = time.time() + timeout
            while time.time() < deadline:
                try:
                    if requests.get(base + ready, timeout=2).status_code == 200:
                        break
                except requests.RequestException:  # not up yet, or held past the timeout under load (a ReadTimeout)
                    time.sleep(0.3)
                if proc.poll() is not None:
                    raise RuntimeError(f"server exited: {Path(log_path).read_text()}")
            yield base
        finally:
            proc.terminate()
            proc.wait(timeout=30)


def running_app(args: list[str], env: dict, log_path: Path, timeout: float = 120):
    """Serve ``python -m app ARGS --port P``; yield its base URL once ``GET /`` answers."""
    return _serving([sys.executable, "-m", "app", *args, "--port", "{port}"], env, log_path, "/", timeout)


def running_gunicorn(env: dict, log_path: Path, workers: int = 2, timeout: float = 180):
    """Serve the app as the Procfile does (``gunicorn app.serve.server:server --preload``, several workers).

    Yields the base URL once ``/_candor/ready`` answers 200 (``CANDOR_WARM=sync``: workers fork warm).
    """
    cmd = [sys.executable, "-m", "gunicorn", "app.serve.server:server", "--preload", "--workers", str(workers),
           "--threads", "2", "--bind", "127.0.0.1:{port}", "--timeout", "120"]
    return _serving(cmd, {"CANDOR_WARM": "sync", **env}, log_path, "/_candor/ready", timeout)
