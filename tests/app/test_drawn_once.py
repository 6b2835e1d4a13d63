"""Views every viewer is sent alike are drawn once per process and workspace (issue 27): the Descriptive page's
global view cost 46 ms of CPU (plus 7 ms of JSON) on every visit of every viewer. Oracles: the figure builder's
calls counted, and the kept answer equal to a fresh drawing."""
from __future__ import annotations

import pytest
from dash import no_update

from app.callbacks import descriptive
from app.views import descriptive as descriptive_view
from app.views import drawn
from workspace.errors import CandorError


@pytest.fixture
def counted(sample_workspace, monkeypatch):
    from app.services import warmup

    monkeypatch.setattr(warmup, "waiting_for", lambda name: None)  # global SHAP computed on demand here
    descriptive._global_drawn.cache_clear()
    calls = []
    real = descriptive_view.figures.importance_bar
    monkeypatch.setattr(descriptive_view.figures, "importance_bar", lambda g: calls.append(g) or real(g))
    yield calls
    descriptive._global_drawn.cache_clear()


def test_the_global_view_is_drawn_once_for_every_visit(counted):
    first = descriptive.render_global_when_ready("/descriptive", 0)
    again = descriptive.render_global_when_ready("/descriptive", 3)
    assert len(counted) == 1
    assert again[0] is first[0] and again[3] is True
    fresh_bar, fresh_swarm, _ = descriptive_view.render_global(None)  # the plain function draws afresh
    assert first[0] == fresh_bar.to_plotly_json() and first[1] == fresh_swarm.to_plotly_json()
    assert len(counted) == 2


def test_a_view_that_fails_is_not_kept(counted, monkeypatch):
    from app import services

    real = services.global_view
    monkeypatch.setattr(services, "global_view", lambda: (_ for _ in ()).throw(CandorError("not yet")))
    bar, _, note, stop, _ = descriptive.render_global_when_ready("/descriptive", 0)
    assert "not yet" in str(note) and stop is True and counted == []
    monkeypatch.setattr(services, "global_view", real)
    bar, *_ = descriptive.render_global_when_ready("/descriptive", 0)
    assert len(counted) == 1 and bar["data"][0]["type"] == "bar"


def test_unhashable_arguments_are_drawn_each_time():
    seen = []
    kept = drawn.drawn_once()(lambda values: seen.append(values) or len(values))
    assert kept([1, 2]) == 2 and kept([1, 2]) == 2 and len(seen) == 2


def test_a_persuasive_row_is_drawn_once_per_row_and_controls(sample_workspace, monkeypatch):
    """Repeat asks of a row (another viewer's, or a row visited again) send the kept drawing; the row's status line
    is not kept (it says whether the row changed); other controls draw again."""
    from app.callbacks import persuasive
    from app.views import persuasive as persuasive_view

    persuasive._row_drawn.cache_clear()
    calls = []
    real = persuasive_view.figures_persuasive.row_tradeoff
    monkeypatch.setattr(persuasive_view.figures_persuasive, "row_tradeoff", lambda *a: calls.append(a) or real(*a))
    first = persuasive.render_row(3, 3, "exact", [], [])
    again = persuasive.render_row(3, 3, "exact", [], [])
    assert len(calls) == 1 and again[:8] == first[:8] and again[8] == first[8]
    fresh = persuasive_view.render_persuasive(3, 3, "exact", [], [])  # the plain function draws afresh
    assert fresh[7].to_plotly_json() == first[7] and len(calls) == 2
    persuasive.render_row(3, 4, "exact", [], [])
    assert len(calls) == 3
    persuasive._row_drawn.cache_clear()


def test_a_hidden_beeswarm_is_neither_sent_nor_shown_and_its_switch_sends_only_it(counted, monkeypatch):
    """The page opens with the beeswarm's switch off (``[]``): its figure stays out of the answer and its panel hidden.
    Switched on, the answer holds the beeswarm alone (the bar and note are on the page already), drawn as before."""
    bar, swarm, note, stop, box = descriptive.render_global_when_ready("/descriptive", 0, [])
    assert swarm is no_update and box == {"display": "none"}
    assert bar is not no_update and note is not no_update and stop is True
    monkeypatch.setattr(descriptive, "ctx", type("Ctx", (), {"triggered_id": descriptive.ids.GLOBAL_BEESWARM_SHOW}))
    switched = descriptive.render_global_when_ready("/descriptive", 0, ["on"])
    assert switched[0] is no_update and switched[2] is no_update and switched[3] is no_update and switched[4] == {}
    fresh_bar, fresh_swarm, _ = descriptive_view.render_global(None)
    assert switched[1] == fresh_swarm.to_plotly_json() and len(switched[1]["data"]) >= 1
    assert descriptive.render_global_when_ready("/descriptive", 0, [])[1:5:3] == (no_update, {"display": "none"})
