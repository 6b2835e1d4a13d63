"""Every benchmark the docs name runs end to end in its ``--quick`` mode, so none rots unseen (issue 27).

``python -m benchmarks.slice`` had died with StopIteration for weeks because nothing ran it. Here each
benchmark runs as a user runs it (``python -m benchmarks.NAME --quick``, from the repository's root, in
its own process, with a throwaway temporary, cache and state folder) and must exit 0 with its last line
of output one JSON object, naming no part that failed (``"failed"``: audit and engine carry on past a
failing part and list it there) and no ``"error"`` or ``"useful_error"`` (live_hgb's server traceback,
its row callback failing). Its figures are not asserted: quick sizes are tiny and the machine is shared
(timings belong in ``benchmarks/``, never in tests).
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
QUICK = ("audit", "big_plots", "build_store", "byo_scale", "engine", "heads", "lime_speed", "live_hgb",
         "persuasive", "slice", "study_load", "surrogates", "tablestakes", "text_page", "vs_peer", "wide_check")
"""The benchmarks run here: every one README.md or docs/ names, but those in :data:`ELSEWHERE`."""
ELSEWHERE = {"load": "tests/app/test_benchmark_load.py"}
"""Benchmarks whose quick run has a test of its own (which asserts more than the exit status)."""
SHARED = ("startup_env", "browser_timing")
"""Modules of ``benchmarks/`` that the benchmarks share (the docs may name them), not benchmarks themselves."""
TIMEOUT_S = 900
"""A hung benchmark fails after this long instead of stalling the suite (quick runs take well under it)."""


def named_in_docs() -> set[str]:
    """The benchmarks README.md and docs/*.md name: ``benchmarks.NAME``, ``benchmarks/NAME.py`` and the
    README's list after ``python -m benchmarks.NAME``."""
    names: set[str] = set()
    for path in DOCS:
        text = path.read_text(encoding="utf-8")
        names.update(re.findall(r"benchmarks\.([a-z_]+)", text))
        names.update(re.findall(r"benchmarks/([a-z_]+)\.py", text))
        for listed in re.findall(r"python -m benchmarks\.NAME` \(([^)]*)\)", text):
            names.update(re.findall(r"`([a-z_]+)`", listed))
    names.discard("NAME")
    return names - set(SHARED)


def test_every_benchmark_the_docs_name_is_run_here():
    named = named_in_docs()
    assert {"slice", "engine", "vs_peer", "live_hgb"} <= named  # the scan reads the README's forms
    assert sorted(named) == sorted([*QUICK, *ELSEWHERE]), "add a benchmark the docs name to QUICK (and give it --quick)"
    assert all((ROOT / path).exists() for path in ELSEWHERE.values())


@pytest.mark.bench
@pytest.mark.parametrize("name", QUICK)
def test_quick_run_exits_0_and_ends_with_its_json_line(name, tmp_path):
    # a short TMPDIR: Chromium puts its sockets there, and under pytest's long tmp_path their paths passed the
    # 108-byte limit of a UNIX socket name ("Chrome instance exited" on every start of text_page and vs_peer)
    short = Path(tempfile.mkdtemp(prefix="cq-", dir="/tmp"))
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TMPDIR": str(short), "CANDOR_CACHE_DIR": str(tmp_path / "cache"),
           "CANDOR_STATE_DIR": str(tmp_path / "state"), "CANDOR_TEXT_DIR": str(tmp_path / "text")}
    try:
        done = subprocess.run([sys.executable, "-m", f"benchmarks.{name}", "--quick"], cwd=ROOT, env=env,
                              capture_output=True, text=True, timeout=TIMEOUT_S)
    finally:
        shutil.rmtree(short, ignore_errors=True)
    assert done.returncode == 0, f"benchmarks.{name} --quick exited {done.returncode}:\n{done.stderr[-3000:]}"
    lines = done.stdout.strip().splitlines()
    assert len(lines) >= 2, f"benchmarks.{name} printed no table:\n{done.stdout[-2000:]}"
    last = json.loads(lines[-1])
    assert isinstance(last, dict) and last, f"benchmarks.{name}'s last line is not a JSON object: {lines[-1][:300]}"
    assert not last.get("failed"), f"benchmarks.{name}: parts failed: {last['failed']}"  # audit, engine go on past one
    for key in ("error", "useful_error"):  # live_hgb: the server's traceback, a row callback that failed
        assert not last.get(key), f"benchmarks.{name}: {key}: {str(last[key])[-1500:]}"
