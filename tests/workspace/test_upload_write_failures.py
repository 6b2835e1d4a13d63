"""An upload the disk refuses is one line and leaves nothing half-written (issue 27).

FAILED before ``workspace/uploads.py::_write_whole``: under a 64 KiB file-size limit (``RLIMIT_FSIZE``) a
200 KiB upload raised a raw ``OSError: [Errno 27] File too large`` and left a 64 KiB truncated file in the
upload folder that its index does not list; a full disk (ENOSPC) did the same.
"""
from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from workspace import uploads
from workspace.errors import CandorError

ROOT = Path(__file__).resolve().parents[2]
PAYLOAD = b"a,b\n" + b"1,2\n" * 51_200  # 200 KiB of CSV

CAPPED = """
import json, resource, sys
from pathlib import Path
from workspace import uploads
from workspace.errors import CandorError

resource.setrlimit(resource.RLIMIT_FSIZE, (64 * 1024, 64 * 1024))
try:
    uploads.save("big.csv", Path(sys.argv[2]).read_bytes(), kind="data", suffixes=(".csv",), folder=Path(sys.argv[1]))
    print(json.dumps({"error": None}))
except CandorError as err:
    print(json.dumps({"error": str(err)}))
"""


def _left(folder: Path) -> dict[str, int]:
    """Every file in the upload folder but its index and lock, with its size."""
    return {p.name: p.stat().st_size for p in folder.iterdir() if p.name not in (uploads.INDEX, uploads.LOCK)}


def _indexed(folder: Path) -> dict:
    index = folder / uploads.INDEX
    return json.loads(index.read_text())["files"] if index.exists() else {}


def test_a_write_over_the_file_size_limit_is_one_line_and_leaves_nothing(tmp_path):
    folder, payload = tmp_path / "uploads", tmp_path / "big.csv"
    payload.write_bytes(PAYLOAD)
    out = subprocess.run([sys.executable, "-c", CAPPED, str(folder), str(payload)], cwd=ROOT, capture_output=True,
                         text=True, timeout=120, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert out.returncode == 0 and "Traceback" not in out.stderr, out.stderr[-2000:]
    error = json.loads(out.stdout.strip().splitlines()[-1])["error"]
    assert error == ("big.csv was not stored: the server's file size limit was reached; nothing of it was kept "
                     "(ask the operator to free space)")
    assert _left(folder) == {} and _indexed(folder) == {}


def test_a_full_disk_is_one_line_and_leaves_nothing(tmp_path, monkeypatch):
    folder = tmp_path / "uploads"
    real_write = uploads.os.fsync

    def full(fd):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(uploads.os, "fsync", full)
    with pytest.raises(CandorError, match=r"^big\.csv was not stored: the server's disk is full; nothing of it"):
        uploads.save("big.csv", PAYLOAD, kind="data", suffixes=(".csv",), folder=folder)
    assert _left(folder) == {} and _indexed(folder) == {}
    monkeypatch.setattr(uploads.os, "fsync", real_write)
    kept = uploads.save("ok.csv", PAYLOAD, kind="data", suffixes=(".csv",), folder=folder)  # space again: stored
    assert _left(folder) == {kept.id: len(PAYLOAD)} and list(_indexed(folder)) == [kept.id]


def test_an_index_the_disk_refuses_takes_the_file_with_it(tmp_path, monkeypatch):
    """The file was complete but the index listing it could not be written: the file goes too."""
    folder = tmp_path / "uploads"
    first = uploads.save("first.csv", PAYLOAD, kind="data", suffixes=(".csv",), folder=folder)
    real_replace = os.replace

    def refuse_index(src, dst):
        if Path(dst).name == uploads.INDEX:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_replace(src, dst)

    monkeypatch.setattr(uploads.os, "replace", refuse_index)
    with pytest.raises(CandorError, match=r"^second\.csv was not stored: the server's disk is full"):
        uploads.save("second.csv", PAYLOAD, kind="data", suffixes=(".csv",), folder=folder)
    assert _left(folder) == {first.id: len(PAYLOAD)} and list(_indexed(folder)) == [first.id]


def test_contents_that_are_not_bytes_leave_nothing_behind(tmp_path):
    """Found by an attack: an upload's ``contents`` forged as a list reached the write, which raised TypeError and
    left a 0-byte ``.part`` file until the hourly sweep. The callback's check now refuses a list (every upload
    box takes one file), and a write that fails in any way deletes its part file."""
    from app.serve.callback_inputs import problem

    assert problem({"id": "upload-data", "property": "contents"}, ["data:text/csv;base64,YQ=="])
    assert problem({"id": "upload-data", "property": "contents"}, "data:text/csv;base64,YQ==") is None
    with pytest.raises(TypeError):
        uploads._write_whole(tmp_path / "x.csv", ["not", "bytes"], "x.csv")
    assert list(tmp_path.iterdir()) == []
