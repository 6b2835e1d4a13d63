"""Features file (issue 15): display names and value formats from a small sidecar, in every figure, sentence and rule."""
import re

import numpy as np
import pytest
import skops.io as sio
from sklearn.linear_model import LogisticRegression

from app.views import figures
from app import services
from app.services import _core
from workspace.errors import CandorError
from workspace.feature_names import FeatureFormat, load_features
from workspace.workspace import load_user_workspace

from .conftest import features_case

COLUMNS = ["mean radius", "mean texture", "mean area", "mean smoothness"]
SIDECAR = """\
mean radius:
  name: Radius (mean)
  unit: µm
  decimals: 1
mean texture: Texture (mean)
mean area:
  name: Area (mean)
  description: Average area of the cell nuclei
  decimals: 0
mean smoothness: Smoothness (mean)
"""
SHOWN = ("Radius (mean)", "Texture (mean)", "Area (mean)", "Smoothness (mean)")


@pytest.fixture(scope="module")
def named(tmp_path_factory, bc):
    """A user model on four breast-cancer columns, with ``data.csv.features.yaml`` beside its data."""
    X = bc[0]
    d = features_case(tmp_path_factory.mktemp("features"), bc, COLUMNS, "data.csv.features.yaml", SIDECAR)
    ws = load_user_workspace(d / "model.skops", d / "data.csv", "diagnosis", torch_options=None)
    previous = _core._ws
    services.init(ws, warm=False)
    yield ws, X
    if previous is not None:
        services.init(previous, warm=False)


def test_workspace_reads_the_display_names_and_still_calls_the_model(named, bc):
    ws, X = named
    assert tuple(ws.X.columns) == SHOWN and tuple(ws.raw.columns) == SHOWN
    assert ws.features.description("mean area") == "Average area of the cell nuclei"
    expected = ws.adapter.model.predict_proba(X[COLUMNS].iloc[:5])[:, 1]  # the model with its own columns
    np.testing.assert_allclose(ws.output(ws.X.iloc[:5]), expected)


def test_descriptive_bars_persuasive_sentence_and_rules_use_the_names(named):
    ws, X = named
    bar = figures.importance_bar(services.global_importance())
    labels = [str(t).replace("≈ ", "") for t in bar.data[0].y]
    assert set(labels) == set(SHOWN)  # every bar label is a display name, none is a column name
    row = int(ws.test_idx[0])
    view = services.persuasive_view(row, 2, "exact", False, [])
    statement = view.simplification.statement
    assert any(name in statement for name in SHOWN) and not any(c in statement for c in COLUMNS)
    key = services.fit_muse(services.muse_params(None, 4, 2, 2, None))
    texts = " ".join(services.muse_view(key).rule_texts)
    assert any(name in texts for name in SHOWN) and not any(c in texts for c in COLUMNS)


def test_values_and_thresholds_are_written_with_their_format(named):
    ws, X = named
    row = int(ws.test_idx[0])
    labels = dict(zip(ws.X.columns, services.local_view(row).labels))
    assert labels["Radius (mean)"] == f"{X['mean radius'].iloc[row]:,.1f} µm"
    assert labels["Area (mean)"] == f"{X['mean area'].iloc[row]:,.0f}"
    codec = ws.adapter.codec
    assert codec.column("Radius (mean)").describe("<=", 14.123) == "Radius (mean) <= 14.1 µm"
    assert codec.column("Area (mean)").describe(">", 696.26) == "Area (mean) > 696"


def test_format_text():
    assert FeatureFormat("x", percent=True, decimals=1).text(0.1234) == "12.3 %"
    assert FeatureFormat("x", categories={"1": "male", "0": "female"}).text(1.0) == "male"
    assert FeatureFormat("x", unit="kg", decimals=2).text(1234.5) == "1,234.50 kg"


@pytest.mark.parametrize("text, message", [
    ("mean radius: R\ncolour: C\n", "f.yaml: unknown feature 'colour' (not a column the model takes: mean radius"),
    ("mean radius:\n  nmae: R\n", "f.yaml: feature 'mean radius': unknown key 'nmae' (expected name, description"),
    ("mean radius:\n  decimals: two\n", "f.yaml: feature 'mean radius': decimals must be a whole number from 0 to 8, got 'two'"),
    ("mean radius:\n  percent: true\n  unit: kg\n", "f.yaml: feature 'mean radius': give either percent or a unit"),
    ("mean radius: Same\nmean area: Same\n", "f.yaml: features 'mean radius' and 'mean area' would both read 'Same'"),
    ("- mean radius\n", "f.yaml: must map feature names to a display name or a format, got list"),
    ("mean radius: [unclosed\n", "f.yaml: not valid YAML"),
    ("x: !!python/object:os.system ls\n", "f.yaml: line 1: tags like tag:yaml.org,2002:python/object:os.system are not accepted"),
])
def test_bad_sidecar_is_one_line_naming_the_key(tmp_path, text, message):
    (tmp_path / "f.yaml").write_text(text)
    with pytest.raises(CandorError) as err:
        load_features(tmp_path / "f.yaml", ["mean radius", "mean area"])
    assert str(err.value).startswith(message) and "\n" not in str(err.value)


def test_size_is_checked_before_reading(tmp_path, monkeypatch):
    import workspace.feature_names as fn

    (tmp_path / "f.json").write_text('{"mean radius": "R"}' + " " * 200)
    monkeypatch.setattr(fn, "MAX_BYTES", 100)
    monkeypatch.setattr(type(tmp_path), "read_bytes", lambda self: pytest.fail("read a file over the limit"))
    with pytest.raises(CandorError, match=re.escape("features file f.json: 220 bytes; at most 100 are read")):
        load_features(tmp_path / "f.json", ["mean radius"])


def test_cli_features_file_error_is_one_line_exit_2(named, tmp_path, capsys, bc):
    from app.cli.check import main as check

    X, y, train, _ = bc
    sio.dump(LogisticRegression(max_iter=3000).fit(X.iloc[train][COLUMNS], y.iloc[train]), tmp_path / "m.skops")
    X[COLUMNS].assign(diagnosis=y).to_csv(tmp_path / "d.csv", index=False)
    (tmp_path / "f.yaml").write_text("mean radius:\n  unit: 3\n")
    code = check(["--model", str(tmp_path / "m.skops"), "--data", str(tmp_path / "d.csv"), "--target", "diagnosis",
                  "--features-file", str(tmp_path / "f.yaml")])
    err = capsys.readouterr().err
    assert code == 2 and err == "candor: error: f.yaml: feature 'mean radius': unit must be non-empty text, got 3\n"


def test_descriptions_reach_the_data_table_and_the_report(named):
    """The features file's descriptions were loaded but shown nowhere: the data table's header tooltip and the
    report's model card now carry them (escaped: they are user text)."""
    from app.callbacks.overview import render_table_page
    from app.report.content import report_content
    from app.report.sections import model_card

    ws, X = named
    assert services.feature_descriptions() == [("c2", "Area (mean)", "Average area of the cell nuclei")]
    records, columns, _, tips, _ = render_table_page(0, 5)
    assert {c["id"]: c["name"] for c in columns}["c2"] == "Area (mean)"
    assert tips == {"c2": "Area (mean): Average area of the cell nuclei"}
    card = model_card(report_content(rows=[int(ws.test_idx[0])]))
    assert "<h3>Features</h3>" in card and "<td>Average area of the cell nuclei</td>" in card


def test_the_persuasive_sentence_says_values_in_the_features_file_unit_and_is_still_verified(named):
    ws, X = named
    row = int(ws.test_idx[0])
    view = services.persuasive_view(row, 4, "exact", False, [])
    s = view.simplification
    radius = next(c.sentence for c in s.sentences if "Radius (mean) is" in c.sentence.text)
    v = float(X["mean radius"].iloc[row])
    assert f"({plain_sig(v)} µm vs median " in radius.text and radius.text.count(" µm") == 2
    assert all(c.ok for c in s.sentences)


def plain_sig(v):
    from explainers.numbers import plain
    return plain(v, 3, trim=True)


@pytest.mark.parametrize("name, text", [
    ("deep.json", "[" * 1000 + "]" * 1000),  # RecursionError in json (a traceback from check before)
    ("deep.yaml", "a: " + "[" * 1000 + "]" * 1000),  # RecursionError in PyYAML; 50,000 levels ran past 90 s
    ("indent.yaml", "".join(" " * i + f"k{i}:\n" for i in range(700)) + " " * 700 + "v"),  # by indentation, within the size bound
])
def test_a_deeply_nested_features_file_is_one_line(tmp_path, name, text):
    """Found by an attack (issue 27): ``check --features-file`` printed 2,989 lines of RecursionError."""
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(CandorError, match="nested") as err:
        load_features(path, ["a"])
    assert "\n" not in str(err.value)
