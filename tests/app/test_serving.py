"""``python -m app`` serves with waitress (app/serve/waitress.py) with ``CANDOR_THREADS`` request threads, checked."""
from __future__ import annotations

import pytest

from app.__main__ import main
from tests.e2e.serving import free_port
from workspace.errors import CandorError
from workspace.settings import Settings


@pytest.mark.parametrize("raw, expected", [(None, 16), ("4", 4), ("1", 1)])
def test_request_threads_come_from_the_setting(raw, expected):
    env = {} if raw is None else {"CANDOR_THREADS": raw}
    assert Settings.from_env(env).threads == expected


@pytest.mark.parametrize("raw", ["abc", "0", "-3", "2.5"])
def test_a_bad_thread_count_is_named_in_one_line_before_anything_loads(monkeypatch, capsys, raw):
    with pytest.raises(CandorError, match=f"CANDOR_THREADS must be a positive whole number of request threads, "
                                          f"got {raw!r}"):
        Settings.from_env({"CANDOR_THREADS": raw})
    monkeypatch.setenv("CANDOR_THREADS", raw)
    with pytest.raises(SystemExit) as exit_:
        main(["--port", str(free_port())])
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and err.count("\n") == 1
    assert err.startswith("candor: error: CANDOR_THREADS must be a positive whole number")
