"""``python -m app check`` exit codes, and the security rules: trusted types, pickle flag, upload names, fingerprints."""
import subprocess
import sys
from pathlib import Path

import joblib
import numpy as np
import pandas as pd
import pytest
import skops.io as sio
from sklearn.linear_model import LogisticRegression

from app.cli.check import main as check
from workspace.errors import CandorError
from workspace.model_files import load_model
from workspace.workspace import load_pair
from workspace.uploads import safe_name, store_upload

from .conftest import write_pair

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    d = tmp_path_factory.mktemp("pair")
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"x": rng.normal(size=80), "colour": rng.choice(["red", "blue"], 80)})
    frame["label"] = np.where(frame.x > 0, "hi", "lo")
    model = LogisticRegression().fit(frame[["x"]], frame.label)
    return write_pair(d, model, frame[["x", "label"]])


def test_check_subprocess_prints_summary_and_exits_0(pair):
    model, data = pair
    out = subprocess.run([sys.executable, "-m", "app", "check", "--model", str(model), "--data", str(data),
                          "--target", "label"], capture_output=True, text=True, cwd=ROOT, timeout=180)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == "model   data.skops: LogisticRegression, binary, outputs: probability (hi, lo)"
    assert lines[1] == "data    data.csv: 80 rows x 1 features (1 numeric); target 'label'"
    assert [ln.split()[0] for ln in lines] == ["model", "data", "cost", "shap", "lime", "permimp", "pdp", "perf", "rules",
                                             "persuade", "ok"]
    assert "log-odds of class 'lo'" in lines[3] and "additivity gap" in lines[3]


@pytest.mark.parametrize("argv, message", [
    (["--target", "nope"], "data.csv: target column 'nope' not found; columns are x, label"),
    (["--row", "999"], "--row 999 does not exist; rows are 0 to 79"),
])
def test_check_errors_are_one_line_exit_2(pair, capsys, argv, message):
    model, data = pair
    base = ["--model", str(model), "--data", str(data), "--target", "label"]
    code = check(base + argv)
    err = capsys.readouterr().err
    assert code == 2 and err == f"candor: error: {message}\n"


class Custom(LogisticRegression):
    """A subclass outside scikit-learn: skops must refuse it."""


class Drifting(LogisticRegression):
    """Mutates itself on every predict_proba call: the fingerprint must catch it."""

    def predict_proba(self, X):
        self.intercept_ = self.intercept_ + 0.5
        return super().predict_proba(X)


def test_skops_refuses_types_outside_the_trusted_list(tmp_path):
    X = pd.DataFrame({"x": [0.0, 1, 2, 3]})
    sio.dump(Custom().fit(X, [0, 1, 0, 1]), tmp_path / "m.skops")
    with pytest.raises(CandorError, match=r"m.skops: refusing to load types that are not on Candor's reviewed list "
                                          r".*: tests.byo.test_check_security.Custom;"):
        load_model(tmp_path / "m.skops")


def test_pickle_only_with_the_trust_flag(tmp_path):
    X = pd.DataFrame({"x": [0.0, 1, 2, 3]})
    joblib.dump(LogisticRegression().fit(X, [0, 1, 0, 1]), tmp_path / "m.joblib")
    with pytest.raises(CandorError, match="pass --trust-pickle only if you trust this file"):
        load_model(tmp_path / "m.joblib")
    assert type(load_model(tmp_path / "m.joblib", trust_pickle=True)).__name__ == "LogisticRegression"


def test_a_model_mutated_by_explaining_is_reported(tmp_path, capsys):
    rng = np.random.default_rng(1)
    frame = pd.DataFrame({"x": rng.normal(size=60)})
    frame["y"] = np.where(frame.x > 0, "a", "b")
    joblib.dump(Drifting().fit(frame[["x"]], frame.y), tmp_path / "drift.joblib")
    frame.to_csv(tmp_path / "d.csv", index=False)
    code = check(["--model", str(tmp_path / "drift.joblib"), "--data", str(tmp_path / "d.csv"), "--target", "y",
                  "--trust-pickle"])
    # the services' guard (the line a page shows) names the computation during which the model changed
    assert code == 2 and "the model's predictions changed while computing the SHAP explainer" in capsys.readouterr().err


def test_explaining_never_changes_a_normal_model(pair):
    ws = load_pair(*pair, "label")
    before = ws.adapter.fingerprint(ws.X)
    coef = ws.adapter.model.coef_.copy()
    from explainers import LimeExplainer, ShapExplainer

    ShapExplainer(ws.adapter, background=ws.X).explain(ws.X.iloc[[0]])
    LimeExplainer(ws.adapter.outputs, training_data=ws.X, class_names=ws.adapter.output_names,
                  num_samples=200).explain(ws.X.iloc[[0]])
    assert ws.adapter.fingerprint(ws.X) == before and np.array_equal(ws.adapter.model.coef_, coef)


@pytest.mark.parametrize("name, stored", [
    ("../../etc/passwd.csv", "passwd.csv"), ("/abs/path/data.csv", "data.csv"), ("C:\\Users\\x\\d.csv", "d.csv"),
    ("..\\..\\boot.ini.csv", "boot.ini.csv"), (".hidden.csv", "hidden.csv"), ("na\x00me<>|.csv", "name___.csv"),
])
def test_upload_names_cannot_escape_the_folder(tmp_path, name, stored):
    path = store_upload(name, b"a,b\n1,2\n", kind="data", folder=tmp_path)
    assert path.parent == tmp_path.resolve() and path.name.endswith("-" + stored) and safe_name(name) == stored


@pytest.mark.parametrize("name, content, kind, message", [
    ("..", b"x", "data", "has no usable file name"),
    ("model.pkl", b"x", "model", "pickle/joblib models load from the command line only"),
    ("big.csv", b"x" * (50 * 2**20 + 1), "data", "over the 50 MiB limit"),
    ("d.csv", "data:text/csv;base64,@@@", "data", "not valid base64"),
])
def test_upload_refusals_name_the_file(tmp_path, name, content, kind, message):
    with pytest.raises(CandorError, match=message):
        store_upload(name, content, kind=kind, folder=tmp_path)


def test_exported_csv_cells_are_safe_from_formula_injection():
    from study.export import escape_text

    assert [escape_text(v) for v in ("=HYPERLINK(\"x\")", "+1", "-2", "@SUM(A1)", "plain")] == \
        ["'=HYPERLINK(\"x\")", "'+1", "'-2", "'@SUM(A1)", "plain"]


def test_a_partial_of_a_scikit_learn_function_loads_and_a_partial_of_anything_else_does_not(tmp_path, rng):
    """HistGradientBoosting with native categories stores partial(check_array); partial(os.getcwd) is refused."""
    import functools
    import os

    from sklearn.ensemble import HistGradientBoostingClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import FunctionTransformer

    X = pd.DataFrame({"a": rng.normal(size=200), "c": pd.Categorical(rng.choice(["x", "y", "z"], 200))})
    y = np.where((X.a > 0) ^ (X.c == "z"), "yes", "no")
    hgb = HistGradientBoostingClassifier(categorical_features="from_dtype", random_state=0).fit(X, y)
    sio.dump(hgb, tmp_path / "hgb.skops")
    assert "functools.partial" in sio.get_untrusted_types(file=tmp_path / "hgb.skops")
    loaded = load_model(tmp_path / "hgb.skops")
    np.testing.assert_array_equal(loaded.predict_proba(X), hgb.predict_proba(X))
    evil = make_pipeline(FunctionTransformer(functools.partial(os.getcwd)), LogisticRegression())
    sio.dump(evil, tmp_path / "evil.skops")
    with pytest.raises(CandorError, match=r"evil.skops: refusing to load types that are not on Candor's reviewed "
                                          r"list .*: posix.getcwd;"):
        load_model(tmp_path / "evil.skops")
