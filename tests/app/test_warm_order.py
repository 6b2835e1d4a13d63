"""The warm-up's order and its per-step timings (issue 14).

A step registered ``warm="last"`` runs after every ``warm=True`` step whatever the import order, so a
step of minutes (the surrogate frontier on Adult) no longer holds back the steps other pages wait for; each
step's wall and CPU seconds are kept and logged. Registries are swapped for the test's own; nothing is fitted.
"""
from __future__ import annotations

import logging
import threading
import time
import types

import pytest

import app.serve.server  # noqa: F401  (registers every service module's warm values)
from app import services
from app.services import _core, surrogates, warmup


@pytest.fixture
def registry(monkeypatch):
    monkeypatch.setattr(_core, "_factories", {})
    monkeypatch.setattr(_core, "_warm_order", [])
    monkeypatch.setattr(_core, "_warm_last", set())
    monkeypatch.setattr(_core, "_warm_late", set())
    monkeypatch.setattr(_core, "_warm_first", set())
    ran = []
    with services.overridden(services.ServiceState()):  # the suite's state, its values and caches, put back after
        yield ran, _step(ran)


def _step(ran):
    def step(name, fail=False):
        def make():
            ran.append(name)
            if fail:
                raise RuntimeError(f"{name} broke")
            return name
        return make
    return step


def test_a_last_step_runs_after_steps_registered_later(registry):
    ran, step = registry
    _core.lazy("slow", step("slow"), warm="last")
    _core.lazy("a", step("a"), warm=True)
    _core.lazy("cold", step("cold"))  # not warmed at all
    _core.lazy("b", step("b"), warm=True)
    assert _core._warm_order == ["a", "b", "slow"]
    _core.init(object(), warm="sync")
    assert ran == ["a", "b", "slow"]
    assert warmup.warm_status().total == 3


def test_every_step_is_timed_and_logged_even_one_that_fails(registry, monkeypatch, caplog):
    ran, step = registry
    clock = iter(range(100))  # each reading one second later: wall = CPU = 1 s per step
    monkeypatch.setattr(_core, "time", types.SimpleNamespace(perf_counter=lambda: next(clock),
                                                             process_time=lambda: next(clock), sleep=lambda s: None))
    _core.lazy("a", step("a"), warm=True)
    _core.lazy("b", step("b", fail=True), warm=True)
    with caplog.at_level(logging.INFO, logger="candor.warmup"):
        _core.init(object(), warm="sync")
    # readings: a starts at 0 (wall), 1 (cpu), ends at 2, 3; b starts at 4, 5, ends at 6, 7
    assert services.state().warm_seconds == {"a": (2, 2), "b": (2, 2)}
    assert [r.getMessage() for r in caplog.records] == [
        "warm-up step a: 2.00 s wall, 2.00 s process CPU",
        "warm-up step b: 2.00 s wall, 2.00 s process CPU (failed: b broke)"]
    assert _core.warm_done.is_set()


def test_first_steps_run_before_the_first_request_and_the_rest_after_it(registry, monkeypatch):
    """issue 23: the Descriptive page's first row is computed while the server starts, not after its first page."""
    ran, step = registry
    monkeypatch.setattr(_core, "first_request", threading.Event())
    monkeypatch.setattr(_core, "warm_done", threading.Event())
    monkeypatch.setattr(_core, "time", types.SimpleNamespace(perf_counter=time.perf_counter,
                                                             process_time=time.process_time, sleep=lambda s: None))
    _core.lazy("a", step("a"), warm=True)
    _core.lazy("late", step("late"), warm="last")
    _core.lazy("row", step("row"), warm="first")
    _core.lazy("row2", step("row2"), warm="first")
    assert _core._warm_order == ["row", "row2", "a", "late"]
    _core.init(object())  # background warm-up
    deadline = time.monotonic() + 10
    while ran != ["row", "row2"] and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(0.05)
    assert ran == ["row", "row2"]  # the rest waits for the first request
    assert not _core.warm_done.is_set()
    assert warmup.warm_status().step == 3 and warmup.warm_status().current == "a"
    _core.first_request.set()
    assert _core.warm_done.wait(10)
    assert ran == ["row", "row2", "a", "late"]
    assert set(services.state().warm_seconds) == {"row", "row2", "a", "late"}


def test_the_landing_values_then_the_first_row_view_are_the_first_warm_steps():
    """What the landing page reads (every row's label and output, the held-out summary), then the Descriptive
    page's first row: all before the first request (served from a store, the rest waits for it, issue 23)."""
    from app.services import row_view

    assert _core._warm_order[:4] == ["labels", "outputs", "model_summary", "first_row_view"]
    assert row_view.first_row_view is not None


def test_an_unknown_warm_value_is_refused(registry):
    with pytest.raises(ValueError, match="warm must be False, True, 'first', 'late' or 'last'"):
        _core.lazy("x", lambda: 1, warm="early")


def test_the_surrogate_frontier_is_the_last_warm_fit():
    """Registered by import order it came before the Persuasive curve and the table's widths; the cohorts' story and
    the stored rows' views ("late") come after the pages' own values and before it; only the Persuasive page's rules, drawn from the
    frontier, come after it (issue 27)."""
    import app.callbacks  # noqa: F401  (the pages' warm values, registered when their modules are imported)

    assert _core._warm_order[-2:] == ["frontier_default", "persuasive_opening_rules"]
    # "late" too: the stored rows' views and drawn Descriptive panels (seconds from a store, read a row at a time since
    # store/row_meta.py), after the pages' own values: the Descriptive page's global view waited 2 s behind them
    assert set(_core._warm_order[-5:-2]) == {"stored_row_views", "cohort_story", "descriptive_rendered_rows"}
    order = _core._warm_order.index
    assert order("shap_all") < order("descriptive_global_drawn") < order("stored_row_views") \
        < order("descriptive_rendered_rows")
    assert {"persuasive_global", "widest_value_labels", "muse_default"} <= set(_core._warm_order[:-1])
    assert surrogates._default_frontier is not None


def test_a_value_that_failed_is_not_computed_again_by_every_poll_but_is_retried_later(registry, monkeypatch):
    """A failed global SHAP was computed again (minutes of CPU) by each poll of each panel: within RETRY_AFTER_S
    a failed value raises its error again without calling its factory; after it, the factory runs again."""
    ran, step = registry
    clock = [1000.0]
    monkeypatch.setattr(_core, "_monotonic", lambda: clock[0])
    outcome = ["fail"]

    def flaky():
        ran.append("flaky")
        if outcome[0] == "fail":
            raise RuntimeError("the model timed out")
        return "values"

    get = _core.lazy("flaky", flaky)
    _core.init(object(), warm=False)
    for _ in range(3):
        with pytest.raises(RuntimeError, match="the model timed out"):
            get()
    assert ran == ["flaky"]  # three asks, one computation
    outcome[0] = "ok"
    clock[0] += _core._Lazy.RETRY_AFTER_S - 1
    with pytest.raises(RuntimeError, match="the model timed out"):
        get()
    clock[0] += 2
    assert get() == "values" and get() == "values" and ran == ["flaky", "flaky"]


def test_the_first_rows_view_is_the_warm_ups_and_equals_a_fresh_one(sample_workspace):
    """The page's first row is answered from the warm-up's value (computed once), equal to the row's view computed
    afresh; other rows and other k are computed as before."""
    from app.services import row_view, tabular

    r = tabular.default_row()
    view = row_view.local_view(r)
    assert row_view.local_view(r) is view is row_view.first_row_view()
    fresh = row_view._view(r, 5, False)
    assert (view.shap.values == fresh.shap.values).all() and (view.lime.values == fresh.lime.values).all()
    assert view.agreement == fresh.agreement and view.labels == fresh.labels
    assert row_view.local_view(r, k=3).agreement.k == 3
