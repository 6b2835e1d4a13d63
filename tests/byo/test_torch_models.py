"""Issue 7, PyTorch models: TorchScript or state dict + trusted class, on real data, never unpickled or mutated.

Small MLPs (``tests/byo/torch_modules.py``) are trained for a few hundred full-batch
Adam steps on scikit-learn's breast cancer (binary), wine (3 classes) and diabetes
(regression) tables, saved to files, and loaded back through ``workspace.workspace``.
"""
import dataclasses
import json
import re
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
import torch
from sklearn.datasets import load_breast_cancer, load_diabetes, load_wine
from sklearn.linear_model import LogisticRegression

from app.cli.check import main as check
from workspace.errors import CandorError
from workspace.workspace import load_pair, load_user_workspace
from workspace.torch_options import TorchOptions
from workspace.uploads import store_upload
from explainers import LimeExplainer, ShapExplainer
from explainers.model_adapter import OneVsRest
from explainers.torch_model import TorchTabularModel

from .conftest import write_pair
from .torch_modules import RenamedMLP, SoftmaxMLP, TabularMLP

ROOT = Path(__file__).resolve().parents[2]
MLP = "tests.byo.torch_modules:TabularMLP"


def _fit(X: pd.DataFrame, y: np.ndarray, n_outputs: int, steps: int = 300) -> TabularMLP:
    """A TabularMLP standardising with the table's mean/std, trained full-batch (seed 0)."""
    torch.manual_seed(0)
    m = TabularMLP(X.shape[1], n_outputs)
    m.mean.copy_(torch.tensor(X.mean().to_numpy(), dtype=torch.float32))
    m.scale.copy_(torch.tensor(X.std().to_numpy(), dtype=torch.float32))
    xt = torch.tensor(X.to_numpy(), dtype=torch.float32)
    if n_outputs == 1 and y.dtype.kind == "f":  # regression on a standardised target
        yt, mu, sd = torch.tensor(y, dtype=torch.float32), float(y.mean()), float(y.std())
        loss_fn = lambda z: torch.mean((z - (yt - mu) / sd) ** 2)  # noqa: E731
    elif n_outputs == 1:
        yt = torch.tensor(y, dtype=torch.float32)
        loss_fn = lambda z: torch.nn.functional.binary_cross_entropy_with_logits(z, yt)  # noqa: E731
    else:
        yt = torch.tensor(y)
        loss_fn = lambda z: torch.nn.functional.cross_entropy(z, yt)  # noqa: E731
    opt = torch.optim.Adam(m.parameters(), lr=0.01)
    for _ in range(steps):
        opt.zero_grad()
        loss_fn(m(xt)).backward()
        opt.step()
    return m.eval()


def _logits(module, frame: pd.DataFrame) -> np.ndarray:
    with torch.no_grad():
        return module(torch.tensor(frame.to_numpy(), dtype=torch.float32)).double().numpy()


def _softmax(z):
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """Trained modules, their files (TorchScript, state dicts, a pickled whole model) and tables."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # 2 threads on the shared 2-core machine: training 20x slower (ENVIRONMENT-NOTES)
    d = tmp_path_factory.mktemp("torch")
    bc = load_breast_cancer(as_frame=True)
    bc_names = np.array(bc.target_names)  # malignant, benign
    bc_X, bc_y = bc.data, bc.target.to_numpy()
    bc_m = _fit(bc_X, bc_y, 2)
    torch.jit.script(bc_m).save(d / "bc.pt")
    (d / "bc.pt.json").write_text(json.dumps({"classes": list(bc_names)}))
    torch.save(bc_m.state_dict(), d / "bc_weights.pt")
    torch.save(bc_m, d / "bc_full.pt")  # a whole pickled model: must be refused
    bc_frame = bc_X.assign(diagnosis=bc_names[bc_y])
    bc_frame.to_csv(d / "bc.csv", index=False)
    one = _fit(bc_X, bc_y.astype(np.int64), 1)
    torch.jit.script(one).save(d / "bc_one_logit.pt")
    torch.jit.script(SoftmaxMLP(bc_m)).save(d / "bc_softmax.pt")

    wine = load_wine(as_frame=True)
    w_X, w_y = wine.data, wine.target.to_numpy()
    w_m = _fit(w_X, w_y, 3)
    torch.save(w_m.state_dict(), d / "wine.pt")
    sidecar = {"class": MLP, "kwargs": {"n_features": 13, "n_outputs": 3}, "classes": list(wine.target_names)}
    (d / "wine.pt.json").write_text(json.dumps(sidecar))
    from safetensors.torch import save_file

    save_file(w_m.state_dict(), str(d / "wine.safetensors"))
    w_frame = w_X.assign(cultivar=np.array(wine.target_names)[w_y])
    w_frame.to_csv(d / "wine.csv", index=False)

    db = load_diabetes(as_frame=True)
    db_m = _fit(db.data, db.target.to_numpy(dtype=float), 1)
    torch.jit.script(db_m).save(d / "diabetes.pt")
    db.data.assign(progression=db.target).to_csv(d / "diabetes.csv", index=False)
    yield SimpleNamespace(dir=d, bc=bc_m, bc_X=bc_X, bc_frame=bc_frame, one=one, wine=w_m, w_X=w_X,
                           w_frame=w_frame, wine_classes=tuple(wine.target_names), db=db_m, db_X=db.data,
                           db_std=float(db.target.std()), db_mean=float(db.target.mean()))
    torch.set_num_threads(threads)


WINE_OPTIONS = TorchOptions(model_class=MLP, kwargs={"n_features": 13, "n_outputs": 3},
                            classes=("class_0", "class_1", "class_2"))


def test_models_learned_something(files):
    assert np.mean(np.argmax(_logits(files.bc, files.bc_X), 1) == load_breast_cancer().target) > 0.97
    assert np.mean(np.argmax(_logits(files.wine, files.w_X), 1) == load_wine().target) > 0.97


@pytest.mark.parametrize("model, options", [("bc.pt", None),
                                            ("bc_weights.pt", TorchOptions(MLP, {"n_features": 30, "n_outputs": 2},
                                                                           ("malignant", "benign")))])
def test_probabilities_are_the_softmax_of_the_module_logits(files, model, options):
    ws = load_pair(files.dir / model, files.dir / "bc.csv", "diagnosis", torch_options=options,
                   trust_pickle=options is None)  # TorchScript runs code: only with the trust flag
    a = ws.adapter
    assert isinstance(a.model, TorchTabularModel) and a.task == "binary" and a.kind == "probability"
    assert a.class_names == ("malignant", "benign") and a.model.n_features_in_ == 30
    want = _softmax(_logits(files.bc, files.bc_X))
    np.testing.assert_allclose(a.outputs(ws.X), want, atol=1e-6, rtol=0)
    np.testing.assert_array_equal(a.predict(ws.X), np.array(["malignant", "benign"])[want.argmax(1)])
    assert ("TorchScript bc.pt" if options is None else "state dict + " + MLP) in a.model.source


def test_one_logit_is_a_sigmoid_over_two_columns(files):
    ws = load_pair(files.dir / "bc_one_logit.pt", files.dir / "bc.csv", "diagnosis", trust_pickle=True,
                   torch_options=TorchOptions(classes=("malignant", "benign")))
    z = _logits(files.one, files.bc_X)
    assert z.ndim == 1
    p = ws.adapter.outputs(ws.X)
    np.testing.assert_allclose(p[:, 1], 1 / (1 + np.exp(-z)), atol=1e-12, rtol=0)  # float64 sigmoid of the logit
    np.testing.assert_allclose(p.sum(axis=1), 1.0, atol=1e-15)


def test_probability_outputs_are_taken_as_they_are_and_logits_are_not_probabilities(files):
    ws = load_pair(files.dir / "bc_softmax.pt", files.dir / "bc.csv", "diagnosis", trust_pickle=True,
                   torch_options=TorchOptions(classes=("malignant", "benign"), output="probabilities"))
    with torch.no_grad():
        direct = SoftmaxMLP(files.bc)(torch.tensor(files.bc_X.to_numpy(), dtype=torch.float32)).double().numpy()
    np.testing.assert_array_equal(ws.adapter.outputs(ws.X), direct)
    with pytest.raises(CandorError, match=r"bc.pt: .*output='probabilities' but the module's outputs are not "
                                          r"probabilities .*are they logits\?"):
        load_pair(files.dir / "bc.pt", files.dir / "bc.csv", "diagnosis", trust_pickle=True,
                  torch_options=TorchOptions(output="probabilities"))


def test_regressor_without_classes_has_no_predict_proba(files):
    ws = load_pair(files.dir / "diabetes.pt", files.dir / "diabetes.csv", "progression", trust_pickle=True)
    m = ws.adapter.model
    assert ws.task == "regression" and not hasattr(m, "predict_proba") and not hasattr(m, "classes_")
    np.testing.assert_array_equal(ws.adapter.outputs(ws.X)[:, 0], _logits(files.db, files.db_X))
    pred = ws.adapter.outputs(ws.X)[:, 0] * files.db_std + files.db_mean
    r2 = 1 - np.mean((pred - ws.y) ** 2) / np.var(ws.y)
    assert r2 > 0.4  # a real fit of the diabetes target (standardised units)


def test_wine_multiclass_shap_values_are_rows_features_classes(files):
    ws = load_pair(files.dir / "wine.pt", files.dir / "wine.csv", "cultivar")  # everything from wine.pt.json
    a = ws.adapter
    assert a.task == "multiclass" and a.output_names == files.wine_classes
    e = ShapExplainer(a, background=ws.X.iloc[ws.train_idx], target_index=0, target_name="class_0",
                      background_size=40)
    out = e.explain_outputs(ws.X.iloc[:4])
    assert out.values.shape == (4, 13, 3) and out.output_names == files.wine_classes
    proba = _softmax(_logits(files.wine, files.w_X.iloc[:4]))
    np.testing.assert_allclose(out.base_values + out.values.sum(axis=1), proba, atol=1e-6)


def test_wine_dashboard_workspace_is_one_class_against_the_rest(files):
    ws = load_user_workspace(files.dir / "wine.safetensors", files.dir / "wine.csv", "cultivar",
                             torch_options=WINE_OPTIONS)
    assert isinstance(ws.model, OneVsRest) and ws.classes == ("not class_2", "class_2")
    assert ws.X.shape == (178, 13) and set(np.unique(ws.y)) == {0, 1}
    p = _softmax(_logits(files.wine, files.w_X))[:, 2]
    np.testing.assert_allclose(ws.model.predict_proba(ws.X), np.column_stack([1 - p, p]), atol=1e-6)


def test_explaining_leaves_every_parameter_byte_identical(files):
    from explainers.gradients import integrated_gradients

    ws = load_pair(files.dir / "bc.pt", files.dir / "bc.csv", "diagnosis", trust_pickle=True)
    a = ws.adapter
    before = {k: v.clone() for k, v in a.model.module.state_dict().items()}
    fp = a.model.parameter_fingerprint()
    assert fp == TorchTabularModel(files.bc, task="regression").parameter_fingerprint()  # same bytes as trained
    x, bg = ws.X.iloc[[5]], ws.X.iloc[ws.train_idx]
    ShapExplainer(a, background=bg, target_index=1, target_name="benign", background_size=30).explain(x)
    LimeExplainer(a.outputs, training_data=bg, class_names=a.output_names, num_samples=300).explain(x)
    ig = integrated_gradients(a.model.scalar_module(1), x.to_numpy()[0], bg.median().to_numpy(),
                              feature_names=a.feature_names, target="benign", output_space="probability")
    assert abs(ig.params["convergence_delta"]) <= 0.01 * abs(ig.prediction - ig.base_value)
    assert ig.prediction == pytest.approx(a.outputs(x)[0, 1], abs=1e-6)  # the same output as SHAP explains
    after = a.model.module.state_dict()
    assert all(torch.equal(before[k], after[k]) for k in before) and a.model.parameter_fingerprint() == fp
    assert not a.model.module.training and all(p.grad is None for p in a.model.module.parameters())


def test_check_subprocess_explains_a_torchscript_file_from_its_sidecar(files):
    out = subprocess.run([sys.executable, "-m", "app", "check", "--model", str(files.dir / "bc.pt"),
                          "--data", str(files.dir / "bc.csv"), "--target", "diagnosis", "--trust-model-code"],
                         capture_output=True, text=True, cwd=ROOT, timeout=180)
    assert out.returncode == 0, out.stderr
    assert "Deprecation" not in out.stderr  # torch 2.13's TorchScript deprecation is not the user's problem
    notes = [ln for ln in out.stdout.splitlines() if ln.startswith("note")]
    assert notes == ["note    bc.csv: the model was fitted without column names; columns are matched by position"]
    lines = [ln for ln in out.stdout.splitlines() if not ln.startswith("note")]
    assert [ln.split()[0] for ln in lines] == ["model", "data", "torch", "cost", "shap", "lime", "permimp", "pdp", "perf",
                                             "ig", "rules", "persuade", "ok"]
    assert lines[0] == "model   bc.pt: TorchTabularModel, binary, outputs: probability (malignant, benign)"
    fp = TorchTabularModel(files.bc, task="regression").parameter_fingerprint()[:16]
    assert f"parameters sha256 {fp}" in lines[2] and f"parameters sha256 {fp}" in lines[-1]
    assert "additivity gap" in lines[4] and "'benign' (probability of class 'benign')" in lines[4]  # the pages' class
    ig = re.search(r"f\(x\) - f\(baseline\) = (\S+), completeness gap (\S+)", lines[9])  # after permimp, pdp, perf
    assert abs(float(ig.group(2))) <= 0.01 * abs(float(ig.group(1)))


def test_check_state_dict_with_flags_multiclass(files, capsys):
    code = check(["--model", str(files.dir / "wine.safetensors"), "--data", str(files.dir / "wine.csv"),
                  "--target", "cultivar", "--torch-class", MLP, "--torch-kwargs", '{"n_features": 13, "n_outputs": 3}',
                  "--classes", "class_0,class_1,class_2"])
    out = capsys.readouterr()
    assert code == 0, out.err
    lines = {ln.split()[0]: ln for ln in out.out.splitlines()}
    assert "'class_2' (probability of class 'class_2')" in lines["shap"] and "local R2" in lines["lime"] and "completeness gap" in lines["ig"]
    assert f"state dict + {MLP} wine.safetensors" in lines["torch"]


@pytest.fixture(scope="module")
def bad_tables(files):
    d = files.dir
    cat = files.bc_frame.copy()
    cat["mean radius"] = np.where(cat["mean radius"] > 14, "big", "small")
    cat.to_csv(d / "cat.csv", index=False)
    nan = files.bc_frame.copy()
    nan.loc[[3, 7, 40], "mean texture"] = np.nan
    nan.to_csv(d / "nan.csv", index=False)
    files.bc_frame.drop(columns="mean area").to_csv(d / "narrow.csv", index=False)
    (d / "garbage.pt").write_bytes(b"not a torch file at all")
    (d / "typo.pt").write_bytes((d / "bc.pt").read_bytes())
    (d / "typo.pt.json").write_text('{"clases": ["a", "b"]}')
    write_pair(d, LogisticRegression(max_iter=500).fit(files.bc_X.iloc[:, :3], files.bc_frame.diagnosis),
               files.bc_frame.iloc[:, list(range(3)) + [30]], name="lr")
    return d


KW = '{"n_features": 30, "n_outputs": 2}'


@pytest.mark.parametrize("argv, message", [
    (["--model", "bc_full.pt"], "bc_full.pt: holds pickled Python objects (tests.byo.torch_modules.TabularMLP), e.g. "
                                "a whole model saved with torch.save(model); Candor never unpickles code"),
    (["--model", "bc_full.pt", "--trust-pickle"], "bc_full.pt: holds pickled Python objects"),
    (["--model", "bc_weights.pt"], "bc_weights.pt: not a TorchScript archive but a state dict (6 tensors), and no "
                                   "model class was given: pass --torch-class package.module:ClassName"),
    (["--model", "bc_weights.pt", "--torch-class", "tests.byo.torch_modules:RenamedMLP", "--torch-kwargs", KW],
     "bc_weights.pt: the weights do not fit tests.byo.torch_modules:RenamedMLP: missing keys: hidden.weight, "
     "hidden.bias, head.weight, head.bias; unexpected keys: mean, scale, net.0.weight, net.0.bias, net.2.weight"),
    (["--model", "bc_weights.pt", "--torch-class", MLP, "--torch-kwargs", '{"n_features": 30, "n_outputs": 2, '
                                                                           '"hidden": 8}'],
     "shape mismatch: net.0.weight file (16, 30) vs class (8, 30)"),
    (["--model", "bc_weights.pt", "--torch-class", "nope.nets:MLP"],
     "bc_weights.pt: cannot import module 'nope.nets' of class nope.nets:MLP (ModuleNotFoundError"),
    (["--model", "bc_weights.pt", "--torch-class", MLP, "--torch-kwargs", "[30]"],
     "--torch-kwargs must be a JSON object, got list"),
    (["--model", "bc.pt", "--data", "cat.csv", "--trust-model-code"], "cat.csv: the PyTorch model bc.pt takes numbers only, but column "
                                                "'mean radius' (category, dtype str) is not numeric"),
    (["--model", "bc.pt", "--data", "nan.csv", "--trust-model-code"], "bc.pt: the model outputs NaN for 3 rows of nan.csv, each with "
                                                "missing values (in 'mean texture'; first row 3)"),
    (["--model", "bc.pt", "--data", "narrow.csv", "--trust-model-code"], "narrow.csv: the model expects 30 features, the table has 29 "
                                                   "columns besides 'diagnosis'"),
    (["--model", "bc.pt", "--classes", "a,b,c", "--trust-model-code"], "bc.pt: the module gives 2 outputs per row for 3 classes (a, b, c)"),
    (["--model", "bc.pt", "--torch-class", MLP], "bc.pt is a TorchScript archive, which carries its own code"),
    (["--model", "garbage.pt"], "garbage.pt: not a PyTorch file Candor can read"),
    (["--model", "typo.pt"], "typo.pt.json: unknown keys clases"),
    (["--model", "lr.skops", "--data", "lr.csv", "--classes", "a,b,c"],  # --classes names scikit-learn classes too
     "lr.skops: --classes: 3 class names given (a, b, c) but LogisticRegression has 2 classes (benign, malignant)"),
    (["--model", "lr.skops", "--data", "lr.csv", "--torch-output", "logits"], "lr.skops: --torch-output applies to "
                                                                              "PyTorch models only"),
])
def test_torch_refusals_are_one_line_exit_2(files, bad_tables, capsys, argv, message):
    flags = [a for a in argv if a in ("--trust-pickle", "--trust-model-code")]
    pairs = [a for a in argv if a not in flags]
    opts = {"--data": "bc.csv", "--target": "diagnosis"} | dict(zip(pairs[::2], pairs[1::2]))
    code = check([x for k, v in opts.items() for x in (k, str(bad_tables / v) if k in ("--model", "--data") else v)]
                 + flags)
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("candor: error: ") and err.count("\n") == 1
    assert message in err


def test_uploads_still_take_skops_models_only(tmp_path, files):
    with pytest.raises(CandorError, match=r"bc.pt: a model upload must be one of .skops"):
        store_upload("bc.pt", (files.dir / "bc.pt").read_bytes(), kind="model", folder=tmp_path)


def test_torch_options_round_trip_through_the_environment():
    opts = TorchOptions.from_strings(MLP, KW, "benign, malignant", "probabilities")
    assert opts == TorchOptions(MLP, {"n_features": 30, "n_outputs": 2}, ("benign", "malignant"), "probabilities")
    env = opts.to_env()
    assert env["CANDOR_TORCH_CLASS"] == MLP and env["CANDOR_TORCH_CLASSES"] == "benign,malignant"
    assert TorchOptions.from_env(env) == opts and TorchOptions.from_env({}) == TorchOptions()


def test_wrapper_refuses_shapes_that_do_not_fit_the_classes():
    m = RenamedMLP(4, 3).eval()
    with pytest.raises(ValueError, match=r"the module gives 3 outputs per row for 2 classes \(a, b\); expected 2 or 1"):
        TorchTabularModel(m, task="classification", classes=("a", "b")).predict_proba(np.zeros((2, 4)))
    with pytest.raises(ValueError, match="the module gives 3 outputs per row, but no classes were given"):
        TorchTabularModel(m, task="regression").predict(np.zeros((2, 4)))
    with pytest.raises(ValueError, match="the model expects 4 features, got an input of shape"):
        TorchTabularModel(m, task="regression").predict(np.zeros((2, 5)))
    with pytest.raises(TypeError, match="column 'c' has dtype str; a PyTorch model takes numbers only"):
        TorchTabularModel(m, task="classification", classes=("a", "b", "c")).predict(
            pd.DataFrame({"a": [1.0], "b": [2.0], "c": ["x"], "d": [0.0]}))


def test_another_worker_reloads_a_state_dict_model_from_the_shared_selection(files, tmp_path, monkeypatch):
    """The options given on the command line (no sidecar for the safetensors file) travel in the selection file."""
    from app import services
    from app.services import selection
    from app.services.selection import Selection

    monkeypatch.setenv("CANDOR_STATE_DIR", str(tmp_path))
    previous_ws, previous_sel = services.state().workspace, selection.current()
    selection.start(previous_sel, warm=False)
    try:
        chosen = Selection(model=str(files.dir / "wine.safetensors"), data=str(files.dir / "wine.csv"),
                           target="cultivar", torch=dataclasses.asdict(WINE_OPTIONS))
        selection.install(chosen)
        assert services.select_class("class_0") == "Explaining class 'class_0' against the rest."
        installed = selection.current()
        monkeypatch.setattr(services.state(), "selection", Selection())  # a worker still on the sample
        monkeypatch.setattr(services.state(), "seen_mtime", None)
        selection.sync()
        ws = services.workspace()
        assert selection.current() == installed and ws.classes == ("not class_0", "class_0")
        p = _softmax(_logits(files.wine, files.w_X))[:, 0]
        np.testing.assert_allclose(ws.model.predict_proba(ws.X)[:, 1], p, atol=1e-6)
    finally:
        selection.start(previous_sel, warm=False)
        if previous_ws is not None:
            services.init(previous_ws, warm=False)
