"""Per-row plots at 100k–1M rows (issue 14): the beeswarm draws every row up to a cap, a stated seeded sample
beyond it, as WebGL; what it summarises (mean |SHAP|, the features' order, the colours) comes from every row.

Oracles: numpy's mean of |SHAP| over every row and ``scipy.stats.rankdata`` (mid-ranks) for the colours.
"""
from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import rankdata

from app.views import figures_rows
from app.services import row_plots
from explainers import GlobalImportance

N_FEATURES = 15


def _global(n: int, seed: int = 1) -> GlobalImportance:
    rng = np.random.default_rng(seed)
    scale = np.linspace(0.1, 3.0, N_FEATURES)[rng.permutation(N_FEATURES)]  # a known, shuffled importance
    fv = rng.normal(size=(n, N_FEATURES))
    fv[:, :4] = rng.integers(0, 3, size=(n, 4))  # ties: category codes
    return GlobalImportance(tuple(f"f{j}" for j in range(N_FEATURES)), rng.normal(size=(n, N_FEATURES)) * scale, fv,
                            0.0, "probability", "bad", "test")


def _title(fig) -> str:
    return fig.layout.title.text


@pytest.mark.parametrize("n", [row_plots.MAX_DOTS + 1, 7_000])
def test_above_the_cap_a_stated_seeded_sample_of_real_rows_is_drawn_as_webgl(n):
    g = _global(n)
    b = row_plots.beeswarm_of(g)
    fig = figures_rows.beeswarm(b)
    cap = row_plots.MAX_DOTS
    assert f"{cap:,} of {n:,} rows shown (uniform random sample, seed 0); mean |SHAP| from all rows" in _title(fig)
    assert f"{cap:,} of {n:,}" in fig.layout.meta["alt"]
    assert {t.type for t in fig.data} == {"scattergl"} and len(fig.data) == 12
    rows = b.sample.rows
    assert len(rows) == cap and len(np.unique(rows)) == cap and rows.min() >= 0 and rows.max() < n
    for trace in fig.data:  # each dot is a real row's SHAP value of that trace's feature, the same rows for all
        j = int(trace.name[1:])
        np.testing.assert_array_equal(np.asarray(trace.x), g.values[rows, j])
        mid = (rankdata(g.feature_values[:, j], method="average") - 1) / (n - 1)  # colour: among every row
        np.testing.assert_allclose(np.asarray(trace.marker.color, dtype=float), mid[rows], atol=1e-6)
    again = row_plots.beeswarm_of(g)
    np.testing.assert_array_equal(again.sample.rows, rows)  # seeded: the same rows each time


def test_below_the_cap_every_row_is_drawn_and_nothing_is_said_sampled():
    n = 300
    g = _global(n)
    fig = figures_rows.beeswarm(row_plots.beeswarm_of(g))
    assert "sample" not in _title(fig) and "shown" not in _title(fig) and "shown" not in fig.layout.meta["alt"]
    assert _title(fig).startswith(f"SHAP values of {n} rows (beeswarm)")
    assert {t.type for t in fig.data} == {"scatter"}  # 3,600 dots: SVG (figures.SVG_MAX_POINTS)
    for trace in fig.data:
        j = int(trace.name[1:])
        np.testing.assert_array_equal(np.asarray(trace.x), g.values[:, j])  # every row, in order


def test_order_and_importance_are_mean_abs_shap_of_every_row():
    n = 9_000
    g = _global(n, seed=2)
    b = row_plots.beeswarm_of(g)
    oracle = np.abs(np.asarray(g.values)).mean(axis=0)
    top = np.argsort(-oracle, kind="stable")[:12][::-1]  # least important first: the bottom of the plot
    assert b.feature_names == tuple(f"f{j}" for j in top)
    np.testing.assert_allclose(b.importance, oracle[top], rtol=1e-12, atol=0)
    drawn_only = np.abs(np.asarray(g.values)[b.sample.rows]).mean(axis=0)[top]
    assert not np.allclose(b.importance, drawn_only, rtol=1e-6)  # not the sample's mean


def test_descriptive_global_panel_serves_the_sampled_view(monkeypatch):
    """The page's callback draws what :func:`services.global_view` chose (one service call), as WebGL."""
    from app import services
    from app.views import descriptive

    g = _global(5_000)
    monkeypatch.setattr(services, "global_view", lambda: row_plots.GlobalView(g, row_plots.beeswarm_of(g)))
    bar, swarm, _ = descriptive.render_global(None)
    assert {t.type for t in swarm.data} == {"scattergl"} and all(len(t.x) == row_plots.MAX_DOTS for t in swarm.data)
    assert "2,000 of 5,000 rows shown" in _title(swarm)
    np.testing.assert_allclose(sorted(bar.data[0].x), np.sort(np.abs(g.values).mean(axis=0))[-len(bar.data[0].x):],
                               rtol=1e-12)


@pytest.mark.parametrize("rows, kind", [(333, "scatter"), (334, "scattergl")])
def test_a_beeswarm_is_svg_up_to_4000_dots_and_webgl_past_them(rows, kind):
    """12 features: 333 rows are 3,996 dots (SVG), 334 rows 4,008 (WebGL); the dots counted in the figure itself."""
    fig = figures_rows.beeswarm(row_plots.beeswarm_of(_global(rows)))
    dots = sum(len(t.x) for t in fig.data)
    assert dots == 12 * rows and {t.type for t in fig.data} == {kind}
    assert (dots <= 4_000) == (kind == "scatter")
