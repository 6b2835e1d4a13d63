"""Loading the user's files: each bad input gets one line naming the problem, exit status 2."""
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import skops.io as sio
from sklearn.linear_model import LogisticRegression

from tests.e2e.serving import free_port
from workspace.errors import CandorError
from workspace.workspace import load_user_workspace

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def user_files(tmp_path_factory, bc):
    X, y, train, _ = bc
    d = tmp_path_factory.mktemp("user")
    cols = list(X.columns[:5])
    model = LogisticRegression(max_iter=3000).fit(X.iloc[train][cols], np.where(y.iloc[train] == 1, "M", "B"))
    sio.dump(model, d / "model.skops")
    frame = X[cols].assign(diagnosis=np.where(y == 1, "M", "B"))
    frame.to_csv(d / "data.csv", index=False)
    return d


def test_user_model_and_csv_load(user_files):
    ws = load_user_workspace(user_files / "model.skops", user_files / "data.csv", "diagnosis")
    assert ws.classes == ("B", "M") and ws.X.shape == (569, 5)
    assert len(ws.test_idx) == 143 and set(np.unique(ws.y)) == {0, 1}


@pytest.mark.parametrize("change, message", [
    (dict(model="missing.skops"), "model file not found"),
    (dict(model="data.csv"), "unsupported model file type .csv"),
    (dict(target="outcome"), "target column 'outcome' not found"),
    (dict(data="wide.csv"), "columns the model expects are missing: mean radius"),
    (dict(data="broken.csv"), "not a readable CSV"),
    (dict(model="model.pkl"), "pass --trust-pickle only if you trust this file"),
])
def test_bad_inputs_name_the_problem(user_files, change, message):
    pd.DataFrame({"a": [1, 2], "diagnosis": ["M", "B"]}).to_csv(user_files / "wide.csv", index=False)
    (user_files / "broken.csv").write_bytes(b'a,b\n1,"2\n3,4,5,6\n')
    (user_files / "model.pkl").write_bytes(b"not really a pickle")
    args = dict(model="model.skops", data="data.csv", target="diagnosis") | change
    with pytest.raises(CandorError, match=message):
        load_user_workspace(user_files / args["model"], user_files / args["data"], args["target"])


def test_cli_exits_2_with_one_line(user_files):
    out = subprocess.run([sys.executable, "-m", "app", "--model", str(user_files / "model.skops"),
                          "--data", str(user_files / "data.csv"), "--target", "label",
                          "--port", str(free_port())],  # a free port: the default one may be serving
                         capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert out.returncode == 2
    assert out.stderr.strip().splitlines() == [
        "candor: error: data.csv: target column 'label' not found; columns are mean radius, mean texture, "
        "mean perimeter, mean area, mean smoothness, diagnosis"]
    assert "Traceback" not in out.stderr


def test_cli_requires_model_data_and_target_together():
    out = subprocess.run([sys.executable, "-m", "app", "--model", "m.skops"], capture_output=True, text=True,
                         cwd=ROOT, timeout=60)
    assert out.returncode == 2 and "go together" in out.stderr


def test_cli_options_that_need_another_option_or_a_model_folder(tmp_path):
    lone = subprocess.run([sys.executable, "-m", "app", "--target-class", "dog"], capture_output=True, text=True,
                          cwd=ROOT, timeout=60)
    assert lone.returncode == 2 and lone.stderr.strip() == "candor: error: --target-class goes with --model"
    empty = subprocess.run([sys.executable, "-m", "app", "--text-model", str(tmp_path)], capture_output=True,
                           text=True, cwd=ROOT, timeout=60)
    assert empty.returncode == 2 and empty.stderr.strip() == (
        f"candor: error: --text-model {tmp_path}: no config.json there; expected a folder written by "
        "save_pretrained (model and tokenizer)")


def test_cli_refuses_a_bad_or_busy_port():
    bad = subprocess.run([sys.executable, "-m", "app", "--port", "99999"], capture_output=True, text=True, cwd=ROOT,
                         timeout=60)
    assert bad.returncode == 2 and "port must be from 1 to 65535, got 99999" in bad.stderr
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        busy = subprocess.run([sys.executable, "-m", "app", "--port", str(port)], capture_output=True, text=True,
                              cwd=ROOT, timeout=120)
    assert busy.returncode == 2
    assert busy.stderr.strip().splitlines()[-1].startswith(f"candor: error: cannot serve on 127.0.0.1:{port}")
    assert "Traceback" not in busy.stderr


def test_missing_targets_are_dropped_with_a_note_and_float_labels_match_int_classes(tmp_path, bc):
    X, y, train, _ = bc
    cols = list(X.columns[:3])
    sio.dump(LogisticRegression(max_iter=3000).fit(X.iloc[train][cols], y.iloc[train]), tmp_path / "m.skops")
    frame = X[cols].assign(diagnosis=y.astype(float))
    frame.to_csv(tmp_path / "float.csv", index=False)
    ws = load_user_workspace(tmp_path / "m.skops", tmp_path / "float.csv", "diagnosis")
    assert ws.y.tolist() == y.tolist()
    frame.loc[[3, 7], "diagnosis"] = np.nan
    frame.to_csv(tmp_path / "gap.csv", index=False)
    gap = load_user_workspace(tmp_path / "m.skops", tmp_path / "gap.csv", "diagnosis")
    assert len(gap.X) == 567 and "2 rows without a target value dropped" in " ".join(gap.notes)


def test_a_misspelt_target_is_named_with_its_likely_column(tmp_path):
    """A first-time user typed --target Cultivar for a 14-column table whose last column is cultivar: the
    message listed 12 columns and stopped before it. Now it says which column was probably meant."""
    import numpy as np
    import pandas as pd
    from sklearn.datasets import load_wine
    from sklearn.linear_model import LogisticRegression

    from tests.byo.conftest import write_pair
    from workspace.errors import CandorError
    from workspace.workspace import load_user_workspace

    data = load_wine(as_frame=True)
    model = LogisticRegression(max_iter=5000).fit(data.data, data.target)
    paths = write_pair(tmp_path, model, data.data.assign(cultivar=np.asarray(data.target)))
    with pytest.raises(CandorError, match=r"target column 'Cultivar' not found \(did you mean 'cultivar'\?\); "
                                          r"columns are alcohol, .*\.\.\., .*cultivar$"):
        load_user_workspace(*paths, "Cultivar")
    assert isinstance(pd.read_csv(paths[1]).columns[-1], str)


def test_the_missing_flag_is_named():
    out = subprocess.run([sys.executable, "-m", "app", "--model", "m.skops", "--target", "y"], capture_output=True,
                         text=True, cwd=ROOT, timeout=120)
    assert out.returncode == 2 and out.stderr.strip() == (
        "candor: error: --model, --data and --target go together; missing --data")
