"""Shared e2e fixtures: one `python -m app` server per session, one headless Chromium per module."""
from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import requests

from tests.e2e.browser import chromium_driver

ROOT = Path(__file__).resolve().parents[2]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def server(tmp_path_factory):
    """Base URL of the app served by ``python -m app`` (the bundled sample), background jobs enabled."""
    port = _free_port()
    log_path = tmp_path_factory.mktemp("server") / "server.log"  # a file, not a pipe: a full pipe would block the server
    log = open(log_path, "w")
    env = {**os.environ, "PYTHONUNBUFFERED": "1",
           "CANDOR_TEXT_DIR": str(tmp_path_factory.mktemp("candor-text")),
           "CANDOR_CACHE_DIR": str(tmp_path_factory.mktemp("candor-background"))}
    proc = subprocess.Popen([sys.executable, "-m", "app", "--port", str(port)], cwd=ROOT, env=env,
                            stdout=log, stderr=subprocess.STDOUT, text=True)
    base = f"http://127.0.0.1:{port}"
    deadline = time.time() + 120
    while time.time() < deadline:
        try:
            if requests.get(base + "/", timeout=2).status_code == 200:
                break
        except requests.ConnectionError:
            time.sleep(0.3)
        if proc.poll() is not None:
            raise RuntimeError(f"server exited: {log_path.read_text()}")
    yield base
    proc.terminate()
    proc.wait(timeout=20)
    log.close()


@pytest.fixture(scope="module")
def browser():
    with chromium_driver(width=1400, height=1000) as driver:
        yield driver
