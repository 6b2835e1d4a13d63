"""The Persuasive page's story test on the bundled sample: the service against the page's own story and the model
itself, the job and its card, and the card set back to its hint once a control changes the story (issue 25)."""
from __future__ import annotations

import json

import pytest

from app.callbacks import counterfactuals as cb
from app.callbacks import persuasive as pcb
from app.services import counterfactuals as cfs
from app.views.counterfactuals import HINT, story_controls


def _text(component) -> str:
    return json.dumps(component.to_plotly_json(), default=lambda o: o.to_plotly_json(), ensure_ascii=False)


@pytest.fixture(scope="module")
def run(sample_workspace):
    """The job for row 5 at k = 3 with "worst radius" held fixed, as the page runs it (progress recorded)."""
    seen = []
    view = cfs.story_view(5, 3, immutable=["worst radius"], progress=lambda done, total: seen.append((done, total)))
    return view, seen


def test_the_story_is_the_pages_story_and_every_listed_counterfactual_flips_the_model(sample_workspace, run):
    from app import services

    view, seen = run
    ws = sample_workspace
    shown = services.persuasive_view(5, 3).simplification
    named = [str(shown.parent.feature_names[j]) for item in shown.items for j in item.members]
    assert view.test.story == tuple(named) and len(named) == 3
    x = ws.X.iloc[5].to_numpy(dtype=float)
    before = ws.output(ws.X.iloc[[5]])[0] >= 0.5
    listed = view.test.any_feature.shown
    assert listed
    j = list(ws.X.columns).index("worst radius")
    for c in (*listed, *view.test.story_only.pool):
        out = ws.output(ws.X.iloc[[5]].assign(**dict(zip(ws.X.columns, c.values))))[0]
        assert (out >= 0.5) != before and out == pytest.approx(c.output)  # the workspace's own model call
        assert c.values[j] == x[j]  # held fixed
    assert all(set(c.changed) <= set(named) for c in view.test.story_only.pool)
    assert view.settings["immutable"] == ("worst radius",) and view.settings["budget"] == cfs.BUDGET
    done = [d for d, _ in seen]
    assert done == sorted(done) and {t for _, t in seen} == {2 * cfs.BUDGET}


def test_the_card_shows_the_verdict_the_figures_and_the_list(run):
    view, _ = run
    text = _text(cb.story_card(view))
    t = view.test
    assert cfs.verdict(t) in text
    assert f"{t.n_need_hidden} of {t.k}" in text and "Wilson" in text
    for c in t.any_feature.shown:
        for ch in c.changes:
            assert f"{ch.feature}: {ch.before} → {ch.after}" in text
    assert "Row 5: the story at k = 3" in text and "held fixed: worst radius" in text


def test_bad_inputs_give_one_line_and_viewers_see_the_role_needed(sample_workspace):
    out = _text(cb.run_story_test(lambda _: None, 1, 5, 3, "exact", [], [], ["no such feature"]))
    assert "immutable features must be features of the table; unknown: no such feature" in out
    out = _text(cb.run_story_test(lambda _: None, 1, 10_000, 3))
    assert "row 10000 does not exist" in out
    viewer = _text(story_controls(False, ["a", "b"]))
    assert "needs the analyst role" in viewer and '"disabled": true' in viewer


def test_a_control_change_sets_the_card_back_to_its_hint_only_after_a_run(sample_workspace):
    from contextvars import copy_context

    from dash._callback_context import context_value
    from dash._utils import AttributeDict

    def call(trigger, runs):
        def inner():
            context_value.set(AttributeDict(triggered_inputs=[{"prop_id": f"{trigger}.value", "value": 4}]))
            return pcb.render_row(5, 4, "exact", [], [], runs)
        return copy_context().run(inner)

    from dash import no_update

    card = slice(9, 12)  # the story test's card, progress value and label (the what-if editor's outputs follow)
    after = call("persuasive-k", 1)
    assert HINT in _text(after[card][0]) and after[card][1:] == (0, "")
    before = call("persuasive-k", 0)
    assert before[card] == (no_update,) * 3


def test_any_feature_is_never_dearer_than_the_story_alone(sample_workspace):
    """Row 3 at k = 3, worst radius held: the story-only search found distance 5.60 and the any-feature search only
    5.89 (a beam misses what a narrower beam finds), so the card said the story's route was cheaper than any."""
    t = cfs.story_view(3, 3, immutable=["worst radius"]).test
    assert t.story_flips and t.any_feature.cheapest <= t.story_only.cheapest
    assert t.distance_ratio >= 1


def test_a_pre_encoded_one_hot_block_moves_as_one_column_and_stays_one_hot(tmp_path, install):
    """A table one-hot encoded before upload: job_* (one 1 a row) is one feature "job"; flag_a/flag_b share a
    prefix but both can be 1, so they stay two; the string column is a category by level."""
    import numpy as np
    import pandas as pd
    from sklearn.compose import ColumnTransformer
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import OneHotEncoder

    from tests.byo.conftest import write_pair
    from workspace.workspace import load_user_workspace

    rng = np.random.default_rng(0)
    n = 400
    job = rng.integers(0, 3, n)
    frame = pd.DataFrame({"hours": rng.normal(40, 8, n).round(1), **{f"job_{j}": (job == i).astype(int)
                          for i, j in enumerate(["clerk", "nurse", "cook"])},
                          "flag_a": rng.integers(0, 2, n), "flag_b": rng.integers(0, 2, n),
                          "city": rng.choice(["north", "south"], n)})
    frame["y"] = np.where((job == 1) | (frame.hours > 48) | (frame.city == "north") & (frame.flag_a == 1), "hi", "lo")
    prep = ColumnTransformer([("cat", OneHotEncoder(handle_unknown="ignore"), ["city"])], remainder="passthrough")
    pipe = Pipeline([("prep", prep), ("rf", RandomForestClassifier(30, max_depth=5, random_state=0))])
    pipe.fit(frame.drop(columns="y"), frame.y)
    ws = load_user_workspace(*write_pair(tmp_path, pipe, frame), "y")
    install(ws)
    assert cfs.features() == ("hours", "job", "flag_a", "flag_b", "city")
    block = [list(ws.X.columns).index(f"job_{j}") for j in ("clerk", "nurse", "cook")]
    checked = 0
    for r in ws.test_idx[:4]:
        r = int(r)
        before = ws.output(ws.X.iloc[[r]])[0] >= 0.5
        for c in cfs.story_view(r, 2).test.any_feature.shown:
            assert c.values[block].sum() == 1  # still one job
            out = ws.output(pd.DataFrame([c.values], columns=ws.X.columns))[0]
            assert (out >= 0.5) != before
            if "job" in c.changed:
                ch = next(ch for ch in c.changes if ch.feature == "job")
                assert {ch.before, ch.after} <= {"clerk", "nurse", "cook"} and ch.cost == 1.0
            checked += 1
    assert checked >= 4


def test_the_jobs_progress_names_each_search(run, monkeypatch):
    """The bar's label counts within the search under way ("any feature: 210 of 4000 ..."), not over both."""
    view, seen = run

    def replay(*args, progress=None, **kwargs):  # the service's recorded progress calls, replayed through the job
        for done, total in seen:
            progress(done, total)
        return view

    monkeypatch.setattr(cb.cfs, "story_view", replay)
    told = []
    cb.run_story_test(told.append, 1, 5, 3)
    labels = [label for _, label in told]
    b = cfs.BUDGET
    expected = [(f"story's features only: {d} of {b}" if d <= b else f"any feature: {d - b} of {b}") for d, _ in seen]
    assert [label.split(" model evaluations")[0] for label in labels] == expected
    assert any(label.startswith("any feature: ") for label in labels)
    assert [v for v, _ in told] == [round(100 * d / (2 * b)) for d, _ in seen]
