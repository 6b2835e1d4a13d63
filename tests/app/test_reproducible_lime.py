"""A store is the same whatever the machine's load: in a build LIME stops by its tolerance or a sample cap,
never by its time budget (two single-process builds of one store differed by up to 0.05 in LIME)."""
import itertools

import numpy as np
import pytest

from app import services
from app.services import tabular


def _lime(row, monkeypatch, slow_clock):
    import explainers._lime_fits as le  # where LIME's fits read the clock

    if slow_clock:  # every clock read is 10 s later: a machine under heavy load
        ticks = itertools.count()
        monkeypatch.setattr(le.time, "perf_counter", lambda: 10.0 * next(ticks))
    else:
        monkeypatch.setattr(le.time, "perf_counter", __import__("time").perf_counter)
    return tabular._make_lime().explain(tabular.workspace().X.iloc[row])


@pytest.fixture
def fresh(sample_workspace, monkeypatch):
    services.init(sample_workspace, warm=False)
    monkeypatch.setattr(tabular, "LIME_LIMITS", {})
    yield
    services.init(sample_workspace, warm=False)


def test_build_lime_ignores_the_clock_and_live_lime_does_not(fresh, monkeypatch):
    live_slow = _lime(3, monkeypatch, True)  # row 3 needs 4,000 samples per fit to reach the tolerance
    assert live_slow.params["num_samples"] == tabular.LIME_SAMPLES  # the time budget cut it at the first round
    tabular.reproducible_lime(max_samples=8000)
    built_fast, built_slow = _lime(3, monkeypatch, False), _lime(3, monkeypatch, True)
    assert built_fast.params["num_samples"] == built_slow.params["num_samples"] == 4000
    assert np.array_equal(built_fast.values, built_slow.values)
    assert not np.array_equal(built_slow.values, live_slow.values)
