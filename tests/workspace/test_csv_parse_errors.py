"""Every CSV the csv module cannot parse is Candor's one-line error, never a traceback (issue 27, item 1).

The size pre-check (``workspace.tables._csv_shape``) and the header check of ``_read_csv`` parse the
header line with :mod:`csv`, whose ``_csv.Error`` escaped as HTTP 500 on upload and a traceback from
``python -m app check``: a bare carriage return in the header, 1 MiB of random bytes (whose first
line holds one more often than not), a header field over ``csv.field_size_limit()``.
"""
from __future__ import annotations

import base64
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import skops.io as sio
from sklearn.linear_model import LogisticRegression

from app import services
from app.services import selection
from app.services import upload as upload_service
from workspace.errors import CandorError
from workspace.tables import read_table

ROOT = Path(__file__).resolve().parents[2]

CASES = {
    "carriage-return.csv": (b"a,b\rc,d\n1,2,3,4\n5,6,7,8\n", "its header line holds a bare carriage return"),
    # seed 6's first line holds a bare \r (most seeds' do not and were "not a readable CSV" already)
    "random.csv": (np.random.default_rng(6).bytes(1 << 20), "its header line holds a bare carriage return"),
    "long-name.csv": (b"a" * 300_000 + b",b\n1,2\n", "a column name in its header line is longer than"),
}


@pytest.fixture(autouse=True)
def _csv_module_default_limit():
    """csv.field_size_limit is process-wide and a library imported earlier in a full run may have raised it:
    these cases are about Candor's message at the module's default limit (131,072 characters)."""
    import csv

    before = csv.field_size_limit(131_072)
    yield
    csv.field_size_limit(before)


def _write(folder: Path, name: str) -> Path:
    path = folder / name
    path.write_bytes(CASES[name][0])
    return path


def test_the_random_case_holds_a_bare_carriage_return_in_its_first_line():
    assert b"\r" in CASES["random.csv"][0].split(b"\n", 1)[0]


@pytest.mark.parametrize("name", sorted(CASES))
def test_read_table_names_what_is_wrong(tmp_path, name):
    with pytest.raises(CandorError) as err:
        read_table(_write(tmp_path, name))
    message = str(err.value)
    assert message.startswith(f"{name}: not a readable CSV (") and CASES[name][1] in message
    assert "\n" not in message


@pytest.fixture
def uploads(tmp_path, monkeypatch):
    monkeypatch.setenv("CANDOR_UPLOAD_DIR", str(tmp_path / "uploads"))
    monkeypatch.setenv("CANDOR_STATE_DIR", str(tmp_path / "state"))
    previous, chosen = services.state().workspace, selection.current()
    yield tmp_path / "uploads"
    selection.start(chosen, warm=False)
    if previous is not None:
        services.init(previous, warm=False)


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_upload_loader_refuses_in_one_line_and_keeps_nothing(tmp_path, uploads, name):
    contents = "data:text/csv;base64," + base64.b64encode(CASES[name][0]).decode()
    with pytest.raises(CandorError) as err:
        upload_service.receive(name, contents, "data")
    message = str(err.value)
    assert message.startswith(f"{name}: not a readable CSV (") and CASES[name][1] in message
    assert not list(uploads.glob(f"*{name}"))  # an unreadable table is not kept


@pytest.fixture(scope="module")
def model(tmp_path_factory) -> Path:
    frame = pd.DataFrame({"a": np.arange(40.0), "b": np.arange(40.0) % 3})
    path = tmp_path_factory.mktemp("model") / "m.skops"
    sio.dump(LogisticRegression().fit(frame, frame.a > 20), path)
    return path


@pytest.mark.parametrize("name", ["carriage-return.csv", "random.csv"])
def test_check_prints_one_line_and_exits_2(tmp_path, model, name):
    out = subprocess.run([sys.executable, "-m", "app", "check", "--model", str(model), "--data",
                          str(_write(tmp_path, name)), "--target", "b"], capture_output=True, text=True, cwd=ROOT,
                         timeout=300)
    assert "Traceback" not in out.stderr
    assert out.returncode == 2, out.stderr
    [line] = out.stderr.splitlines()
    assert line.startswith(f"candor: error: {name}: not a readable CSV (") and CASES[name][1] in line
