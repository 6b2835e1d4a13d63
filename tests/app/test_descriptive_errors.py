"""The Descriptive page shows how sure SHAP is, and offers raw columns as players for one-hot Pipelines.

Oracles: a hand-computed ranking (gaps between neighbours), and Shapley values by brute-force enumeration of
every coalition of raw columns with the Pipeline's own ``predict_proba`` (``tests/shapley_oracle.py``).
"""
import json
import re
import numpy as np
import pandas as pd
from sklearn.compose import ColumnTransformer
from sklearn.ensemble import RandomForestClassifier
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import OneHotEncoder

from app.views import figures
from app import services
from app.callbacks import descriptive
from app.views import descriptive as descriptive_view
from explainers import Explanation
from tests.byo.conftest import write_pair
from tests.shapley_oracle import brute_force_shapley
from workspace.workspace import load_user_workspace


def _expl(values, se, method="shap", gap=0.0):
    values = np.asarray(values, dtype=float)
    return Explanation(method, tuple("abcde"[: len(values)]), values, 0.5, 0.5 + values.sum() + gap,
                       np.zeros(len(values)), "probability", "yes", "test", params={"standard_error": tuple(se)})


def test_rank_flag_marks_errors_larger_than_the_gap_to_a_neighbour():
    # |values| ranked: a 0.40, b 0.30, c 0.29, d 0.05; gaps to the nearest neighbour: 0.10, 0.01, 0.01, 0.24
    e = _expl([0.40, -0.30, 0.29, 0.05], [0.05, 0.02, 0.005, 0.3])
    np.testing.assert_array_equal(figures.rank_unresolved(e.values, np.array(e.params["standard_error"])),
                                  [False, True, False, True])
    for fig in (figures.waterfall(e), figures.attribution_bar(e)):
        labels = [str(y) for tr in fig.data for y in (tr.y or ())]
        assert any(y.startswith("≈ b") for y in labels) and any(y.startswith("≈ d") for y in labels)
        assert not any(y.startswith("≈ a") or y.startswith("≈ c") for y in labels)
        assert "2 shown features marked ≈" in fig.layout.title.text
    wf = figures.waterfall(e)
    assert "-0.300 ± 0.0200" in list(wf.data[0].text)  # the value with its standard error
    np.testing.assert_allclose(wf.data[1].error_x.array, [0.05, 0.02, 0.005, 0.3])  # error bars at each step's end


def test_lime_gets_the_same_flag_and_exact_values_say_so():
    lime = _expl([0.2, 0.19, -0.01], [0.02, 0.001, 0.0], method="lime")
    bar = figures.attribution_bar(lime)
    assert "≈ a" in [str(y) for y in bar.data[0].y] and bar.data[0].error_x.visible
    exact = figures.waterfall(_expl([0.2, 0.1], [0.0, 0.0], gap=1e-17))
    assert "exact values (standard error 0)" in exact.layout.title.text and "≈" not in json.dumps(list(exact.data[0].y))


def test_people_facing_numbers_are_never_in_scientific_notation():
    e = _expl([3e-9, 2.5e-5, -0.125], [1e-9, 2e-6, 0.0], gap=3e-12)
    texts = [figures.waterfall(e).layout.title.text, *map(str, figures.waterfall(e).data[0].text)]
    assert not any(re.search(r"\de[-+]?\d", t) for t in texts), texts
    assert figures.plain(0.000025) == "0.0000250" and figures.gap_text(3e-12) == "< 0.000001"


def test_raw_columns_as_players_are_offered_for_a_one_hot_tree_pipeline(tmp_path, install):
    rng = np.random.default_rng(0)
    n = 300
    frame = pd.DataFrame({"hours": rng.normal(40, 8, n), "job": rng.choice(["clerk", "nurse", "cook"], n),
                          "city": rng.choice(["north", "south"], n)})
    frame["y"] = np.where((frame.job == "nurse") ^ (frame.hours > 42) | (frame.city == "north"), "hi", "lo")
    prep = ColumnTransformer([("cat", OneHotEncoder(handle_unknown="ignore"), ["job", "city"])], remainder="passthrough")
    pipe = Pipeline([("prep", prep), ("rf", RandomForestClassifier(30, max_depth=5, random_state=0))])
    pipe.fit(frame.drop(columns="y"), frame.y)
    ws = load_user_workspace(*write_pair(tmp_path, pipe, frame), "y")
    install(ws)
    assert services.raw_players_offered() and descriptive.show_players("/descriptive") == {}
    view = services.local_view(3, raw_players=True)
    bg = ws.raw.loc[services.tabular._shap_players().background.index]
    k = list(pipe.classes_).index(ws.positive_class)
    oracle = brute_force_shapley(lambda rows: pipe.predict_proba(rows)[:, k], ws.raw.iloc[[3]], bg)
    np.testing.assert_allclose(view.shap.values, oracle, atol=1e-9)
    assert view.shap.params["standard_error"] == (0.0, 0.0, 0.0)
    summed = services.local_view(3).shap
    assert np.abs(summed.values - oracle).max() > 1e-4  # the default is a different number ...
    _, _, _, notes = descriptive_view.render_local(3, "children")
    assert "sum of its one-hot children's SHAP values, not its Shapley value" in json.dumps(notes.to_plotly_json(),
                                                                                          default=str)  # ... named so
    _, _, _, notes = descriptive_view.render_local(3, "raw")
    assert "Shapley values with the raw columns as players" in json.dumps(notes.to_plotly_json(), default=str)
