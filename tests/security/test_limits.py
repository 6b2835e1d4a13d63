"""Issue 11, kinds 5 and 10 (part): no upload, table, model call or burst of jobs takes the server down.

A real server (``python -m app``) is started with lowered limits (``CANDOR_MAX_UPLOAD_MB=8``,
``CANDOR_MAX_CELLS=1,000,000``, ``CANDOR_MAX_MEMORY_MB=6144``) so that the incident (a 1,000,000-row
CSV after a 10,000-column pair: 9-21 GiB, then the OOM killer) runs scaled down in seconds; the
other limits are tested in this process with the environment variables set by ``monkeypatch``.
"""
from __future__ import annotations

import base64
import io
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import requests

from workspace.errors import CandorError
from tests.e2e.serving import ROOT, free_port

SERVER_ENV = {"CANDOR_MAX_UPLOAD_MB": "8", "CANDOR_MAX_CELLS": "1000000", "CANDOR_MAX_MEMORY_MB": "6144",
              "CANDOR_WARM": "0"}


def _rss_mib(pid: int) -> float:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(next(ln for ln in status.splitlines() if ln.startswith("VmRSS:")).split()[1]) / 1024


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """``python -m app`` with lowered limits; yields (base URL, pid)."""
    d = tmp_path_factory.mktemp("limits-server")
    env = {**os.environ, "PYTHONUNBUFFERED": "1", **SERVER_ENV, "CANDOR_UPLOAD_DIR": str(d / "uploads"),
           "CANDOR_CACHE_DIR": str(d / "cache"), "CANDOR_STATE_DIR": str(d / "state"), "CANDOR_TEXT_DIR": str(d / "text")}
    port = free_port()
    with open(d / "server.log", "w") as log:
        proc = subprocess.Popen([sys.executable, "-m", "app", "--port", str(port)], cwd=ROOT, env=env, stdout=log,
                                stderr=subprocess.STDOUT)
        base = f"http://127.0.0.1:{port}"
        try:
            deadline = time.time() + 180
            while time.time() < deadline:
                try:
                    if requests.get(base + "/_candor/workspace", timeout=5).status_code == 200:
                        break
                except requests.RequestException:  # not up yet, or held by the model's load past 5 s under load
                    time.sleep(0.3)
                if proc.poll() is not None:
                    raise RuntimeError((d / "server.log").read_text())
            yield base, proc.pid
        finally:
            proc.terminate()
            proc.wait(timeout=30)


def _callback(base: str, outputs: list[tuple[str, str]], inputs: list[tuple[str, str, object]],
              state: list[tuple[str, str, object]] = ()) -> dict:
    """POST one Dash callback the way the browser does; returns the response's outputs by component id."""
    multi = len(outputs) > 1
    spec = [{"id": i, "property": p} for i, p in outputs]
    body = {"output": (".." + "...".join(f"{i}.{p}" for i, p in outputs) + "..") if multi else
            f"{outputs[0][0]}.{outputs[0][1]}",
            "outputs": spec if multi else spec[0],
            "inputs": [{"id": i, "property": p, "value": v} for i, p, v in inputs],
            "state": [{"id": i, "property": p, "value": v} for i, p, v in state],
            "changedPropIds": [f"{inputs[0][0]}.{inputs[0][1]}"]}
    r = requests.post(base + "/_dash-update-component", json=body, timeout=120)
    assert r.status_code == 200, r.text[:500]
    return r.json()["response"]


def _upload(base: str, kind: str, name: str, data: bytes) -> dict:
    outputs = [(f"upload-{kind}-token", "data"), (f"upload-{kind}-status", "children")]
    if kind == "data":
        outputs.append(("upload-target", "options"))
    contents = "data:application/octet-stream;base64," + base64.b64encode(data).decode()
    return _callback(base, outputs, [(f"upload-{kind}", "contents", contents)], [(f"upload-{kind}", "filename", name)])


def test_request_body_over_the_limit_is_refused_before_it_is_read(server):
    """Attack: a 267 MiB request body was read in full before the 50 MiB check (and Dash parsed it as JSON); now
    the server (waitress, app/serve/waitress.py) answers 413 from the Content-Length, before the body is sent, naming the
    limit, and caps a chunked body at the limit, and the server's memory does not grow."""
    base, pid = server
    port = int(base.rsplit(":", 1)[1])
    before = _rss_mib(pid)
    for chunked in (False, True):
        s = socket.create_connection(("127.0.0.1", port))
        length = "Transfer-Encoding: chunked" if chunked else f"Content-Length: {300 * 2**20}"
        s.sendall(f"POST /_dash-update-component HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                  f"Content-Type: application/json\r\n{length}\r\n\r\n".encode())
        s.settimeout(0.05)
        sent, answer, block = 0, b"", b"x" * 65536
        try:
            while sent < 64 * 2**20 and not answer:  # 64 MiB of the announced 300 MiB at most
                s.sendall(b"10000\r\n" + block + b"\r\n" if chunked else block)
                sent += len(block)
                try:
                    answer = s.recv(4096)
                except socket.timeout:
                    pass
        except (BrokenPipeError, ConnectionResetError):
            pass
        s.settimeout(10)
        try:
            answer += s.recv(4096)
        except OSError:
            pass
        s.close()
        assert sent <= 16 * 2**20, (chunked, sent)  # the 8 MiB limit is ~11.7 MiB of base64 JSON: refused at it
        if chunked:  # read up to the cap, then refused (the login hook reads the JSON first: 400 or 413)
            assert answer.startswith((b"HTTP/1.1 413", b"HTTP/1.1 400")), answer[:200]
        else:  # refused from the Content-Length alone, before the body is read
            assert answer.startswith(b"HTTP/1.1 413"), answer[:200]
            assert b"larger than the 8 MiB upload limit (CANDOR_MAX_UPLOAD_MB)" in answer and sent <= 2**20
    assert _rss_mib(pid) - before < 100
    assert requests.get(base + "/_candor/workspace", timeout=10).status_code == 200


def test_huge_table_after_a_wide_pair_is_refused_with_numbers_and_the_server_stays_up(server, tmp_path, rng):
    """Attack (scaled down): a wide pair is explained, then a table with many more rows is uploaded; its rows x
    columns were read in full and explained (9-21 GiB, the OOM killer). Now the table is refused before it is read,
    naming its rows, columns and the limit; the server's memory stays under its ceiling and it keeps answering."""
    import skops.io as sio
    from sklearn.linear_model import LogisticRegression

    base, pid = server
    n_features = 900
    X = pd.DataFrame(rng.normal(size=(120, n_features)), columns=[f"f{i}" for i in range(n_features)])
    y = np.where(X.f0 > 0, "yes", "no")
    sio.dump(LogisticRegression(max_iter=200).fit(X, y), tmp_path / "wide.skops")
    model = _upload(base, "model", "wide.skops", (tmp_path / "wide.skops").read_bytes())
    data = _upload(base, "data", "wide.csv", X.assign(y=y).to_csv(index=False).encode())
    tokens = model["upload-model-token"]["data"], data["upload-data-token"]["data"]
    deps = requests.get(base + "/_dash-dependencies", timeout=30).json()  # the upload's outputs, as the app has them
    load = next(d for d in deps if "upload-result.children" in d["output"])
    body = {"output": load["output"],
            "outputs": [{"id": o.split(".")[0], "property": o.split(".", 1)[1]} for o in load["output"].strip(".").split("...")],
            "inputs": [{"id": "upload-load", "property": "n_clicks", "value": 1}],
            "state": [{"id": "upload-model-token", "property": "data", "value": tokens[0]},
                      {"id": "upload-data-token", "property": "data", "value": tokens[1]},
                      {"id": "upload-target", "property": "value", "value": "y"},
                      {"id": "upload-features-token", "property": "data", "value": None}],
            "changedPropIds": ["upload-load.n_clicks"]}
    answer = requests.post(base + "/_dash-update-component", json=body, timeout=120)
    assert answer.status_code == 200, answer.text[:500]
    done = answer.json()["response"]
    assert "Now explaining wide.csv: 120 rows x 900 features" in json.dumps(done)
    rows = 150_000
    tall = pd.DataFrame(rng.integers(0, 9, size=(rows, 10)), columns=[f"c{i}" for i in range(10)])
    buf = io.StringIO()
    tall.to_csv(buf, index=False)
    refused = json.dumps(_upload(base, "data", "tall.csv", buf.getvalue().encode()))
    assert ("tall.csv: 150,000 rows x 10 columns = 1,500,000 cells is over the limit of 1,000,000 cells "
            "(CANDOR_MAX_CELLS; an operator can raise it)") in refused
    assert _rss_mib(pid) < 6144
    assert "wide.csv" in requests.get(base + "/_candor/workspace", timeout=10).json()["name"]


def test_server_process_has_a_memory_ceiling(server):
    """Attack: nothing bounded one process's memory, so one request could grow it until the kernel's OOM killer
    ended the server; now RLIMIT_DATA is set to CANDOR_MAX_MEMORY_MB (inherited by workers and jobs)."""
    _, pid = server
    limits = Path(f"/proc/{pid}/limits").read_text()
    line = next(ln for ln in limits.splitlines() if ln.startswith("Max data size"))
    assert line.split()[3] == str(6144 * 2**20), line


def test_memory_ceiling_turns_an_oversized_allocation_into_an_error(tmp_path):
    """Attack: an allocation past the machine's memory went to the OOM killer (segfaults in OpenBLAS, a dead
    server); under the ceiling it is a MemoryError the request reports, and the process keeps working."""
    code = ("import numpy as np, torch\n"
            "from workspace import limits\n"
            "print('ceiling', limits.apply_memory_ceiling())\n"
            "try:\n"
            "    a = np.ones(3 * 2**30 // 8)\n"
            "    print('allocated')\n"
            "except MemoryError:\n"
            "    print('refused')\n"
            "print('still working', float(np.ones(1000).sum()))\n")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120,
                         env={**os.environ, "CANDOR_MAX_MEMORY_MB": "2048"})
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.splitlines() == [f"ceiling {2048 * 2**20}", "refused", "still working 1000.0"]


def test_tables_over_the_cell_or_memory_limit_are_refused_before_loading(tmp_path, monkeypatch, rng):
    """Attack: read_table loaded any table within the byte limit, whatever its rows x columns or memory; now a CSV's
    header and line count and a Parquet file's metadata are checked first, and the message gives the numbers."""
    from app.services.upload import check_explanation_cost
    from workspace.tables import read_table, table_shape

    frame = pd.DataFrame(rng.integers(0, 9, size=(5000, 40)), columns=[f"c{i}" for i in range(40)])
    frame.to_csv(tmp_path / "t.csv", index=False)
    frame.to_parquet(tmp_path / "t.parquet")
    assert table_shape(tmp_path / "t.csv") == (5000, 40) == table_shape(tmp_path / "t.parquet")
    monkeypatch.setenv("CANDOR_MAX_CELLS", "150000")
    for name in ("t.csv", "t.parquet"):
        with pytest.raises(CandorError, match=rf"^{name}: 5,000 rows x 40 columns = 200,000 cells is over the limit of "
                                              r"150,000 cells \(CANDOR_MAX_CELLS"):
            read_table(tmp_path / name)
    monkeypatch.setenv("CANDOR_MAX_CELLS", "1000000")
    monkeypatch.setenv("CANDOR_MAX_TABLE_MB", "0.5")
    with pytest.raises(CandorError, match=r"t.csv: 5,000 rows x 40 columns would take about \d+ MiB of memory, over "
                                          r"the limit of 0 MiB \(CANDOR_MAX_TABLE_MB"):
        read_table(tmp_path / "t.csv")
    monkeypatch.setenv("CANDOR_MAX_TABLE_MB", "64")
    assert read_table(tmp_path / "t.csv").shape == (5000, 40)
    with pytest.raises(CandorError, match=r"explaining one row \(LIME/SHAP model input\): 1,000 rows x 1,500 columns"):
        check_explanation_cost(200, 1500, "wide.csv")


def _csv(kb: int) -> str:
    return "data:text/csv;base64," + base64.b64encode(b"a,b\n" + b"1,2\n" * (kb * 256)).decode()


def test_upload_quota_deletes_the_oldest_unused_upload_first_and_never_one_in_use(tmp_path, monkeypatch):
    """Attack: uploads were never deleted (452 MB in 13 s fills the disk); now the folder stays under
    CANDOR_UPLOAD_QUOTA_MB by deleting the least recently used uploads, never the pair in use, and an upload that
    cannot fit beside the uploads in use is refused with the numbers."""
    from workspace import uploads
    from app import services
    from app.services import selection

    monkeypatch.setenv("CANDOR_UPLOAD_DIR", str(tmp_path / "up"))
    monkeypatch.setenv("CANDOR_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("CANDOR_UPLOAD_QUOTA_MB", str(100 / 1024))  # 100 KiB
    import app.services.upload  # noqa: F401  (registers the pair in use with the quota)

    folder = uploads.upload_dir()
    first = uploads.store_upload("a.csv", _csv(30), kind="data")
    monkeypatch.setattr(services.state(), "selection", selection.Selection(model="m", data=str(first), uploaded=True))
    paths = [uploads.store_upload(f"{n}.csv", _csv(30), kind="data") for n in "bcdefg"]
    on_disk = sorted(p.name for p in folder.iterdir() if p.suffix == ".csv")
    assert first.is_file() and first.name in on_disk and len(on_disk) == 3  # 3 x 30 KiB fit in 100 KiB
    assert [p.is_file() for p in paths] == [False, False, False, False, True, True]
    assert sum(p.stat().st_size for p in folder.glob("*.csv")) <= 100 * 1024
    monkeypatch.setattr(services.state(), "selection", selection.Selection(model=str(paths[-2]), data=str(paths[-1])))
    monkeypatch.setenv("CANDOR_UPLOAD_QUOTA_MB", str(70 / 1024))
    with pytest.raises(CandorError, match=r"^the upload folder is full: 0.1 MiB of its 0.1 MiB quota "
                                          r"\(CANDOR_UPLOAD_QUOTA_MB\) is held by uploads in use, and this data needs"):
        uploads.store_upload("h.csv", _csv(30), kind="data")
    assert paths[-1].is_file() and paths[-2].is_file() and first.is_file()  # refused: nothing deleted for it
    assert not list(folder.glob("*-h.csv"))


def test_uploads_past_the_retention_time_are_deleted_unless_in_use(tmp_path, monkeypatch):
    """Attack: uploads stayed forever; now one not used for CANDOR_UPLOAD_RETENTION_HOURS is deleted at the next
    upload (or sweep), except the pair in use."""
    from workspace import uploads
    from app import services
    from app.services import selection

    monkeypatch.setenv("CANDOR_UPLOAD_DIR", str(tmp_path / "up"))
    monkeypatch.setenv("CANDOR_STATE_DIR", str(tmp_path / "state"))
    import app.services.upload  # noqa: F401

    old, kept = (uploads.store_upload(f"{n}.csv", _csv(1), kind="data") for n in "ab")
    monkeypatch.setattr(services.state(), "selection", selection.Selection(model="m", data=str(kept), uploaded=True))
    monkeypatch.setenv("CANDOR_UPLOAD_RETENTION_HOURS", str(0.5 / 3600))  # half a second
    time.sleep(1.0)
    new = uploads.store_upload("c.csv", _csv(1), kind="data")
    assert not old.exists() and kept.exists() and new.exists()
    with pytest.raises(CandorError, match="no longer on the server"):
        uploads.lookup(old.name, ("data",))


def test_model_calls_stop_at_their_deadline_with_a_message():
    """Attack: a slow model (or a huge input) held a request thread for as long as it liked; now every model call
    goes through the adapter in batches and stops at the first batch after CANDOR_MODEL_TIMEOUT_S, with a message
    the pages show (a CandorError)."""
    import explainers.model_adapter as ma
    from workspace import limits
    from explainers._codec import TabularCodec

    class Slow:
        classes_ = np.array([0, 1])

        def predict_proba(self, X):
            time.sleep(0.2)
            return np.tile([0.5, 0.5], (len(X), 1))

        def predict(self, X):
            return np.zeros(len(X), dtype=int)

    X = pd.DataFrame({"a": np.arange(400.0), "b": np.arange(400.0)})
    before = ma.BATCH_CELLS
    ma.BATCH_CELLS = 20  # 10 rows per call: 40 calls, 8 s without a deadline
    os.environ["CANDOR_MODEL_TIMEOUT_S"] = "0.5"
    try:
        call_limits = limits.model_call_limits()  # what create_app gives the installed workspace's adapter
        assert call_limits.seconds == 0.5 and limits.model_call_limits(timeout=False).seconds is None
        adapter = ma.ModelAdapter(Slow(), TabularCodec(X), limits=call_limits)
        start = time.monotonic()
        with pytest.raises(CandorError, match=r"the model took longer than 0.5 s on \d+ of 400 rows "
                                              r"\(CANDOR_MODEL_TIMEOUT_S\)") as err:
            adapter.outputs(X.to_numpy())
        assert isinstance(err.value, ma.ModelTimeout) and time.monotonic() - start < 4
        assert adapter.outputs(X.to_numpy()[:10]).shape == (10, 2)  # within one batch: answered
    finally:
        ma.BATCH_CELLS = before
        os.environ.pop("CANDOR_MODEL_TIMEOUT_S")


def test_background_jobs_are_limited_per_user_and_in_total(tmp_path, monkeypatch):
    """Attack: one anonymous client started 11 background jobs at once (each a forked process); now the 3rd job of
    one user and the 5th on the server are refused before anything forks, with a message in the callback's status
    output, never queued silently."""
    import dash
    import flask
    from dash._callback_context import context_value
    from dash._utils import AttributeDict

    from app import services
    from app.serve.server import background_manager

    monkeypatch.setenv("CANDOR_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(services.warm_done, "is_set", lambda: True)
    monkeypatch.setattr(services.warm_done, "wait", lambda timeout=None: True)
    manager = background_manager()
    web = flask.Flask("jobs-test")

    def job(*_):
        time.sleep(60)

    started, refused = [], []
    try:
        for i in range(11):
            with web.test_request_context(environ_base={"REMOTE_ADDR": "203.0.113.7"}):
                pid = manager.call_job_fn(f"key-{i}", job, (), {})
            (started if pid else refused).append((i, pid))
        assert len(started) == 2 and len(refused) == 9
        for who in ("203.0.113.8", "203.0.113.8", "203.0.113.9"):
            with web.test_request_context(environ_base={"REMOTE_ADDR": who}):
                pid = manager.call_job_fn(f"key-{who}-{len(started)}", job, (), {})
            (started if pid else refused).append((who, pid))
        assert [p > 0 for _, p in started] == [True] * 4 and refused[-1][0] == "203.0.113.9"
        assert len(refused) == 10
        token = context_value.set(AttributeDict(outputs_list=[{"id": "x", "property": "data"},
                                                              {"id": "status", "property": "children"}]))
        try:
            out = manager.get_result("key-2", "0")
            last = manager.get_result("key-203.0.113.9-4", "0")
        finally:
            context_value.reset(token)
        assert out[0] is dash.no_update and "you already have 2 background job(s) running" in str(out[1].children)
        assert "CANDOR_MAX_JOBS_PER_USER=2" in str(out[1].children)
        assert "the server is already running 4 background jobs, its limit (CANDOR_MAX_JOBS=4)" in str(last[1].children)
    finally:
        for _, pid in started:
            if pid:
                manager.terminate_job(pid)


WIDE_PAIR_SCRIPT = """
import resource, sys
import numpy as np, pandas as pd, skops.io as sio
from sklearn.linear_model import LogisticRegression
from workspace import limits
from app import services
from workspace.workspace import load_user_workspace

d = sys.argv[1]
print("ceiling", limits.apply_memory_ceiling())
rng = np.random.default_rng(0)
X = pd.DataFrame(rng.normal(size=(150, 10000)), columns=[f"f{i}" for i in range(10000)])
y = np.where(X.f0 > 0, "a", "b")
sio.dump(LogisticRegression(max_iter=50).fit(X, y), f"{d}/w.skops")
X.assign(y=y).to_csv(f"{d}/w.csv", index=False)
from workspace.errors import CandorError
services.init(load_user_workspace(f"{d}/w.skops", f"{d}/w.csv", "y"), warm=False)
try:  # the incident's step: the default surrogate's candidate rules over every item pair
    services.surrogates.default_muse_key()
    print("surrogate fitted")
except CandorError as err:
    print("surrogate refused:", str(err)[:200])
print("still explaining", len(services.shap_row(0).feature_names))
print("peak MiB", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024)
"""


def test_a_10000_column_pair_no_longer_crashes_the_process(tmp_path):
    """Attack (the incident's first half, at full width): a 10,000-column pair made the surrogate's item-pair
    matrix (tens of thousands of items squared) segfault OpenBLAS or wake the OOM killer while the pages were
    precomputed; under the memory ceiling that allocation fails as a MemoryError, the process stays under the
    ceiling and keeps explaining the pair."""
    out = subprocess.run([sys.executable, "-c", WIDE_PAIR_SCRIPT, str(tmp_path)], cwd=ROOT, capture_output=True,
                         text=True, timeout=600, env={**os.environ, "CANDOR_MAX_MEMORY_MB": "8192"})
    assert out.returncode == 0, (out.returncode, out.stderr[-3000:])
    lines = out.stdout.splitlines()
    assert lines[0] == f"ceiling {8192 * 2**20}" and lines[1].startswith("surrogate ")
    assert lines[2] == "still explaining 10000" and int(lines[3].split()[-1]) < 8192
