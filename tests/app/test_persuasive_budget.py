"""The Persuasive page's global curve keeps to its time budget, and says so (issue 14).

A fake clock makes every row take 2 s: with a 5 s budget and at least 2 rows, the curve averages the first 3
held-out rows (not the first 6), equals the curve computed over exactly those rows, and its source states the
sample and why. Nothing is timed for real.
"""
from __future__ import annotations

import importlib
import itertools
import types

import numpy as np

persuasive = importlib.import_module("app.services.persuasive")


def test_the_global_curve_stops_at_its_budget_and_states_the_sample(sample_workspace, monkeypatch):
    monkeypatch.setattr(persuasive, "GLOBAL_ROWS", 6)
    monkeypatch.setattr(persuasive, "GLOBAL_MIN_ROWS", 2)
    monkeypatch.setattr(persuasive, "GLOBAL_BUDGET_S", 5.0)
    ticks = itertools.count(0, 2)  # one reading at the start, one after each row
    monkeypatch.setattr(persuasive, "time", types.SimpleNamespace(perf_counter=lambda: next(ticks)))
    got = persuasive._make_global()
    assert got.n_rows == 3  # 2 s, 4 s (under the budget), 6 s: stop
    assert "averaged over the first 3 held-out rows (SHAP took 2 s a row here: the rows explained within a 5 s " \
           "budget, at least 2, of the first 6)" in got.source
    monkeypatch.setattr(persuasive, "GLOBAL_ROWS", 3)
    monkeypatch.setattr(persuasive, "GLOBAL_BUDGET_S", float("inf"))
    exact = persuasive._make_global()  # the same three rows, no budget: nothing to state
    assert exact.n_rows == 3 and "budget" not in exact.source
    for m in ("sufficiency", "comprehensiveness", "spearman", "mass_retained"):
        np.testing.assert_array_equal(getattr(got, m), getattr(exact, m))
