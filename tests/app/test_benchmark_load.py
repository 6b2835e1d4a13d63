"""``python -m benchmarks.load --quick`` runs (CI runs every benchmark the README lists in a quick mode): two
logged-in viewers against the Procfile's gunicorn over a store, for 5 s. No figure is asserted, only that the
viewers were served, without errors, and that the JSON line carries what the README says it does."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.bench
def test_quick_mode_serves_two_viewers_without_errors(tmp_path):
    out = subprocess.run([sys.executable, "-m", "benchmarks.load", "--quick", "--folder", str(tmp_path)], cwd=ROOT,
                         env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True, timeout=900)
    assert out.returncode == 0, out.stderr[-3000:]
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["quick"] is True
    (run,) = result["runs"]
    assert run["viewers"] == 2 and run["viewer_failures"] == 0
    assert run["requests"] > 0 and run["errors"] == 0, out.stdout[-3000:]
    assert run["kinds"]["all"]["n"] == run["requests"]
    assert run["memory_start"]["processes"] >= 3  # gunicorn's master and the Procfile's 2 workers
    assert run["memory_start"]["rss_mb"] > 0 and run["memory_end"]["hwm_mb"] >= run["memory_end"]["rss_mb"]
    assert len(run["load_before"]) == 3 and len(run["load_after"]) == 3
    assert run["cpu_ms_per_request"] > 0
