"""Issue 11, kinds 1, 2 and 5 (model files): no code runs from a model file, and no model file takes the server down.

Every malicious file is built here: a real skops file whose schema is edited so that loading it
*calls* a function of numpy or scikit-learn that runs a string of Python or writes a file (skops's
``ConstructorFromReduceNode`` calls ``module.name(*args)``), alone or hidden in one attribute of a
working LogisticRegression; a TorchScript module that writes into a file when it runs; a skops file
whose arrays inflate far beyond its size; trees whose node arrays point outside themselves.
"""
from __future__ import annotations

import base64
import io
import json
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import skops.io as sio
import torch
from sklearn.linear_model import LogisticRegression

from workspace.errors import CandorError
from workspace.model_files import load_model
from workspace.workspace import load_pair
from workspace.torch_options import TorchOptions

ROOT = Path(__file__).resolve().parents[2]
RUNSTRING = "numpy.testing._private.utils.runstring"  # def runstring(astr, dict): exec(astr, dict)
SK_RUN = "sklearn.utils._testing.assert_run_python_script_without_output"  # runs its argument in a new Python
NP_SAVE = "numpy.save"  # writes an array to any path


def _table() -> pd.DataFrame:
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"x": rng.normal(size=60), "z": rng.normal(size=60)})
    frame["label"] = np.where(frame.x + 0.3 * frame.z > 0, "hi", "lo")
    return frame


def _rewrite(src: bytes, schema: dict, replace: dict[str, bytes] | None = None) -> bytes:
    """The skops zip ``src`` with ``schema.json`` (and members in ``replace``) swapped."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(src)) as zin, zipfile.ZipFile(out, "w") as zout:
        for info in zin.infolist():
            data = json.dumps(schema).encode() if info.filename == "schema.json" else zin.read(info)
            zout.writestr(info.filename, (replace or {}).get(info.filename, data))
    return out.getvalue()


def _crafted(path: Path, call: str, args: tuple, *, hidden: bool) -> Path:
    """A skops file whose loading calls ``call(*args)``.

    ``hidden``: the call replaces one hyper-parameter (``verbose``) of a fitted LogisticRegression,
    which otherwise loads and predicts as usual; else the call is the whole file.
    """
    frame = _table()
    model = LogisticRegression().fit(frame[["x", "z"]], frame.label)
    model.verbose = args  # skops writes the tuple's state; the edit below turns it into a call
    schema = json.loads(zipfile.ZipFile(io.BytesIO(sio.dumps(model))).read("schema.json"))
    module, name = call.rsplit(".", 1)
    attrs = schema["content"]["content"]
    node = {"__class__": name, "__module__": module, "__loader__": "ConstructorFromReduceNode",
            "content": attrs["verbose"]}
    if hidden:
        attrs["verbose"] = node
    else:
        schema = node | {"protocol": schema["protocol"], "_skops_version": schema["_skops_version"]}
    path.write_bytes(_rewrite(sio.dumps(model), schema))
    return path


def _payloads(marker: Path) -> dict[str, tuple[str, tuple]]:
    code = f"open({str(marker)!r}, 'w').write('code ran')"
    return {"runstring": (RUNSTRING, (code, {})), "sklearn-testing": (SK_RUN, (code,)),
            "numpy.save": (NP_SAVE, (str(marker), [1, 2, 3]))}


@pytest.fixture
def evil(tmp_path):
    """The crafted files (keyed by payload and hidden/alone) and the marker each would write."""
    marker = tmp_path / "marker.npy"  # numpy.save keeps a name ending in .npy
    files = {}
    for key, (call, args) in _payloads(marker).items():
        files[key] = (_crafted(tmp_path / f"{key}.skops", call, args, hidden=False), call)
    call, args = _payloads(marker)["runstring"]
    files["hidden"] = (_crafted(tmp_path / "hidden.skops", call, args, hidden=True), call)
    _table().to_csv(tmp_path / "data.csv", index=False)
    return files, marker, tmp_path / "data.csv"


KEYS = ["runstring", "sklearn-testing", "numpy.save", "hidden"]


@pytest.mark.parametrize("key", KEYS)
def test_skops_file_that_calls_a_code_running_function_is_refused_by_load_model(evil, key):
    """Attack: a .skops naming numpy's/scikit-learn's exec helpers or numpy.save ran them while loading."""
    files, marker, _ = evil
    path, call = files[key]
    assert call in sio.get_untrusted_types(file=path)  # skops's own default check refuses it too
    with pytest.raises(CandorError, match=rf"{path.name}: refusing to load types .*: {call.replace('.', '[.]')}"):
        load_model(path)
    assert not marker.exists()


def test_the_hidden_call_sits_in_an_otherwise_ordinary_logistic_regression(evil):
    """The hidden variant names nothing but the call beyond what skops trusts; only the trust flag loads it."""
    files, marker, _ = evil
    path, call = files["hidden"]
    assert sio.get_untrusted_types(file=path) == [call]
    with pytest.raises(CandorError, match="only from the command line, for a file you trust: --trust-model-code"):
        load_model(path)
    assert not marker.exists()
    model = load_model(path, trust_pickle=True)  # the flag means exactly this: the file's code runs
    assert marker.read_text() == "code ran" and type(model).__name__ == "LogisticRegression"


@pytest.mark.parametrize("key", ["runstring", "hidden"])
def test_check_command_refuses_the_file_with_one_line_and_exit_2(evil, key):
    """Attack: ``python -m app check --model evil.skops`` ran the payload."""
    files, marker, data = evil
    path, call = files[key]
    out = subprocess.run([sys.executable, "-m", "app", "check", "--model", str(path), "--data", str(data),
                          "--target", "label"], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert out.returncode == 2, out.stderr
    assert out.stderr.startswith(f"candor: error: {path.name}: refusing to load types ") and out.stderr.count("\n") == 1
    assert call in out.stderr and out.stdout == ""
    assert not marker.exists()


@pytest.mark.parametrize("key", KEYS)
def test_upload_refuses_the_file_and_takes_no_trust_flag(evil, key, tmp_path, monkeypatch):
    """Attack: an anonymous upload of the file ran the payload inside the server process."""
    import inspect

    from app.services.upload import receive

    files, marker, _ = evil
    path, call = files[key]
    monkeypatch.setenv("CANDOR_UPLOAD_DIR", str(tmp_path / "uploads"))
    monkeypatch.setenv("CANDOR_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("CANDOR_TRUST_PICKLE", "1")  # the operator's command-line flag never reaches uploads
    assert not {"trust", "trust_pickle", "trust_code"} & set(inspect.signature(receive).parameters)
    content = "data:application/octet-stream;base64," + base64.b64encode(path.read_bytes()).decode()
    with pytest.raises(CandorError, match=rf"{path.name}: refusing to load types .*{call.replace('.', '[.]')}"):
        receive(path.name, content, "model")
    assert not marker.exists()
    assert not list((tmp_path / "uploads").glob("*.skops"))  # the refused file is not kept


def test_a_partial_may_only_wrap_a_reviewed_function(tmp_path):
    """Attack: functools.partial was trusted whatever it wrapped (here a numpy ufunc skops trusts by default)."""
    import functools

    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import FunctionTransformer

    frame = _table()
    model = make_pipeline(FunctionTransformer(functools.partial(np.add, 1.0)), LogisticRegression())
    sio.dump(model.fit(frame[["x", "z"]], frame.label), tmp_path / "p.skops")
    with pytest.raises(CandorError, match=r"p.skops: refusing a functools.partial of numpy.add .*may only wrap "
                                          r"sklearn.utils.validation.check_array"):
        load_model(tmp_path / "p.skops")


# --- TorchScript -----------------------------------------------------------------------------------


class FileWriter(torch.nn.Module):
    """A tabular model (3 features -> 2 logits) that overwrites the file at ``path`` whenever it runs."""

    def __init__(self, path: str):
        super().__init__()
        self.path = path
        self.w = torch.nn.Parameter(torch.tensor([[1.0, -1.0], [0.5, -0.5], [0.0, 0.0]]))

    def forward(self, x):
        t = torch.from_file(self.path, True, 5, dtype=torch.uint8)
        t.fill_(88)  # writes "XXXXX" into the file through a shared mapping
        return x @ self.w + t[:1].float() * 0.0


def test_torchscript_runs_code_so_it_needs_the_trust_flag(tmp_path, capsys):
    """Attack: a TorchScript archive loaded (and ran, writing a file) with no trust flag at all."""
    from app.cli.check import main as check

    marker = tmp_path / "victim.txt"
    marker.write_text("clean")
    torch.jit.script(FileWriter(str(marker))).save(tmp_path / "m.pt")
    frame = _table().assign(w=0.0)[["x", "z", "w", "label"]]
    frame.to_csv(tmp_path / "d.csv", index=False)
    opts = TorchOptions(classes=("hi", "lo"))
    with pytest.raises(CandorError, match=r"m.pt is a TorchScript archive: a program that runs when loaded .*"
                                          r"--trust-model-code"):
        load_pair(tmp_path / "m.pt", tmp_path / "d.csv", "label", torch_options=opts)
    code = check(["--model", str(tmp_path / "m.pt"), "--data", str(tmp_path / "d.csv"), "--target", "label",
                  "--classes", "hi,lo"])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("candor: error: m.pt is a TorchScript archive") and err.count("\n") == 1
    assert marker.read_text() == "clean"
    ws = load_pair(tmp_path / "m.pt", tmp_path / "d.csv", "label", torch_options=opts, trust_pickle=True)
    assert ws.adapter.class_names == ("hi", "lo") and marker.read_text() == "XXXXX"  # with the flag, its code ran


# --- memory and crashes ----------------------------------------------------------------------------


def _npy_header(shape: tuple, dtype=np.float64) -> bytes:
    from numpy.lib import format as npformat

    buf = io.BytesIO()
    npformat.write_array_header_1_0(buf, {"descr": npformat.dtype_to_descr(np.dtype(dtype)), "fortran_order": False,
                                          "shape": shape})
    return buf.getvalue()


def _stream_member(path: Path, src: bytes, member: str, n_bytes: int) -> Path:
    """The skops zip ``src`` with ``member`` replaced by ``n_bytes`` of deflated zeros (streamed: never held whole)."""
    chunk = bytes(64 * 2**20)
    with zipfile.ZipFile(io.BytesIO(src)) as zin, zipfile.ZipFile(path, "w") as zout:
        for info in zin.infolist():
            if info.filename != member:
                zout.writestr(info.filename, zin.read(info))
        info = zipfile.ZipInfo(member)
        info.compress_type = zipfile.ZIP_DEFLATED
        with zout.open(info, "w", force_zip64=True) as f:
            header = _npy_header((1, n_bytes // 8))
            f.write(header)
            left = n_bytes
            while left:
                f.write(chunk[:min(left, len(chunk))])
                left -= min(left, len(chunk))
    return path


PEAK = textwrap.dedent("""
    import re, sys
    import psutil
    from workspace.errors import CandorError
    from workspace.model_files import load_model
    from workspace.workspace import SAMPLE_MODEL
    hwm = lambda: int(re.search(r"VmHWM:\\s+(\\d+) kB", open("/proc/self/status").read()).group(1)) * 1024
    load_model(SAMPLE_MODEL)  # imports and first-use caches happen here, not in the measurement
    peak0, rss0 = hwm(), psutil.Process().memory_info().rss
    try:
        load_model(sys.argv[1])
        print("LOADED")
    except CandorError as err:
        print("REFUSED", err)
    print(hwm() - peak0, psutil.Process().memory_info().rss - rss0)
""")
"""Prints whether the file loaded, then the growth of the peak (VmHWM, reset by exec) and current RSS in bytes."""


def test_a_small_file_that_inflates_past_the_limit_is_refused_before_it_is_unpacked(tmp_path):
    """Attack: a ~1 MiB skops file took over 1 GiB of memory while loading (a deflated member of zeros)."""
    path = _stream_member(tmp_path / "bomb.skops", *_bomb_source(), n_bytes=1100 * 2**20)
    assert path.stat().st_size < 2 * 2**20
    out = subprocess.run([sys.executable, "-c", PEAK, str(path)], capture_output=True, text=True, cwd=ROOT,
                         timeout=300)
    lines = out.stdout.splitlines()
    assert lines[0].startswith("REFUSED bomb.skops: unpacks to 1,100.0 MiB"), out.stdout + out.stderr
    assert "over the 1,024.0 MiB limit for model files (CANDOR_MAX_MODEL_UNPACKED_MB)" in lines[0]
    peak_growth, rss_growth = map(int, lines[1].split())
    assert peak_growth < 64 * 2**20 and rss_growth < 64 * 2**20  # the archive was never unpacked


def _bomb_source() -> tuple[bytes, str]:
    frame = _table()
    src = sio.dumps(LogisticRegression().fit(frame[["x", "z"]], frame.label))
    schema = json.loads(zipfile.ZipFile(io.BytesIO(src)).read("schema.json"))
    return src, schema["content"]["content"]["coef_"]["file"]


def test_a_member_that_inflates_more_than_100_times_is_refused_under_the_limit(tmp_path, monkeypatch):
    """Attack: the same bomb below the total limit: 40 MiB from ~40 KiB is refused by its compression ratio."""
    path = _stream_member(tmp_path / "ratio.skops", *_bomb_source(), n_bytes=40 * 2**20)
    with pytest.raises(CandorError, match=r"ratio.skops: member \S+\.npy inflates from [\d,]+ bytes to 40.0 MiB "
                                          r"\([\d,]+ times; at most 100 times"):
        load_model(path)


def test_the_limit_is_set_by_its_environment_variable(tmp_path, monkeypatch):
    """A 24 MiB array stored uncompressed loads by default, and is refused under CANDOR_MAX_MODEL_UNPACKED_MB=16."""
    frame = _table()
    model = LogisticRegression().fit(frame[["x", "z"]], frame.label)
    model.big_ = np.ones(3 * 2**20)
    sio.dump(model, tmp_path / "big.skops")
    assert type(load_model(tmp_path / "big.skops")).__name__ == "LogisticRegression"
    monkeypatch.setenv("CANDOR_MAX_MODEL_UNPACKED_MB", "16")
    with pytest.raises(CandorError, match=r"big.skops: unpacks to 24.0 MiB \(\d+ members\), over the 16.0 MiB limit"):
        load_model(tmp_path / "big.skops")
    monkeypatch.setenv("CANDOR_MAX_MODEL_UNPACKED_MB", "lots")
    with pytest.raises(CandorError, match="CANDOR_MAX_MODEL_UNPACKED_MB must be a positive whole number of MiB, "
                                          "got 'lots'"):
        load_model(tmp_path / "big.skops")


def test_an_array_header_declaring_more_than_the_file_holds_is_refused(tmp_path):
    """Attack: a .npy header declaring 10**12 floats over 8 stored bytes makes numpy allocate the declared size."""
    src, member = _bomb_source()
    path = tmp_path / "shape.skops"
    schema = json.loads(zipfile.ZipFile(io.BytesIO(src)).read("schema.json"))
    path.write_bytes(_rewrite(src, schema, {member: _npy_header((1, 10**12)) + bytes(8)}))
    with pytest.raises(CandorError, match=r"shape.skops: member \S+\.npy declares an array of shape \(1, "
                                          r"1000000000000\) \(8,000,000,000,000 bytes\) but holds 8 bytes"):
        load_model(path)


def _corrupt_tree(tmp_path, name: str, field: str, node: int, value: int) -> Path:
    """A fitted GradientBoostingClassifier whose first tree's ``field`` of ``node`` is set to ``value``."""
    from sklearn.ensemble import GradientBoostingClassifier

    frame = _table()
    gb = GradientBoostingClassifier(n_estimators=3, max_depth=2, random_state=0).fit(frame[["x", "z"]], frame.label)
    src = sio.dumps(gb)
    schema = json.loads(zipfile.ZipFile(io.BytesIO(src)).read("schema.json"))
    first = schema["content"]["content"]["estimators_"]["content"][0]  # an object ndarray of trees
    nodes_file = _find(first, "nodes")["file"]
    nodes = np.load(io.BytesIO(zipfile.ZipFile(io.BytesIO(src)).read(nodes_file)))
    nodes[field][node] = value
    buf = io.BytesIO()
    np.save(buf, nodes)
    path = tmp_path / name
    path.write_bytes(_rewrite(src, schema, {nodes_file: buf.getvalue()}))
    return path


def _find(tree, key):
    stack = [tree]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if isinstance(item.get(key), dict) and "file" in item[key]:
                return item[key]
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    raise KeyError(key)


@pytest.mark.parametrize("field, value, message", [
    ("left_child", 10**6, r"node 0's left child is 1000000, outside nodes 1 to \d+"),
    ("right_child", 0, r"node 0's right child is 0, outside nodes 1 to \d+"),  # a cycle: predict never returns
    ("feature", 7, r"node 0 splits on feature 7, but the model takes 2 features"),
])
def test_a_tree_pointing_outside_itself_is_refused_before_it_can_crash_the_server(tmp_path, field, value, message):
    """Attack: scikit-learn's compiled tree walk indexes these arrays unchecked: a segfault or an endless loop."""
    path = _corrupt_tree(tmp_path, "gb.skops", field, 0, value)
    with pytest.raises(CandorError, match=rf"gb.skops: a decision tree is corrupt: {message}"):
        load_model(path)


def _hide(model, path: Path, call: str, args: tuple) -> Path:
    """``model`` dumped with one extra attribute whose loading calls ``call(*args)``."""
    model.candor_extra_ = args
    src = sio.dumps(model)
    del model.candor_extra_
    schema = json.loads(zipfile.ZipFile(io.BytesIO(src)).read("schema.json"))
    attrs = schema["content"]["content"]
    module, name = call.rsplit(".", 1)
    attrs["candor_extra_"] = {"__class__": name, "__module__": module, "__loader__": "ConstructorFromReduceNode",
                              "content": attrs["candor_extra_"]}
    path.write_bytes(_rewrite(src, schema))
    return path


def test_every_estimator_family_loads_and_the_same_model_with_a_hidden_call_does_not(tmp_path):
    """The reviewed list refuses by name, not by family: the sample and real Pipelines, HistGradientBoosting with
    categories, SVC, KNN, MLP and forests load and predict as fitted; each with one hidden exec call is refused."""
    from sklearn.compose import make_column_selector, make_column_transformer
    from sklearn.ensemble import HistGradientBoostingClassifier, RandomForestClassifier
    from sklearn.neighbors import KNeighborsClassifier
    from sklearn.neural_network import MLPClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler
    from sklearn.svm import SVC

    from workspace.workspace import SAMPLE_MODEL

    assert type(load_model(SAMPLE_MODEL)).__name__ == "GradientBoostingClassifier"
    marker = tmp_path / "marker"
    frame = _table().assign(c=lambda f: pd.Categorical(np.where(f.x > 1, "p", "q")))
    X, y = frame[["x", "z", "c"]], frame.label
    ct = make_column_transformer((StandardScaler(), make_column_selector(dtype_include=np.number)),
                                 (OneHotEncoder(), ["c"]))
    models = [HistGradientBoostingClassifier(max_iter=5, categorical_features="from_dtype"),
              make_pipeline(ct, SVC()), make_pipeline(ct, KNeighborsClassifier(algorithm="kd_tree")),
              make_pipeline(ct, MLPClassifier(max_iter=300, random_state=0)),
              make_pipeline(ct, RandomForestClassifier(5, random_state=0))]
    code = f"open({str(marker)!r}, 'w').write('code ran')"
    for i, m in enumerate(models):
        m.fit(X, y)
        sio.dump(m, tmp_path / f"m{i}.skops")
        np.testing.assert_array_equal(load_model(tmp_path / f"m{i}.skops").predict(X), m.predict(X))
        evil = _hide(m, tmp_path / f"evil{i}.skops", RUNSTRING, (code, {}))
        with pytest.raises(CandorError, match=rf"evil{i}.skops: refusing to load types .*: {RUNSTRING};"):
            load_model(evil)
        assert not marker.exists()
