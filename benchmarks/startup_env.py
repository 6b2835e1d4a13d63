"""The environment a timed server start runs in: Candor's own modules already compiled to bytecode.

A package installed with pip is compiled at install (the peer's is), and ``python -m app`` writes its bytecode on its
first start, so every later start reads it. A start timed from process start must not pay that compilation again:
an environment that sets ``PYTHONDONTWRITEBYTECODE`` (this machine's does) would make every Candor start compile its
~600 modules (about 0.5 s of a first HTTP 200, issue 23) while the peer's are read. :func:`server_env` compiles
them once per benchmark run (``compileall``, as pip does) and gives the server an environment without that flag.
"""
from __future__ import annotations

import compileall
import functools
import os
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("app", "explainers", "workspace", "store", "accounts", "study", "sample_models")


@functools.cache
def compiled() -> int:
    """Compile Candor's packages to ``__pycache__`` (what ``pip install`` does); the number of packages compiled."""
    for name in PACKAGES:
        compileall.compile_dir(str(ROOT / name), quiet=1)
    return len(PACKAGES)


def server_env(**extra: str) -> dict[str, str]:
    """``os.environ`` for a timed server: bytecode written and read, ``PYTHONPATH`` the project, plus ``extra``."""
    compiled()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    return {**env, "PYTHONPATH": str(ROOT), **extra}
