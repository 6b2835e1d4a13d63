"""``python -m app`` serves with waitress (app/serving.py): its request threads come from ``CANDOR_THREADS``, checked."""
from __future__ import annotations

import pytest

from app import serving
from app.__main__ import main
from tests.e2e.serving import free_port
from workspace.errors import CandorError


@pytest.mark.parametrize("raw, expected", [(None, 16), ("4", 4), ("1", 1)])
def test_request_threads_come_from_the_setting(monkeypatch, raw, expected):
    if raw is None:
        monkeypatch.delenv("CANDOR_THREADS", raising=False)
    else:
        monkeypatch.setenv("CANDOR_THREADS", raw)
    assert serving.threads() == expected


@pytest.mark.parametrize("raw", ["abc", "0", "-3", "2.5", ""])
def test_a_bad_thread_count_is_named_in_one_line_before_anything_loads(monkeypatch, capsys, raw):
    monkeypatch.setenv("CANDOR_THREADS", raw)
    with pytest.raises(CandorError, match=f"CANDOR_THREADS must be a whole number .* got {raw!r}"):
        serving.threads()
    assert main(["--port", str(free_port())]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("candor: error: CANDOR_THREADS must be a whole number")
