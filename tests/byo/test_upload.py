"""The Your model page: callbacks called as functions (STYLE B5); files stay on the server."""
import base64

import dash
import numpy as np
import pandas as pd
import pytest
import skops.io as sio
from sklearn.compose import ColumnTransformer
from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import OneHotEncoder

from app.shell import ids
from app import services
from app.callbacks import upload as cb
from app.services import selection


def _b64(data: bytes, mime="application/octet-stream") -> str:
    return f"data:{mime};base64," + base64.b64encode(data).decode()


def _walk(component):
    yield component
    children = getattr(component, "children", None)
    for child in children if isinstance(children, (list, tuple)) else [children]:
        if hasattr(child, "to_plotly_json"):
            yield from _walk(child)


def _text(component) -> str:
    return "".join(c if isinstance(c, str) else _text(c) for c in
                   (component.children if isinstance(component.children, (list, tuple)) else [component.children])
                   if c is not None)


def _navbar(container) -> dict:
    """What the navbar offers: its title, its page links and the class picker's options (None: no picker)."""
    parts = list(_walk(container))
    brand = next(c for c in parts if type(c).__name__ == "NavbarBrand")
    [select] = [c for c in parts if getattr(c, "id", None) == ids.CLASS_SELECT]
    [picker] = [c for c in parts if isinstance(getattr(c, "children", None), list) and any(x is select for x in c.children)]
    return {"brand": _text(brand), "pages": [_text(c) for c in parts if type(c).__name__ == "NavLink"],
            "classes": None if picker.className == "d-none" else [o["value"] for o in select.options]}


def _upload(tmp_path, model, frame, target, name):
    sio.dump(model, tmp_path / "m.skops")
    token, _ = cb.store_model(_b64((tmp_path / "m.skops").read_bytes()), "m.skops")
    dtoken, _, _ = cb.store_data(_b64(frame.to_csv(index=False).encode(), "text/csv"), name)
    alert, switched = cb.load_pair(1, token, dtoken, target)
    return alert, cb.redraw_navbar(switched)  # the page's store redraws the navbar (its own callback)


def test_an_upload_renders_the_navbar_of_the_new_model(tmp_path, uploads, rng, monkeypatch):
    # a new user uploaded a multiclass model over a regressor: the navbar kept "diab.csv" and the regressor's
    # pages (no Surrogate, Persuasive or class picker) until they navigated away
    pages = {name: {"name": name, "relative_path": path, "order": order, "requires": requires}  # as app/pages
             for name, path, order, requires in [("Model & data", "/", 0, None), ("Surrogate", "/surrogate", 2,
                                                  "surrogate"), ("Persuasive", "/persuasive", 3, "persuasive")]}
    monkeypatch.setattr(dash, "page_registry", pages)
    frame = pd.DataFrame({"a": rng.normal(size=120), "b": rng.normal(size=120)})
    frame["y"] = frame.a * 2 + frame.b
    _, navbar = _upload(tmp_path, RandomForestRegressor(10, random_state=0).fit(frame[["a", "b"]], frame.y),
                        frame, "y", "diab.csv")
    diab = _navbar(navbar)
    assert diab["brand"] == "Candor · diab.csv" and diab["classes"] is None
    assert diab["pages"] == ["Model & data"]
    frame["y"] = np.array(["class_0", "class_1", "class_2"])[np.digitize(frame.a, [-0.5, 0.5])]
    alert, navbar = _upload(tmp_path, RandomForestClassifier(10, random_state=0).fit(frame[["a", "b"]], frame.y),
                            frame, "y", "wine.csv")
    wine = _navbar(navbar)
    assert alert.color == "success" and wine["brand"] == "Candor · wine.csv"
    assert wine["pages"] == ["Model & data", "Surrogate", "Persuasive"]
    assert wine["classes"] == ["class_0", "class_1", "class_2"]
    [row_picker] = [c for c in _walk(navbar) if getattr(c, "id", None) == ids.ROW_PICKER]
    assert row_picker.className == "d-none"  # not a row page


@pytest.fixture
def uploads(tmp_path, monkeypatch):
    monkeypatch.setenv("CANDOR_UPLOAD_DIR", str(tmp_path / "uploads"))
    monkeypatch.setenv("CANDOR_STATE_DIR", str(tmp_path / "state"))
    previous, chosen = services.state().workspace, selection.current()
    yield tmp_path / "uploads"
    selection.start(chosen, warm=False)
    if previous is not None:
        services.init(previous, warm=False)


def test_upload_store_and_explain_a_pipeline(tmp_path, uploads, rng):
    frame = pd.DataFrame({"x": rng.normal(size=200), "kind": rng.choice(["a", "b", None], 200)})
    frame["y"] = np.where(frame.x > 0, "up", "down")
    model = Pipeline([("prep", ColumnTransformer([("k", OneHotEncoder(handle_unknown="ignore"), ["kind"])],
                                                 remainder="passthrough")),
                      ("rf", RandomForestClassifier(20, random_state=0))]).fit(frame[["x", "kind"]], frame.y)
    sio.dump(model, tmp_path / "m.skops")
    token, note = cb.store_model(_b64((tmp_path / "m.skops").read_bytes()), "../../m.skops")
    assert (uploads / token).is_file() and token.endswith("-m.skops") and "stored on the server" in note.children
    dtoken, dnote, options = cb.store_data(_b64(frame.to_csv(index=False).encode(), "text/csv"), "my data.csv")
    assert [o["value"] for o in options] == ["x", "kind", "y"] and dtoken.endswith("-my_data.csv")
    result, switched = cb.load_pair(1, token, dtoken, "y")
    navbar = cb.redraw_navbar(switched)
    said = str(result.children)
    assert result.color == "success" and "Now explaining my_data.csv" in said and "200 rows x 2 features" in said
    assert "Open Model & data" in said and "href='/'" in said
    # the navbar is rendered again for the new model at once (a new user saw the old one's until navigating)
    assert _navbar(navbar)["brand"] == "Candor · my_data.csv"
    assert services.workspace().raw is not None and services.shap_row(0).feature_names == ("x", "kind")


def test_upload_failures_name_the_file_and_keep_the_app(tmp_path, uploads):
    before = services.state().workspace
    _, alert = cb.store_model(_b64(b"\x80\x04pickle"), "model.pkl")
    assert ("model.pkl: a model upload must be one of .skops; PyTorch and pickle/joblib models load from the command "
            "line only") in str(alert.children)
    _, alert, options = cb.store_data(_b64(b'a,b\n1,"2\n3,4,5,6\n'), "broken.csv")
    assert str(alert.children).startswith("broken.csv: not a readable CSV") and options == []  # the user's name
    assert not list(uploads.glob("*broken.csv"))  # an unreadable table is not kept
    token, alert = cb.store_model(_b64(b"not a zip"), "m.skops")  # checked when it arrives, not at "Explain"
    assert token is None and str(alert.children).startswith("m.skops: not a readable skops file")
    assert not list(uploads.glob("*m.skops"))
    dtoken, _, _ = cb.store_data(_b64(b"a,t\n1,x\n2,y\n3,x\n4,y\n"), "d.csv")
    assert "upload a model and a data file" in str(cb.load_pair(1, None, dtoken, "t")[0].children)
    alert, navbar = cb.load_pair(1, "../etc/passwd", dtoken, "t")
    assert "no longer on the server" in str(alert.children) and navbar is dash.no_update
    assert services.state().workspace is before


def test_back_to_the_bundled_sample_after_an_upload(tmp_path, uploads, rng, sample_workspace):
    frame = pd.DataFrame({"x": rng.normal(size=100)})
    frame["y"] = np.where(frame.x > 0, "up", "down")
    sio.dump(RandomForestClassifier(10, random_state=0).fit(frame[["x"]], frame.y), tmp_path / "m.skops")
    token, _ = cb.store_model(_b64((tmp_path / "m.skops").read_bytes()), "m.skops")
    dtoken, _, _ = cb.store_data(_b64(frame.to_csv(index=False).encode(), "text/csv"), "d.csv")
    cb.load_pair(1, token, dtoken, "y")
    assert services.workspace().name == "d.csv"
    back, switched = cb.back_to_sample(1)
    navbar = cb.redraw_navbar(switched)
    assert back.color == "success" and "Now explaining Breast cancer (bundled sample)" in str(back.children)
    assert _navbar(navbar)["brand"] == "Candor · Breast cancer (bundled sample)"
    assert services.workspace().name == "Breast cancer (bundled sample)" and selection.current().model is None


def test_a_features_file_uploaded_beside_a_real_table_names_its_columns(tmp_path, uploads, shared_data):
    """The Your model page takes the features file the command line takes (--features-file): checked when it arrives
    (its bytes before it is decoded, then its keys and values), its features against the table's columns at "Explain",
    each refusal one line with the name the user uploaded; then every page reads its names and formats."""
    frame = pd.read_csv(shared_data / "student_performance" / "student-por.csv", sep=";")
    frame = frame[["Medu", "absences", "age"]].assign(passed=np.where(frame.G3 >= 10, "pass", "fail"))
    sio.dump(RandomForestClassifier(20, random_state=0).fit(frame[["Medu", "absences", "age"]], frame.passed),
             tmp_path / "m.skops")
    token, _ = cb.store_model(_b64((tmp_path / "m.skops").read_bytes()), "m.skops")
    dtoken, _, _ = cb.store_data(_b64(frame.to_csv(index=False).encode(), "text/csv"), "student.csv")
    big, alert = cb.store_features(_b64(b"# " + b"x" * (300 * 1024)), "big.yaml")
    assert big is None and str(alert.children) == ("big.yaml: 300.0 KiB is over the 256 KiB limit (a features file, "
                                                   "as on the command line)")
    _, alert = cb.store_features(_b64(b"absences: {colour: red}\n"), "bad.yaml")
    assert str(alert.children) == ("bad.yaml: feature 'absences': unknown key 'colour' (expected name, description, "
                                   "unit, decimals, percent, categories)")
    _, alert = cb.store_features(_b64(b"absences: Absences\n"), "names.txt")
    assert str(alert.children).startswith("names.txt: a features upload must be one of .yaml, .yml, .json")
    assert not [p.name for p in uploads.iterdir() if p.name.endswith((".yaml", ".txt"))]  # nothing refused is kept
    wrong, _ = cb.store_features(_b64(b"mother: Mother's education\n"), "wrong.yaml")  # no such column: at "Explain"
    alert, switched = cb.load_pair(1, token, dtoken, "passed", wrong)
    assert switched is dash.no_update and str(alert.children).startswith(
        "wrong.yaml: unknown feature 'mother' (not a column the model takes: Medu, absences, age)")
    text = ("Medu: {name: Mother's education, categories: {0: none, 1: primary, 2: 5th to 9th grade, 3: secondary, "
            "4: higher}}\nabsences: {name: Absences, unit: days, decimals: 0, description: School absences in the year}\n")
    ftoken, note = cb.store_features(_b64(text.encode()), "student.features.yaml")
    assert "student.features.yaml: stored on the server" in str(note.children)
    assert "2 feature(s) named or formatted" in str(note.children)
    alert, _ = cb.load_pair(1, token, dtoken, "passed", ftoken)
    assert alert.color == "success" and "feature names and value formats from student.features.yaml" in str(alert.children)
    ws = services.workspace()
    assert list(ws.X.columns) == ["Mother's education", "Absences", "age"]
    assert services.row_values(0) == ("higher", "4 days", "18")  # the table's first row: Medu 4, absences 4, age 18
    assert ("c1", "Absences", "School absences in the year") in services.feature_descriptions()
    assert selection.current().features.endswith("-student.features.yaml")  # kept while in use
