"""The tree passes the checked-in lint configuration (``ruff.toml``, issue 24), and that configuration finds
what it is meant to find: a planted file with one finding of each selected family fails it.

``./scripts/test`` (which ``.ci/run`` calls) runs the same ``ruff check .`` before the suite; this test keeps it
in every pytest run, named by its findings.
"""
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _ruff(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ruff", *args], capture_output=True, text=True, cwd=cwd)


def test_installed_ruff_is_the_pinned_one():
    pin = re.search(r"^ruff==(\S+)$", (ROOT / "requirements-test.txt").read_text(), re.M)
    assert pin, "ruff is pinned in requirements-test.txt"
    assert _ruff("--version").stdout.split() == ["ruff", pin.group(1)]


def test_the_tree_passes_ruff():
    out = _ruff("check", "--no-cache", "--output-format", "concise", ".")
    assert out.returncode == 0, out.stdout + out.stderr


PLANTED = '''import os


def f(items=[]):
    if items == None:
        return undefined_name
    for i in range(3):
        pass
    return "\\d"
'''


def test_ruff_fails_on_a_planted_violation(tmp_path):
    """One finding of each family the configuration selects: F401 unused import, F821 undefined name, E711
    comparison to None, B006 mutable default, B007 unused loop variable, W605 invalid escape sequence."""
    (tmp_path / "planted.py").write_text(PLANTED)
    out = _ruff("check", "--no-cache", "--output-format", "concise", "--config", str(ROOT / "ruff.toml"),
                "planted.py", cwd=tmp_path)
    assert out.returncode == 1
    found = sorted(set(re.findall(r"^planted\.py:\d+:\d+: ([A-Z]+\d+)", out.stdout, re.M)))
    assert found == ["B006", "B007", "E711", "F401", "F821", "W605"], out.stdout
