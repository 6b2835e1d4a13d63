"""Every error of ``python -m app`` ends in one line on stderr (issue 27, found by an attack: ``check
--text-column`` on a tabular model printed a 40-line traceback holding the column's values). FAILED before
``app/__main__.py::main`` caught what no command foresaw: the exception escaped with its traceback."""
from __future__ import annotations

import pytest

from app import __main__ as cli
from workspace.errors import CandorError


@pytest.mark.parametrize("error, status, line", [
    (RuntimeError("boom\nsecond line with /srv/private/path"), 1, "RuntimeError: boom (not an error Candor checks for"),
    (CandorError("the table has no rows\nsecond"), 2, "candor: error: the table has no rows"),
])
def test_an_error_no_command_caught_is_one_line(monkeypatch, capsys, error, status, line):
    import app.cli.check

    def fail(_argv):
        raise error
    monkeypatch.setattr(app.cli.check, "main", fail)
    assert cli.main(["check", "--model", "m.skops"]) == status
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and line in err and "Traceback" not in err and "second" not in err
