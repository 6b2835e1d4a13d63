"""The what-if editor (issue 25): controls taken from the data, an edited row explained as that row is when explained
directly, and forged edits refused in one line, changing nothing.

Oracles are independent of the editor: the edited row is built by hand with pandas and given to the explainers
(``tabular._shap().explain``, ``tabular._lime().explain``); ranges and levels are pandas' ``min``/``max``/``unique``
of the user's table.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from dash import no_update
from sklearn.compose import ColumnTransformer
from sklearn.ensemble import GradientBoostingClassifier
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import OneHotEncoder

from app import services
from app.services import tabular, whatif
from app.shell import ids
from workspace.errors import CandorError
from tests.app.text_page_calls import triggered
from tests.shared_data import adult_data

ADULT_ROWS = 1500
CATEGORICAL = ["workclass", "education", "marital-status", "occupation", "race", "sex"]
NUMERIC = ["age", "hours-per-week", "capital-gain"]


def _adult_frame() -> pd.DataFrame:
    df = adult_data().sample(n=ADULT_ROWS, random_state=0).reset_index(drop=True)
    return df[CATEGORICAL + NUMERIC + ["income"]]


@pytest.fixture(scope="module")
def adult_ws(tmp_path_factory):
    """Adult (1,500 rows, missing levels kept) behind a one-hot Pipeline of gradient-boosted trees, installed."""
    from tests.byo.conftest import write_pair
    from workspace.workspace import load_user_workspace

    frame = _adult_frame()
    model = Pipeline([("prep", ColumnTransformer([("c", OneHotEncoder(handle_unknown="ignore"), CATEGORICAL)],
                                                 remainder="passthrough")),
                      ("gb", GradientBoostingClassifier(n_estimators=30, max_depth=3, random_state=0))])
    model.fit(frame.drop(columns="income"), frame.income)
    tmp = tmp_path_factory.mktemp("whatif-adult")
    ws = load_user_workspace(*write_pair(tmp, model, frame), "income")
    previous = services.state().workspace
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("CANDOR_CACHE_DIR", str(tmp / "cache"))
        services.init(ws, warm=False)
        yield ws, frame, model
    if previous is not None:
        services.init(previous, warm=False)


@pytest.fixture(scope="module")
def one_hot_ws():
    """A model fitted on an already one-hot table (``sex_Female``, ``sex_Male``, ``race_*``), installed."""
    from workspace.workspace import adapted_workspace

    frame = _adult_frame()
    X = pd.get_dummies(frame[["sex", "race"]], dtype=int).join(frame[["age", "hours-per-week"]].astype(float))
    y = (frame.income == ">50K").astype(int).to_numpy()
    model = GradientBoostingClassifier(n_estimators=30, max_depth=3, random_state=0).fit(X, y)
    idx = np.arange(len(X))
    ws = adapted_workspace(model, X, y, classes=("<=50K", ">50K"), target="income", train_idx=idx[:1000],
                           test_idx=idx[1000:], name="one-hot adult", source="tests")
    previous = services.state().workspace
    services.init(ws, warm=False)
    yield ws, X
    if previous is not None:
        services.init(previous, warm=False)


def _by_name():
    return {c.name: c for c in whatif.controls()}


# --- on the bundled sample (all numeric) -------------------------------------------------------------------------

def test_an_edited_rows_explanations_equal_explaining_that_row_directly(sample_workspace):
    ws, r = sample_workspace, services.default_row()
    edits = {"worst concave points": 0.05, "mean radius": 20.5}
    by_hand = ws.X.iloc[[r]].copy()
    by_hand.loc[:, "worst concave points"] = 0.05
    by_hand.loc[:, "mean radius"] = 20.5
    shap_direct, lime_direct = tabular._shap().explain(by_hand), tabular._lime().explain(by_hand)

    view = services.local_view({"row": r, "edits": edits})
    np.testing.assert_allclose(view.shap.values, shap_direct.values, rtol=0, atol=1e-12)
    assert view.shap.prediction == pytest.approx(shap_direct.prediction, abs=1e-12)
    p = float(ws.output(by_hand)[0])  # the model's P(malignant); SHAP explains its log-odds
    assert 1 / (1 + math.exp(-view.shap.prediction)) == pytest.approx(p, abs=1e-9)
    np.testing.assert_allclose(view.lime.values, lime_direct.values, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(view.shap.feature_values, by_hand.to_numpy(dtype=float)[0])
    unedited = services.local_view(r).shap
    assert np.abs(view.shap.values - unedited.values).max() > 1e-3  # the edit changed the explanation
    story = services.persuasive_view({"row": r, "edits": edits}, 3).simplification
    np.testing.assert_allclose(story.parent.values, shap_direct.values, rtol=0, atol=1e-12)  # the story follows
    status = services.row_status({"row": r, "edits": edits})
    assert status.startswith(f"edited from row {r} (2 features changed)") and status.endswith(f"P(malignant) {p:.3f}")


def test_edited_rows_are_cached_by_content_and_an_edit_to_the_same_value_is_the_row(sample_workspace):
    r, cs = services.default_row(), _by_name()
    value = float(sample_workspace.X.iloc[r]["mean radius"])
    assert services.row_key({"row": r, "edits": {"mean radius": value}}) == r  # nothing changed: the table row
    a = services.row_key({"row": r, "edits": {"mean radius": cs["mean radius"].hi}})
    b = services.row_key({"row": r, "edits": {"mean radius": str(cs["mean radius"].hi)}})  # as a link writes it
    assert isinstance(a, whatif.EditedRow) and a == b and hash(a) == hash(b)
    assert services.shap_row(a) is services.shap_row(b)  # one cache entry for one content


def test_number_controls_span_the_data(sample_workspace):
    X = sample_workspace.X
    cs = whatif.controls()
    assert [c.name for c in cs] == list(X.columns) and {c.kind for c in cs} == {"number"}
    for c in cs:
        assert (c.lo, c.hi) == (X[c.name].min(), X[c.name].max())
        assert not c.missing


FORGED = [
    {"mean radius": 1e9}, {"mean radius": -1.0}, {"mean radius": float("nan")}, {"mean radius": None},
    {"mean radius": "abc"}, {"mean radius": True}, {"mean radius": [1, 2]}, {"mean radius": {"a": 1}},
    {"no such feature": 1.0}, {"__proto__": 1.0}, {"mean radius": "1" * 5000}, ["mean radius", 1.0], "edits",
]


@pytest.mark.parametrize("edits", FORGED, ids=range(len(FORGED)))
def test_forged_edits_are_refused_in_one_line_and_change_nothing(sample_workspace, edits):
    from app.callbacks import descriptive, persuasive

    r = services.default_row()
    with pytest.raises(CandorError) as err:
        services.shap_row({"row": r, "edits": edits})
    assert "\n" not in str(err.value) and str(err.value).startswith("what-if: ")
    forged = {"row": r, "edits": edits}
    with triggered(f"{ids.WHATIF}.data"):  # the browser's store changed: an edit
        out = descriptive.render_row(r, "children", 1, forged)
    assert all(o is no_update for o in out[:8])  # panels, status and stability card unchanged
    assert all(v is no_update for v in out[8]) and out[9] is no_update
    note = out[10]
    assert "Not applied: what-if:" in note.children and "\n" not in note.children
    with triggered(f"{ids.WHATIF}.data"):
        out = persuasive.render_row(r, 3, "exact", [], [], 1, forged)
    assert all(o is no_update for o in out[:12]) and "Not applied: what-if:" in out[14].children


def test_a_link_with_refused_edits_shows_the_table_row_and_says_why(sample_workspace):
    from app.callbacks import descriptive
    from app.shell import url_state

    r = services.default_row()
    with triggered(f"{ids.ROW_INPUT}.value"):
        out = descriptive.render_row(r, "children", 1, {"row": r, "edits": {"mean radius": 1e9}})
    assert f"Row {r}: do SHAP and LIME agree?" in str(out[2].children[0].children)  # the table row
    assert "Not applied: what-if: mean radius must be a number from 6.981 to 28.11" in out[10].children
    values, problems = url_state.read("/descriptive", {"row": str(r), "edit": ["mean radius=1e9", "worst area=900"]})
    assert "edit" not in values and problems[0].startswith("edit=mean radius=1e9,worst area=900: ")
    values, problems = url_state.read("/persuasive", {"edit": ["mean radius=20", "worst area=900"]})
    assert values["edit"] == {"mean radius": "20", "worst area": "900"} and problems == []
    assert url_state.read("/attention", {"edit": "mean radius=20"})[1] == ["edit: not a setting of this page"]


# --- on real data with categories (UCI Adult) ---------------------------------------------------------------------

def test_level_and_range_controls_come_from_the_data(adult_ws):
    frame = adult_ws[1]
    cs = _by_name()
    assert list(cs) == CATEGORICAL + NUMERIC
    for name in NUMERIC:
        assert cs[name].kind == "number" and cs[name].whole
        assert (cs[name].lo, cs[name].hi) == (frame[name].min(), frame[name].max())
    for name in CATEGORICAL:
        levels = set(frame[name].dropna().unique()) | ({"(missing)"} if frame[name].isna().any() else set())
        assert cs[name].kind == "level" and set(cs[name].options) == levels, name
    assert "(missing)" in cs["occupation"].options  # Adult's "?" read as missing: a level here


def test_a_level_edit_is_explained_as_that_row_directly(adult_ws):
    ws, frame, model = adult_ws
    r = int(np.flatnonzero((frame["marital-status"] == "Never-married").to_numpy())[0])
    edits = {"marital-status": "Married-civ-spouse", "age": 45, "occupation": "Exec-managerial"}
    raw = frame.drop(columns="income").iloc[[r]].copy()  # the user's row, edited by hand, then encoded
    raw.loc[:, "marital-status"] = "Married-civ-spouse"
    raw.loc[:, "age"] = 45
    raw.loc[:, "occupation"] = "Exec-managerial"
    by_hand = ws.adapter.codec.encode(raw)
    direct = tabular._shap().explain(by_hand)
    edited = services.shap_row({"row": r, "edits": edits})
    np.testing.assert_allclose(edited.values, direct.values, rtol=0, atol=1e-12)
    p = model.predict_proba(raw)[0, list(model.classes_).index(ws.positive_class)]  # the user's own pipeline
    assert float(ws.output(by_hand)[0]) == pytest.approx(p, abs=1e-12)
    assert services.row_status({"row": r, "edits": edits}).endswith(f"{p:.3f}")
    assert np.abs(edited.values - services.shap_row(r).values).max() > 1e-3
    ed = services.whatif_editor(r, edits)
    assert ed.values[CATEGORICAL.index("marital-status")] == "Married-civ-spouse" and set(ed.changed) == set(edits)
    with pytest.raises(CandorError, match="marital-status must be one of"):
        services.shap_row({"row": r, "edits": {"marital-status": "Married-to-the-job"}})
    with pytest.raises(CandorError, match="age must be a whole number from 17 to"):
        services.shap_row({"row": r, "edits": {"age": 45.5}})


def test_a_one_hot_block_is_one_control(one_hot_ws):
    ws, X = one_hot_ws
    cs = _by_name()
    assert cs["sex"].kind == "group" and cs["sex"].options == ("Female", "Male")
    races = tuple(c.removeprefix("race_") for c in X.columns if c.startswith("race_"))
    assert cs["race"].options == races and "race_White" not in cs
    assert [c.name for c in cs.values() if c.kind == "number"] == ["age", "hours-per-week"]
    r = int(np.flatnonzero(X["sex_Female"].to_numpy() == 1)[0])
    by_hand = X.iloc[[r]].astype(float).copy()
    by_hand.loc[:, ["sex_Female", "sex_Male"]] = [0.0, 1.0]
    edited = services.shap_row({"row": r, "edits": {"sex": "Male"}})
    np.testing.assert_allclose(edited.values, tabular._shap().explain(by_hand).values, rtol=0, atol=1e-12)
    assert services.whatif_editor(r, {"sex": "Male"}).changed == ("sex",)
    assert math.isclose(edited.params["probability"], float(ws.output(by_hand)[0]), abs_tol=1e-9)
