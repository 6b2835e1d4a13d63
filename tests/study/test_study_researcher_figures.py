"""Issue 16: the researcher page plots reliance by condition with its Wilson intervals, confidence
against the advice's correctness, and the calibration scatter (trust against fidelity) that was
prepared but never plotted. Oracles: the hand-computed response table of test_study_reliance and
the Wilson closed form solved there."""

from __future__ import annotations

import pytest
from scipy import stats

from study import analysis, runtime
from study.simulate import run_participant
from tests.study.conftest import db_url  # noqa: F401  (fixture)
from tests.study.live_study import STUDY, serve_study
from tests.study.test_study_reliance import EXPECTED, _trial_log, _wilson_closed_form


def test_reliance_bars_show_the_hand_computed_values_and_wilson_intervals():
    from app.views.figures_study import RELIANCE_SHOWN, reliance_bars

    fig = reliance_bars(analysis.reliance_by_condition(_trial_log()))
    z = stats.norm.ppf(0.975)
    bars = {b.name: b for b in fig.data}
    assert set(bars) == {"desc", "pers"}
    for cond, bar in bars.items():
        assert list(bar.x) == list(RELIANCE_SHOWN.values())
        for m, y, up, down in zip(RELIANCE_SHOWN, bar.y, bar.error_y.array, bar.error_y.arrayminus):
            k, n = EXPECTED[cond][m]
            lo, hi = _wilson_closed_form(k, n, z)
            assert y == pytest.approx(k / n)
            assert y + up == pytest.approx(min(hi, 1.0), abs=1e-12) and y - down == pytest.approx(max(lo, 0.0), abs=1e-12)


def _graphs(component):
    from dash import dcc

    if isinstance(component, dcc.Graph):
        yield component
    children = getattr(component, "children", None)
    for c in children if isinstance(children, (list, tuple)) else ([children] if children is not None else []):
        yield from _graphs(c)


def test_dashboard_plots_reliance_correctness_and_calibration(db_url, tmp_path, monkeypatch):  # noqa: F811
    from app.views.study_research import dashboard

    study = serve_study(db_url, tmp_path, monkeypatch)
    for i in range(6):
        run_participant(runtime.engine(), study, seed=300 + i, stratum="low")
    page = dashboard(STUDY)
    graphs = {g.figure.layout.title.text.split(":")[0]: g.figure for g in _graphs(page)}
    assert "Trust and reliance against the fidelity shown" in str(page)  # study/fidelity_regression.py's card
    assert set(graphs) == {"Reliance by condition (95% Wilson intervals)", "Confidence when the advice was right vs wrong",
                           "Trust vs fidelity", "Appropriateness of reliance (Schemmer et al. 2023; 95% Wilson intervals)"}
    import pandas as pd

    from study import export

    trials = pd.DataFrame(export.table_rows(runtime.engine(), "trial_log", STUDY))
    # the appropriateness plot: one point per condition where RAIR and RSR are defined, at (RAIR, RSR)
    rel = analysis.reliance_by_condition(trials).set_index(["condition", "measure"])
    app_fig = graphs["Appropriateness of reliance (Schemmer et al. 2023; 95% Wilson intervals)"]
    defined = [c for c in sorted(set(rel.index.get_level_values(0)))
               if rel.loc[(c, "rair"), "n"] > 0 and rel.loc[(c, "rsr"), "n"] > 0]
    assert [t.name for t in app_fig.data] == defined and defined
    for t in app_fig.data:
        assert (t.x[0], t.y[0]) == (rel.loc[(t.name, "rair"), "mean"], rel.loc[(t.name, "rsr"), "mean"])
        assert t.x[0] - t.error_x.arrayminus[0] == pytest.approx(rel.loc[(t.name, "rair"), "ci_low"])
        assert t.y[0] + t.error_y.array[0] == pytest.approx(rel.loc[(t.name, "rsr"), "ci_high"])
    answers = pd.DataFrame(export.table_rows(runtime.engine(), "questionnaire_responses", STUDY))
    pts = analysis.calibration(trials, answers)["points"]
    scatter = graphs["Trust vs fidelity"]
    assert sum(len(t.x) for t in scatter.data) == len(pts) > 0  # one point per participant shown an explanation
    assert sorted(x for t in scatter.data for x in t.x) == sorted(pts["mean_fidelity"])
