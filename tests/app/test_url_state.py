"""Links (issue 15), without a browser: each page's layout built from a query: controls set from the link, one
note naming every ignored parameter, the rest at the page's defaults."""
import importlib

import pytest

from app.shell import url_state

CASES = {
    "all": ("/persuasive", {"k": "7", "values": "0.1", "grouping": "on", "sensitive": ["mean radius", "worst area"],
                            "rules_shown": "4", "rules_round": "2", "rules_plain": "off", "rules": "muse|10",
                            "colour": "red", "row": "600"}),
    "k0": ("/persuasive", {"k": "0"}),
    "k2.5": ("/persuasive", {"k": "2.5"}),
    "k twice": ("/persuasive", {"k": ["3", "4"]}),
    "values": ("/persuasive", {"values": "0.2"}),
    "sensitive": ("/persuasive", {"sensitive": "mean radiu"}),
    "grouping": ("/persuasive", {"grouping": "yes"}),
    "rules": ("/persuasive", {"rules": "muse"}),
    "class": ("/persuasive", {"class": "malignant"}),
    "surrogate": ("/surrogate", {"max_rules": "5", "max_width": "4", "lambdas": "1, 1, 1, 1, x", "point": "cart|5",
                                 "foi": ["mean area"]}),
    "table": ("/", {"table_page": "47", "row": "3"}),
    "immutable": ("/persuasive", {"immutable": ["worst radius", "mean area"]}),
    "immutable typo": ("/persuasive", {"immutable": "worst radiu"}),
    "players": ("/descriptive", {"players": "raw", "row": "5"}),
    "beeswarm": ("/descriptive", {"beeswarm": "on"}),
    "beeswarm typo": ("/descriptive", {"beeswarm": "yes"}),
}

def _layout(path, query):
    """The page's layout built from ``query``, as Dash pages build it on a request."""
    module = {"/persuasive": "app.pages.persuasive", "/surrogate": "app.pages.surrogate", "/": "app.pages.overview",
              "/descriptive": "app.pages.descriptive"}[path]
    tree = importlib.import_module(module).layout(**query)
    found = {c.id: c for c in tree._traverse_ids() if isinstance(c.id, str)}
    note = tree.children[0]
    controls = {i: getattr(found[i], p, None) for i, p in PROPS.items() if i in found}
    return {"note_id": note.id, "note": note.children.children if note.children else "", "controls": controls}


PROPS = {"persuasive-k": "value", "persuasive-rounding": "value", "persuasive-grouping": "value",
         "persuasive-sensitive": "value", "persuasive-rules-keep": "value", "persuasive-rules-round": "value",
         "persuasive-rules-plain": "value", "persuasive-rules-source": "value", "surrogate-max-rules": "value",
         "surrogate-max-width": "value", "surrogate-lambdas": "value", "surrogate-point": "data",
         "surrogate-features-of-interest": "value", "overview-table": "page_current",
         "persuasive-story-immutable": "value", "descriptive-shap-players": "value",
         "descriptive-global-beeswarm-show": "value"}


@pytest.fixture(scope="module")
def built(sample_workspace):
    """Every case's page built in this process; page modules imported without registering with a Dash app."""
    import dash

    from app import services

    services.init(sample_workspace, warm=False)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(dash, "register_page", lambda *args, **kwargs: None)
        return {name: _layout(path, query) for name, (path, query) in CASES.items()}


def test_a_link_sets_each_control_and_names_the_ignored_ones(built):
    got = built["all"]
    c = got["controls"]
    assert (c["persuasive-k"], c["persuasive-rounding"], c["persuasive-grouping"]) == (7, "0.1", ["on"])
    assert c["persuasive-sensitive"] == ["mean radius", "worst area"]
    assert (c["persuasive-rules-keep"], c["persuasive-rules-round"], c["persuasive-rules-plain"]) == (4, 2, [])
    assert c["persuasive-rules-source"] == "muse|10"
    assert got["note_id"] == "url-note"
    assert got["note"] == ("Link parameters ignored (the rest applies): colour: not a setting of this page; "
                           "row=600: outside 0–568")


@pytest.mark.parametrize("case, problem", [
    ("k0", "k=0: outside 1–30"),  # the slider's own min and max
    ("k2.5", "k=2.5: not a whole number"),
    ("k twice", "k=3,4: given more than once"),
    ("values", "values=0.2: not one of exact, 0.01, 0.05, 0.1, qualitative, direction"),
    ("sensitive", "sensitive=mean radiu: no feature named 'mean radiu'"),
    ("grouping", "grouping=yes: not on or off"),
    ("rules", "rules=muse: not method|budget, e.g. muse|10"),
    ("class", "class=malignant: nothing to choose here (a class is chosen only for a multiclass model)"),
])
def test_each_kind_of_bad_value_is_named_and_the_rest_keeps_its_default(built, case, problem):
    assert built[case]["note"] == "Link parameters ignored (the rest applies): " + problem
    assert built[case]["controls"]["persuasive-k"] == 3


def test_the_beeswarm_s_switch_opens_from_its_link_and_is_off_without_it(built):
    assert built["beeswarm"]["controls"]["descriptive-global-beeswarm-show"] == ["on"] and built["beeswarm"]["note"] == ""
    assert built["players"]["controls"]["descriptive-global-beeswarm-show"] == []
    assert built["beeswarm typo"]["note"] == "Link parameters ignored (the rest applies): beeswarm=yes: not on or off"
    assert built["beeswarm typo"]["controls"]["descriptive-global-beeswarm-show"] == []


def test_surrogate_budgets_point_and_table_page(built):
    s = built["surrogate"]
    assert (s["controls"]["surrogate-max-rules"], s["controls"]["surrogate-max-width"]) == (5, 3)  # 4 > its max
    assert s["controls"]["surrogate-point"] == "cart|5" and s["controls"]["surrogate-features-of-interest"] == ["mean area"]
    assert "max_width=4: outside 1–3" in s["note"]
    assert "lambdas=1, 1, 1, 1, x: λ weight for fidelity must be a non-negative number or auto, got 'x'" in s["note"]
    t = built["table"]  # 569 rows, 12 a page: pages 0 to 47
    assert t["controls"]["overview-table"] == 47 and t["note"] == ""


def test_writer_covers_every_parameter_of_the_schema():
    for path, params in url_state.PAGES.items():
        js = url_state.writer_js(path)
        assert all(f'"name": "{p.name}"' in js for p in params)


def test_the_story_tests_immutable_features_come_from_the_link(built):
    """The story test's picker (issue 25) is part of the Persuasive page's state: set from the link, a typo named."""
    assert built["immutable"]["controls"]["persuasive-story-immutable"] == ["worst radius", "mean area"]
    assert built["immutable"]["note"] == ""
    assert built["immutable typo"]["note"] == ("Link parameters ignored (the rest applies): "
                                               "immutable=worst radiu: no feature named 'worst radiu'")
    assert built["immutable typo"]["controls"]["persuasive-story-immutable"] == []


def test_players_raw_is_named_where_shap_already_has_the_raw_columns_as_players(built):
    """The sample's SHAP has each column as a player: ``players=raw`` changes nothing there, and the page says so
    (it was ignored silently: the radio is hidden on such a model and the values shown were the default's)."""
    assert built["players"]["note"] == ("Link parameters ignored (the rest applies): players=raw: not a choice for "
                                        "this model: its SHAP values already have the raw columns as players (there "
                                        "is no one-hot Pipeline whose children's values they would sum)")
    assert built["players"]["controls"]["descriptive-shap-players"] == "children"


def test_players_raw_applies_on_a_one_hot_tree_pipeline(tmp_path, install, monkeypatch):
    """Where the default sums one-hot children (a tree Pipeline), the link's ``players=raw`` sets the radio."""
    import dash
    import numpy as np
    import pandas as pd
    from sklearn.compose import ColumnTransformer
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import OneHotEncoder

    from app import services
    from tests.byo.conftest import write_pair
    from workspace.workspace import load_user_workspace

    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"hours": rng.normal(40, 8, 200), "job": rng.choice(["clerk", "nurse", "cook"], 200)})
    frame["y"] = np.where((frame.job == "nurse") ^ (frame.hours > 42), "hi", "lo")
    prep = ColumnTransformer([("cat", OneHotEncoder(handle_unknown="ignore"), ["job"])], remainder="passthrough")
    pipe = Pipeline([("prep", prep), ("rf", RandomForestClassifier(10, max_depth=4, random_state=0))])
    pipe.fit(frame.drop(columns="y"), frame.y)
    install(load_user_workspace(*write_pair(tmp_path, pipe, frame), "y"))
    monkeypatch.setattr(dash, "register_page", lambda *args, **kwargs: None)
    got = _layout("/descriptive", {"players": "raw"})
    assert services.raw_players_offered()
    assert got["note"] == "" and got["controls"]["descriptive-shap-players"] == "raw"
