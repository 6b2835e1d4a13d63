"""No name is used that is never defined (pyflakes): such a line fails only when it runs, as a server error.

The Surrogate page raised NameError for ``PreventUpdate`` on every click outside a frontier point until pyflakes
found it; this keeps the kind from coming back in any package.
"""
from pathlib import Path

from pyflakes import api, messages, reporter

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("app", "explainers", "store", "workspace", "study", "accounts", "sample_models", "benchmarks")


class _Collect(reporter.Reporter):
    def __init__(self):
        self.found = []

    def flake(self, message):
        if isinstance(message, (messages.UndefinedName, messages.UndefinedLocal, messages.UndefinedExport)):
            self.found.append(f"{Path(message.filename).relative_to(ROOT)}:{message.lineno}: {message.message % message.message_args}")

    def unexpectedError(self, filename, msg):
        self.found.append(f"{filename}: {msg}")

    def syntaxError(self, filename, msg, lineno, offset, text):
        self.found.append(f"{filename}:{lineno}: {msg}")


def test_no_undefined_names():
    collect = _Collect()
    files = [p for pkg in PACKAGES for p in sorted((ROOT / pkg).rglob("*.py"))]
    assert len(files) > 100
    for path in files:
        api.checkPath(str(path), collect)
    assert collect.found == []
