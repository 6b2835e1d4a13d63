"""While the warm-up runs, the Surrogate page says what it waits for, with the frontier's progress (issue 14).

The warm-up is made to look unfinished by clearing its "done" event and marking its last two values
as not computed (the session's sample workspace is warmed lazily, ``warm=False``); nothing is fitted.
"""
from __future__ import annotations

import json
import threading

import pytest
from dash import no_update

from app.callbacks import surrogate
from app.services import _core, surrogates, warmup


def _text(component) -> str:
    return json.dumps(component.to_plotly_json(), default=lambda o: o.to_plotly_json(), ensure_ascii=False)


@pytest.fixture
def warming(sample_workspace, monkeypatch, tmp_path):
    monkeypatch.setenv("CANDOR_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(_core, "warm_done", threading.Event())  # not set: the warm-up runs
    order = list(_core._warm_order)
    for name in order:  # everything before the default surrogates is computed; they are not
        lz = _core.state().lazy_value(name)
        monkeypatch.setattr(lz, "_done", name not in ("muse_default", "frontier_default"))
    return order


def test_the_page_names_the_warm_up_step_it_waits_for(warming):
    key, note, stop = surrogate.load_default_surrogate("/surrogate", 3)
    step = warming.index("muse_default") + 1
    assert key is no_update  # the default MUSE is not fitted yet: the panel keeps waiting
    assert stop is False  # keeps polling
    assert (f"Waiting for the warm-up to finish the default surrogates: warm-up step {step} of {len(warming)} "
            "(the default MUSE surrogate).") in _text(note)


def test_the_frontier_step_shows_surrogates_fitted_and_time_left(warming, monkeypatch):
    monkeypatch.setattr(_core.state().lazy_value("muse_default"), "_done", True)
    monkeypatch.setattr(_core.state().lazy_value("muse_default"), "_value", "muse:abc")
    surrogates._results().set("muse:abc", {})  # its result cached, as a fitted default's is (else fitted again)
    key = surrogates._key("frontier", surrogates.default_frontier_params())
    surrogates._results().set(f"progress|{key}", {"done": 3, "total": 12, "elapsed": 6.0})
    muse_key, note, stop = surrogate.load_default_surrogate("/surrogate", 4)
    step = warming.index("frontier_default") + 1
    assert muse_key == "muse:abc" and stop is False  # the MUSE panel is shown while the frontier is fitted
    # 6 s for 3 fits: 2 s each, 9 to go
    assert (f"warm-up step {step} of {len(warming)} (the surrogate frontier): 3 of 12 surrogates fitted, "
            "about 18 s left.") in _text(note)


def test_nothing_to_wait_for_once_the_warm_up_is_over(warming, monkeypatch):
    done = threading.Event()
    done.set()
    monkeypatch.setattr(_core, "warm_done", done)
    monkeypatch.setattr(_core.state().lazy_value("muse_default"), "_done", True)
    monkeypatch.setattr(_core.state().lazy_value("muse_default"), "_value", "muse:abc")
    surrogates._results().set("muse:abc", {})  # its result cached, as a fitted default's is (else fitted again)
    assert surrogate.load_default_surrogate("/surrogate", 5) == ("muse:abc", None, True)
    assert warmup.warm_status().describe() == ""


def test_eta_text_from_the_mean_time_per_item():
    assert warmup.eta_text(0, 13, 0.0, "surrogates fitted") == "0 of 13 surrogates fitted"
    assert warmup.eta_text(4, 13, 12.0, "surrogates fitted") == "4 of 13 surrogates fitted, about 27 s left"
    assert warmup.eta_text(13, 13, 30.0) == "13 of 13"


def test_the_global_panel_says_it_waits_for_global_shap_and_asks_again(warming, monkeypatch):
    from app.callbacks import descriptive

    monkeypatch.setattr(_core.state().lazy_value("shap_all"), "_done", False)
    bar, beeswarm, note, stop, box = descriptive.render_global_when_ready("/descriptive", 0)
    step = warming.index("shap_all") + 1
    assert bar is no_update and beeswarm is no_update and stop is False  # no request held: asked again in 1 s
    assert box == {}  # its switch on (a plain call): the beeswarm's panel shows the same wait
    assert (f"Waiting for the warm-up to compute global SHAP: warm-up step {step} of {len(warming)} (global SHAP); "
            f"{len(warming) - 3} of {len(warming)} steps done.") in _text(note)


def test_a_class_switch_says_it_computes_that_class_live_not_the_start_up_warm_up(warming, monkeypatch):
    # a new user opened ?class=class_0 on a store-served wine model: the store holds another class's values
    # (store.read.Store.applies_to), so global SHAP is computed live; the note said "Waiting for the warm-up"
    from types import SimpleNamespace

    wine = SimpleNamespace(task="multiclass", classes=("not class_0", "class_0"))
    monkeypatch.setattr(_core, "workspace", lambda: wine)
    monkeypatch.setattr(_core.state().lazy_value("shap_all"), "_done", False)
    monkeypatch.setattr(_core.state(), "opened_store", object())  # opened at start-up, not applied to class_0
    monkeypatch.setattr(_core.state(), "built_store", None)
    step = warming.index("shap_all") + 1
    assert warmup.waiting_for("shap_all") == (
        f"Computing global SHAP for class class_0 live (the store holds another class's results): step {step} of "
        f"{len(warming)} (global SHAP); {len(warming) - 3} of {len(warming)} steps done.")
    monkeypatch.setattr(_core.state(), "opened_store", None)  # no store: still that class's values, not "the warm-up"
    assert warmup.waiting_for("shap_all").startswith("Computing global SHAP for class class_0: step ")


def test_the_global_panels_wait_with_a_blank_figure_not_empty_axes(sample_workspace, monkeypatch):
    # the empty dcc.Graph drew axes -1..6 and 0..4 while global SHAP was computed
    import dash

    from app.shell import ids

    monkeypatch.setattr(dash, "register_page", lambda *args, **kwargs: None)
    from app.pages import descriptive

    tree = descriptive.layout()
    found = {c.id: c for c in tree._traverse_ids() if isinstance(c.id, str)}
    for graph_id in (ids.GLOBAL_BAR, ids.GLOBAL_BEESWARM):
        fig = found[graph_id].figure
        assert fig.layout.xaxis.visible is False and fig.layout.yaxis.visible is False and not fig.data
        assert [a.text for a in fig.layout.annotations] == ["global SHAP is being computed: how far, just below"]
