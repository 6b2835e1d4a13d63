"""Issue 11, kinds 1, 2 and 5 (model files): no code runs from a model file, and no model file takes the server down
(the second half, files that inflate or whose trees point outside themselves: ``test_model_file_limits.py``).

Every malicious file is built here: a real skops file whose schema is edited so that loading it
*calls* a function of numpy or scikit-learn that runs a string of Python or writes a file (skops's
``ConstructorFromReduceNode`` calls ``module.name(*args)``), alone or hidden in one attribute of a
working LogisticRegression; a TorchScript module that writes into a file when it runs.
"""
from __future__ import annotations

import base64
import io
import json
import subprocess
import sys
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


def _partial_file(tmp_path: Path, name: str, edit=lambda text: text) -> Path:
    """A skops Pipeline holding ``functools.partial(np.add, 1.0)`` with its schema's text passed through ``edit``."""
    import functools

    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import FunctionTransformer

    frame = _table()
    model = make_pipeline(FunctionTransformer(functools.partial(np.add, 1.0)), LogisticRegression())
    sio.dump(model.fit(frame[["x", "z"]], frame.label), tmp_path / "plain.skops")
    out = tmp_path / name
    with zipfile.ZipFile(tmp_path / "plain.skops") as src, zipfile.ZipFile(out, "w") as dst:
        for info in src.infolist():
            data = src.read(info)
            dst.writestr(info, edit(data.decode()).encode() if info.filename == "schema.json" else data)
    return out


def test_a_partial_spelled_with_escapes_is_refused_too(tmp_path):
    """Attack on the unparsed schema's shortcut (issue 23): "PartialNode" written as \\u escapes, in the schema's
    JSON, is the same loader once decoded; the file is parsed and the partial refused."""
    escaped = _partial_file(tmp_path, "e.skops", lambda t: t.replace('"PartialNode"', '"\\u0050artialNode"'))
    assert b"PartialNode" not in zipfile.ZipFile(escaped).read("schema.json")
    with pytest.raises(CandorError, match=r"e.skops: refusing a functools.partial of numpy.add"):
        load_model(escaped)


def _as_constructor(node):
    """``node`` (a schema) with each PartialNode rewritten as skops's ConstructorFromReduceNode of the same class,
    called with the partial's function and arguments: the same ``functools.partial`` once loaded."""
    if isinstance(node, list):
        return [_as_constructor(v) for v in node]
    if not isinstance(node, dict):
        return node
    if node.get("__loader__") == "PartialNode":
        c = node["content"]
        return {"__class__": "partial", "__module__": "functools", "__loader__": "ConstructorFromReduceNode",
                "__id__": node["__id__"], "content": {"__class__": "tuple", "__module__": "builtins", "__id__": 1,
                                                      "__loader__": "TupleNode",
                                                      "content": [c["func"], *c["args"]["content"]]}}
    return {k: _as_constructor(v) for k, v in node.items()}


def test_a_partial_made_by_another_loader_is_refused(tmp_path):
    """Attack (found in review): skops's ConstructorFromReduceNode calls the class it names with the arguments it
    holds, so a schema naming functools.partial there built partial(np.add, 1.0) without a PartialNode, and the
    file loaded past the reviewed-functions rule. Any node naming functools.partial must be a PartialNode."""
    crafted = _partial_file(tmp_path, "c.skops", lambda t: json.dumps(_as_constructor(json.loads(t))))
    assert b"PartialNode" not in zipfile.ZipFile(crafted).read("schema.json")
    with pytest.raises(CandorError, match=r"c.skops: refusing a functools.partial made by ConstructorFromReduceNode"):
        load_model(crafted)


def test_a_schema_without_partials_is_not_parsed_to_look_for_one(tmp_path, monkeypatch):
    """The check reads a plain model's schema as text (a 200-tree forest's 3 MB parsed and walked cost 0.03 s of the
    landing page's path, issue 23); skops still parses it to load, and one with a partial is parsed here."""
    from workspace import model_safety

    frame = _table()
    sio.dump(LogisticRegression().fit(frame[["x", "z"]], frame.label), tmp_path / "lr.skops")
    parsed, loads = [], json.loads
    monkeypatch.setattr(model_safety.json, "loads", lambda text, **kw: parsed.append(len(text)) or loads(text, **kw))
    model_safety.check_partials(tmp_path / "lr.skops")
    assert parsed == []
    with pytest.raises(CandorError, match="refusing a functools.partial of numpy.add"):
        model_safety.check_partials(_partial_file(tmp_path, "p2.skops"))
    assert len(parsed) == 1


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
