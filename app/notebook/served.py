"""The dashboard a notebook opens: ``python -m app`` with the notebook's own flags, in a process of its own.

A notebook kernel is a long-lived process that re-runs cells; the server installs its workspace, its settings and
its Dash app for the whole process (``create_app``). Served from a child process, the dashboard is the command
line's, loaded by the same path with the same trust rules, and stopping it (:meth:`Dashboard.stop`) leaves the
notebook's state as it was.
"""
from __future__ import annotations

import json
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

from workspace.errors import CandorError
from workspace.settings import ROOT, Settings

POLL_S = 0.25
"""How often :func:`serve` looks whether the server answers (seconds)."""


def free_port(host: str) -> int:
    """A TCP port the operating system says is free on ``host`` now (never a fixed one)."""
    with socket.socket() as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


def flags(settings: Settings) -> list[str]:
    """The ``python -m app`` flags that load what ``settings`` name (none for the bundled sample)."""
    if not settings.model:
        return []
    out = ["--model", str(settings.model), "--data", str(settings.data), "--target", str(settings.target)]
    if settings.target_class:
        out += ["--target-class", settings.target_class]
    if settings.features_file:
        out += ["--features-file", str(settings.features_file)]
    if settings.trust_pickle:
        out.append("--trust-model-code")
    t = settings.torch
    options = {"--torch-class": t.model_class, "--torch-output": t.output,
               "--classes": ",".join(map(str, t.classes)) if t.classes is not None else None,
               "--torch-kwargs": json.dumps(t.kwargs) if t.kwargs is not None else None}
    return out + [part for flag, value in options.items() if value is not None for part in (flag, value)]


class Dashboard:
    """A dashboard served by a child process (:meth:`app.notebook.Candor.run`).

    Attributes
    ----------
    url : str
        Where it answers, e.g. ``http://127.0.0.1:41871/``.
    log : pathlib.Path
        The server's output (its start line, warnings, one-line errors).
    """

    def __init__(self, process: subprocess.Popen, url: str, log: Path) -> None:
        self.process, self.url, self.log = process, url, log

    @property
    def running(self) -> bool:
        """Whether the server process is still alive."""
        return self.process.poll() is None

    def stop(self, timeout: float = 10.0) -> None:
        """End the server process (SIGTERM, then SIGKILL after ``timeout`` seconds); nothing if it has ended."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def wait(self) -> int:
        """Block until the server ends (Ctrl-C stops it); its exit status."""
        try:
            return self.process.wait()
        except KeyboardInterrupt:
            self.stop()
            return self.process.wait()

    def __enter__(self) -> Dashboard:
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def __repr__(self) -> str:
        return f"Dashboard({self.url!r}, {'running' if self.running else 'stopped'})"

    def _repr_html_(self) -> str:
        from html import escape

        return f'<a href="{escape(self.url)}" target="_blank">Candor dashboard: {escape(self.url)}</a>'


def _last_error(log: Path) -> str:
    lines = [ln for ln in log.read_text(errors="replace").splitlines() if ln.strip()]
    errors = [ln for ln in lines if ln.startswith("candor: error:")]
    return (errors or lines or ["the server ended without a message"])[-1].removeprefix("candor: error: ")


def serve(settings: Settings, *, port: int | None = None, host: str = "127.0.0.1", timeout: float = 120.0) -> Dashboard:
    """Start ``python -m app`` on what ``settings`` name and return once its first page answers.

    Parameters
    ----------
    settings : Settings
        The notebook's model, data, target, class, features file and trust flag (:func:`flags`).
    port : int, optional
        Default: a free port the operating system gives (:func:`free_port`).
    host : str, default="127.0.0.1"
        Beyond this machine only with a login, as on the command line (SECURITY.md).
    timeout : float, default=120.0
        Seconds to wait for the first page.

    Raises
    ------
    CandorError
        The server's own one line when it refuses to start (a busy port, a file it cannot load), or a line saying
        it did not answer within ``timeout`` seconds (it is stopped then).
    """
    port = free_port(host) if port is None else int(port)
    log = Path(tempfile.mkstemp(prefix="candor-dashboard-", suffix=".log")[1])
    command = [sys.executable, "-m", "app", *flags(settings), "--host", host, "--port", str(port)]
    with open(log, "w") as out:  # the child holds its own descriptor; nothing here must drain a pipe
        process = subprocess.Popen(command, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    dashboard = Dashboard(process, f"http://{host}:{port}/", log)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise CandorError(f"the dashboard did not start: {_last_error(log)}")
        try:
            with urllib.request.urlopen(f"http://{host}:{port}/", timeout=5) as answer:
                if answer.status == 200:
                    return dashboard
        except (urllib.error.URLError, OSError):
            pass
        time.sleep(POLL_S)
    dashboard.stop()
    raise CandorError(f"the dashboard did not answer on port {port} within {timeout:g} s (its output: {log})")
