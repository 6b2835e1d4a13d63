"""``benchmarks.build_store``'s timeline of a build (issue 23): the parts cut at the build's progress lines, each
process's CPU and runnable share in each, and the quiet wall time projected from them. Expected values worked out by
hand from the samples below (module docstring of ``benchmarks/build_store_parts/timeline.py``)."""
from __future__ import annotations

import os

import pytest

from benchmarks.build_store_parts import timeline

LINES = [(1.5, "candor: build: rows (SHAP, LIME) 0/10"), (2.5, "candor: build: global SHAP 0/1"),
         (3.5, "candor: build: rows (SHAP, LIME) 10/10"), (4.2, "candor: build: the Persuasive page's row panels 5/10"),
         (5.5, "candor: build: the Persuasive page's row panels 10/10")]
SAMPLES = [  # (seconds, {process: (CPU seconds so far, runnable)})
    (1.0, {"build": (1.0, True)}),
    (2.0, {"build": (1.2, False), "worker 1": (0.9, True), "worker 2": (0.8, True)}),
    (3.0, {"build": (1.3, False), "worker 1": (1.9, True), "worker 2": (1.0, False)}),
    (4.0, {"build": (2.0, True), "worker 1": (1.9, False), "worker 2": (1.0, False)}),
    (5.0, {"build": (2.0, False), "worker 1": (2.6, True), "worker 2": (1.8, True)}),
    (6.0, {"build": (2.5, True)}),
]


def test_parts_cut_at_the_progress_lines_with_cpu_runnable_share_and_projection():
    found = {p["part"]: p for p in timeline.parts(SAMPLES, LINES, 6.5)}
    assert list(found) == ["start-up", "rows", "after the rows", "row panels", "end", "all"]
    assert [found[n]["wall_s"] for n in found] == [1.5, 2.0, 0.7, 1.3, 1.0, 6.5]
    rows = found["rows"]  # samples at 2 and 3 s
    assert rows["cpu_s"] == {"build": 0.3, "worker 1": 1.9, "worker 2": 1.0}
    assert rows["runnable"] == {"build": 0.0, "worker 1": 1.0, "worker 2": 0.5}
    assert rows["projected_quiet_s"] == pytest.approx(0.95 + 1.0)  # max(1.9 / 2, 0.9) + max(1.3 / 2, 1.0)
    assert found["start-up"]["projected_quiet_s"] == pytest.approx(1.0)  # one process: its own CPU
    assert found["after the rows"]["cpu_s"] == {"build": 0.7, "worker 1": 0.0, "worker 2": 0.0}
    assert found["row panels"]["cpu_s"] == {"build": 0.0, "worker 1": 0.7, "worker 2": 0.8}
    assert found["row panels"]["projected_quiet_s"] == pytest.approx(0.8)  # max(1.5 / 2, 0.8)
    assert found["end"]["cpu_s"] == {"build": 0.5}
    assert found["all"]["projected_quiet_s"] == pytest.approx(1.0 + 1.95 + 0.7 + 0.8 + 0.5)
    assert found["all"]["cpu_s"] == {"build": 2.5, "worker 1": 2.6, "worker 2": 1.8}


def test_a_build_without_row_panels_has_no_panel_parts():
    lines = LINES[:3]
    assert [p["part"] for p in timeline.parts(SAMPLES, lines, 6.5)] == ["start-up", "rows", "end", "all"]


def test_this_thread_is_runnable_while_it_reads_its_state():
    assert timeline._runnable(os.getpid())
