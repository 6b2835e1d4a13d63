"""Issue 24: the study's web side in rooms. ``app/callbacks/`` holds callback registrations only (the
participant flow's use cases are :mod:`study.participation`, its screens ``app/views/``, the simulation
command ``app/cli/``)."""
from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_every_study_module_in_callbacks_registers_a_callback():
    modules = sorted((ROOT / "app" / "callbacks").glob("study*.py"))
    assert modules, "no study callbacks found"
    without = [m.name for m in modules if not re.search(r"^@callback\(|^clientside_callback\(", m.read_text(), re.M)]
    assert without == []

