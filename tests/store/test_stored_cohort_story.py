"""The Cohorts page's story measures in a store (issue 23): ``python -m app build`` measures the Persuasive page's
opening story on the first held-out rows, every one of them (no clock budget), and a server from that store reads
them instead of measuring them in its warm-up (2.5 s of wall time and 21 MB on Adult, and a count that depended on
the machine). Oracle: the live service's own measures, computed in the test without a store and without a budget."""
from __future__ import annotations

import logging

import numpy as np
import pytest

from tests.store.building import built_sample_store
from workspace.settings import Settings

SKIP = ("permutation_importance", "persuasive", "surrogates", "row_panels")


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    with built_sample_store(tmp_path_factory.mktemp("story-build"), max_rows=2, chunk_rows=2, skip=SKIP) as found:
        yield found


def _serve(folder, ws):
    from app import services
    from store.read import open_for

    services.use_built_store(open_for(Settings(store=folder, warm=False), ws))
    services.init(ws, warm=False)


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    return a.shape == b.shape and bool(np.all((a == b) | (np.isnan(a) & np.isnan(b))))


def test_a_server_reads_the_stored_story_and_it_is_the_live_one(built, monkeypatch):
    from app import services
    from app.services import cohorts

    manifest, ws, folder = built
    assert "cohort_story.json" in manifest["files"] and "cohort_story.json" not in manifest.get("skipped", {})
    _serve(folder, ws)
    monkeypatch.setattr(cohorts, "story_point", lambda row: pytest.fail("the story was measured again"))
    stored = cohorts._story()
    monkeypatch.undo()
    services.use_built_store(None)
    services.init(ws, warm=False)
    monkeypatch.setattr(cohorts, "STORY_BUDGET_S", float("inf"))  # the build's rule: every row, no clock
    live = cohorts._story()
    assert stored.n_measured == live.n_measured == min(len(ws.test_idx), cohorts.STORY_ROWS)
    assert stored.note == live.note and "first 143 of 143 held-out rows" in live.note
    for m in cohorts.STORY_MEASURES:
        assert _same(stored.measures[m], live.measures[m])
        assert np.isfinite(stored.measures[m][:stored.n_measured]).all()
    assert _same(stored.shares, live.shares) and (stored.hidden == live.hidden).all()


def test_the_story_survives_json_with_nan_and_a_partial_count():
    from app.services.cohorts import STORY_MEASURES, _Story, _story_from_json, story_to_json

    n, d, k = 5, 3, 2
    measures = {m: np.full(n, np.nan) for m in STORY_MEASURES}
    measures["sufficiency"][:k] = [0.25, np.nan]
    measures["mass_retained"][:k] = [0.5, 1.0]
    shares = np.array([[0.5, 0.25, 0.25], [np.nan, 1.0, 0.0]])  # the measured rows only
    hidden = np.zeros((n, d), dtype=bool)
    hidden[1, 2] = True
    story = _Story(measures, shares, hidden, k, "note")
    import json

    back = _story_from_json(json.loads(json.dumps(story_to_json(story), allow_nan=False)), n, d)
    assert back.n_measured == k and back.note == "note" and (back.hidden == hidden).all()
    assert _same(back.shares, shares) and all(_same(back.measures[m], measures[m]) for m in STORY_MEASURES)
    with pytest.raises(ValueError):
        _story_from_json(story_to_json(story), n + 1, d)  # another table's held-out rows
    with pytest.raises(ValueError):
        _story_from_json(story_to_json(story), n, d + 1)  # another table's features


def test_a_stored_story_of_another_shape_is_measured_live_and_said_in_the_log(built, monkeypatch, caplog):
    from app import services
    from app.services import cohorts

    manifest, ws, folder = built
    _serve(folder, ws)
    doc = dict(services.built_store().json("cohort_story.json"), n_rows=7)
    monkeypatch.setattr(services.built_store(), "json", lambda name: doc if name == "cohort_story.json" else None)
    monkeypatch.setattr(cohorts, "STORY_ROWS", 3)
    with caplog.at_level(logging.WARNING, logger="app.services.cohorts"):
        story = cohorts._story()
    assert story.n_measured == 3 and "not this table's story" in caplog.text
    services.use_built_store(None)
    services.init(ws, warm=False)
