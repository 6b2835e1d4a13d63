"""Uploads, study data and caches are 0600 in 0700 folders; secrets are long enough and never echoed (issue 27).

Before: files and folders followed the umask (0644 and 0755 under the usual 022), so any local account read
uploaded models and tables, the study database and the caches the pages trust; a 1-character
``CANDOR_SECRET_KEY`` was accepted; a bad ``CANDOR_REDIS_URL`` was echoed with a ``?password=`` in it.
"""
from __future__ import annotations

import os
import secrets
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from workspace.errors import CandorError
from workspace.json_cache import json_cache
from workspace.settings import MIN_SECRET_KEY, Settings, redact_url
from workspace.uploads import save

ROOT = Path(__file__).resolve().parents[2]


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture(autouse=True)
def usual_umask():
    """The common umask 022, under which files were created 0644 and folders 0755."""
    old = os.umask(0o022)
    yield
    os.umask(old)


def test_uploads_are_0600_in_a_0700_folder(tmp_path):
    folder = tmp_path / "instance" / "uploads"
    record = save("t.csv", b"a,b\n1,2\n", kind="data", suffixes=(".csv",), folder=folder)
    assert _mode(folder) == 0o700 and _mode(folder.parent) == 0o700  # created by the upload: both private
    assert {p.name: _mode(p) for p in folder.iterdir()} == {record.path.name: 0o600, "index.json": 0o600,
                                                            ".index.lock": 0o600}


def test_an_existing_upload_folder_is_made_private(tmp_path):
    folder = tmp_path / "uploads"
    folder.mkdir(mode=0o755)
    save("t.csv", b"a,b\n1,2\n", kind="data", suffixes=(".csv",), folder=folder)
    assert _mode(folder) == 0o700


def test_cache_files_are_0600_in_0700_folders(tmp_path):
    folder = tmp_path / "cache" / "results-json"
    cache = json_cache(folder)
    cache.set("small", [1, 2, 3])
    large = [secrets.token_hex(100_000)]  # over diskcache's 32 KiB compressed: a value file in two sub-folders
    cache.set("large", large)
    assert cache.get("large") == large
    cache.close()
    files = [p for p in folder.rglob("*") if p.is_file()]
    folders = [folder, *(p for p in folder.rglob("*") if p.is_dir())]
    assert any(p.suffix == ".val" for p in files) and any(p.name == "cache.db" for p in files)
    assert {p.relative_to(folder).as_posix(): _mode(p) for p in files} == {
        p.relative_to(folder).as_posix(): 0o600 for p in files}
    assert {str(p): _mode(p) for p in folders} == {str(p): 0o700 for p in folders}


def test_the_study_database_is_0600_in_a_0700_folder(tmp_path):
    from sqlalchemy import text

    from study.db import make_engine

    path = tmp_path / "instance" / "candor-study.sqlite3"
    engine = make_engine(f"sqlite:///{path}")
    with engine.begin() as conn:
        conn.execute(text("CREATE TABLE t (x INTEGER)"))
        conn.execute(text("INSERT INTO t VALUES (1)"))
        written = sorted(p.name for p in path.parent.iterdir())
        modes = {p.name: _mode(p) for p in path.parent.iterdir()}
    engine.dispose()
    assert "candor-study.sqlite3-wal" in written  # WAL mode: SQLite gives its files the database's mode
    assert modes == {name: 0o600 for name in written} and _mode(path.parent) == 0o700


@pytest.mark.parametrize("key", ["Q", "Q" * (MIN_SECRET_KEY - 1)])
def test_a_short_secret_key_is_refused_without_showing_it(key):
    with pytest.raises(CandorError) as err:
        Settings.from_env({"CANDOR_SECRET_KEY": key})
    message = str(err.value)
    assert message.startswith(f"CANDOR_SECRET_KEY must be at least {MIN_SECRET_KEY} characters, got {len(key)};")
    assert "Q" not in message
    assert Settings.from_env({"CANDOR_SECRET_KEY": "Q" * MIN_SECRET_KEY}).secret_key == "Q" * MIN_SECRET_KEY


def test_the_server_refuses_a_short_secret_key_in_one_line_exit_2():
    env = dict(os.environ, CANDOR_SECRET_KEY="Zq9")
    out = subprocess.run([sys.executable, "-m", "app", "--port", "1"], capture_output=True, text=True, cwd=ROOT,
                         env=env, timeout=300)
    assert out.returncode == 2 and "Traceback" not in out.stderr
    [line] = out.stderr.splitlines()
    assert line.startswith("candor: error: CANDOR_SECRET_KEY must be at least 32 characters, got 3;")
    assert "Zq9" not in out.stderr + out.stdout


@pytest.mark.parametrize("url", [
    "http://:s3cret@10.0.0.5:6379",
    "http://user:s3cret@10.0.0.5:6379/0",
    "10.0.0.5:6379?password=s3cret",
    "http://10.0.0.5:6379/0?db=1&password=s3cret",
    "redis://10.0.0.5:port/0?password=s3cret",
    "redis://user:s3cret@10.0.0.5:port/0",
    "redis://:s3/cret@10.0.0.5:6379/0",  # an unencoded "/": urllib would quote "s3" as the port
    "redis://:s3/cret@10.0.0.5/0",
])
def test_a_bad_redis_url_is_refused_without_its_password(url):
    with pytest.raises(CandorError, match="CANDOR_REDIS_URL") as err:
        Settings.from_env({"CANDOR_REDIS_URL": url})
    assert "s3" not in str(err.value) and "cret" not in str(err.value)


@pytest.mark.parametrize("url, shown", [
    ("redis://:s3cret@h:6379/0", "redis://:***@h:6379/0"),
    ("redis://user:s3cret@h:6379/0", "redis://user:***@h:6379/0"),
    ("redis://s3cret@h:6379/0", "redis://:***@h:6379/0"),
    ("rediss://h:6380/0?password=s3cret&ssl_cert_reqs=none", "rediss://h:6380/0?password=***&ssl_cert_reqs=none"),
    ("redis://:p@ss@h/0?password=p@ss", "redis://:***@h/0?password=***"),
    ("unix:///run/redis.sock?password=s3cret&db=2", "unix:///run/redis.sock?password=***&db=2"),
])
def test_redact_url(url, shown):
    assert redact_url(url) == shown
