"""``--classes`` names a scikit-learn model's classes (issue 15): one list of names, checked, used everywhere."""
import numpy as np
import pandas as pd
import pytest
import skops.io as sio
from sklearn.linear_model import LogisticRegression

from workspace.errors import CandorError
from workspace.torch_options import TorchOptions
from workspace.workspace import load_user_workspace, one_vs_rest


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(120, 3)), columns=["a", "b", "c"])
    y2 = (X.a + X.b > 0).astype(int)
    y3 = np.digitize(X.a, [-0.5, 0.5])  # 0, 1, 2
    d = tmp_path_factory.mktemp("classes")
    sio.dump(LogisticRegression().fit(X, y2), d / "bin.skops")
    sio.dump(LogisticRegression().fit(X, y3), d / "multi.skops")
    X.assign(y=y2).to_csv(d / "bin.csv", index=False)
    X.assign(y=np.array(["low", "mid", "high"])[y3]).to_csv(d / "multi_named.csv", index=False)  # the data's spelling
    X.assign(y=y3).to_csv(d / "multi.csv", index=False)
    return d


def test_binary_names_replace_numbers_in_every_label(files):
    ws = load_user_workspace(files / "bin.skops", files / "bin.csv", "y", torch_options=TorchOptions(classes=("no", "yes")))
    assert ws.classes == ("no", "yes") and ws.positive_class == "yes"
    assert ws.output_label == "P(yes)" and "'yes'" in ws.adapter.units(1)
    plain = load_user_workspace(files / "bin.skops", files / "bin.csv", "y")
    assert plain.classes == ("0", "1")  # without --classes: the model's own labels, as before
    np.testing.assert_array_equal(ws.y, plain.y)  # the same rows are "yes" as were 1


def test_multiclass_names_accept_either_spelling_of_the_target(files):
    opts = TorchOptions(classes=("low", "mid", "high"))
    by_code = load_user_workspace(files / "multi.skops", files / "multi.csv", "y", torch_options=opts)
    by_name = load_user_workspace(files / "multi.skops", files / "multi_named.csv", "y", torch_options=opts)
    assert by_code.classes == by_name.classes == ("not high", "high")  # not "not 2 / 2"
    np.testing.assert_array_equal(by_code.y, by_name.y)
    assert one_vs_rest(by_code, "mid").classes == ("not mid", "mid")


def test_wrong_count_is_one_line_naming_both(files):
    with pytest.raises(CandorError) as err:
        load_user_workspace(files / "bin.skops", files / "bin.csv", "y", torch_options=TorchOptions(classes=("a", "b", "c")))
    assert str(err.value) == ("bin.skops: --classes: 3 class names given (a, b, c) but LogisticRegression has "
                              "2 classes (0, 1)")
    with pytest.raises(CandorError, match="distinct"):
        load_user_workspace(files / "bin.skops", files / "bin.csv", "y", torch_options=TorchOptions(classes=("a", "a")))


def test_bundled_sample_names_its_classes_in_method_lines(sample_workspace):
    """The sample's bare model knows its classes as 0/1; every line people read says malignant/benign."""
    from app import services

    services.init(sample_workspace, warm=False)  # another test may have installed its own workspace
    assert sample_workspace.classes == ("benign", "malignant")
    source = services.shap_row(int(sample_workspace.test_idx[0])).source
    assert "units: log-odds of class 'malignant'" in source and "class '1'" not in source
