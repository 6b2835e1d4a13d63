"""The peer's side of :mod:`benchmarks.vs_peer`: explainerdashboard 0.5.8 in its own virtual environment, and
the script run inside it (``benchmarks/peer_explainerdashboard.py``)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from benchmarks.vs_peer_parts import ROOT

PEER_SCRIPT = Path(__file__).resolve().parents[1] / "peer_explainerdashboard.py"
PEER_PACKAGE = "explainerdashboard==0.5.8"


def default_peer_venv() -> Path:
    return Path(os.environ.get("CANDOR_PEER_VENV", ROOT / ".cache" / "peer-venv"))


def ensure_peer_venv(venv: Path) -> Path:
    """explainerdashboard's own virtual environment (created from PyPI if missing); returns its python."""
    py = venv / "bin" / "python"
    if py.exists() and subprocess.run([py, "-c", "import explainerdashboard"], capture_output=True).returncode == 0:
        return py
    print(f"installing {PEER_PACKAGE} into {venv} (about a minute) ...", file=sys.stderr)
    base = getattr(sys, "_base_executable", sys.executable)
    subprocess.run([base, "-m", "venv", str(venv)], check=True)
    subprocess.run([py, "-m", "pip", "install", "-q", "--disable-pip-version-check", PEER_PACKAGE], check=True)
    return py
