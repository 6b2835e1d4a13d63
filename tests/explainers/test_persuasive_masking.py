"""ERASER's value function (docs/methods.md, "Tests with exact oracles", T12), T10 through the product's chain, and the averaged curve
checked against a brute-force recomputation."""
import numpy as np
import pandas as pd
import pytest
from scipy import stats

import explainers.persuasive as xp
from explainers import Explanation, comprehensiveness, masked_output, sufficiency

SUM3 = lambda a: np.asarray(a, dtype=float).sum(axis=1)  # noqa: E731  g(x) = x1 + x2 + x3


def test_t12_eraser_single_rationale():
    x, zero = np.array([3.0, 2, 1]), np.zeros((1, 3))
    assert comprehensiveness(SUM3, x, [0], zero) == pytest.approx(3.0)
    assert sufficiency(SUM3, x, [0], zero) == pytest.approx(3.0)
    assert [6 - masked_output(SUM3, x, [], zero) + 0, comprehensiveness(SUM3, x, [0, 1], zero)] == [6.0, 5.0]


def test_comprehensiveness_of_empty_set_is_zero():
    assert comprehensiveness(SUM3, [3, 2, 1], [], np.zeros((4, 3))) == 0.0


def test_masked_output_averages_over_background():
    bg = np.array([[0.0, 0, 0], [2, 2, 2]])
    assert masked_output(SUM3, [3, 2, 1], [0], bg) == pytest.approx(3 + (0 + 4) / 2)


def test_t10_k_equals_d_loses_nothing_through_the_chain():
    e = Explanation("shap", ("a", "b", "c"), np.array([3.0, 2, 1]), 0.0, 6.0, np.array([3.0, 2, 1]), "raw", "y",
                    "test")
    ctx = xp.make_context(SUM3, np.zeros((4, 3)), np.zeros((2, 3)), e.feature_values, ("no", "yes"),
                          num_samples=0)
    s = xp.simplify(e, ctx, k=3)
    assert s.fidelity_after["mass_retained"] == 1.0 and s.fidelity_after["sufficiency"] == 0.0
    assert s.dropped == () and isinstance(s, xp.Simplification)
    last = xp.tradeoff_curve(e, ctx, measures=("mass_retained", "sufficiency"))[-1]
    assert last.fidelity_after == {"mass_retained": 1.0, "sufficiency": 0.0}


def _brute_force(model, X, row, values, bg, k):
    """Sufficiency, comprehensiveness (predicted class) and Spearman of top-k, one background row at a time."""
    x = X.iloc[row].to_numpy(float)
    p = lambda a: model.predict_proba(pd.DataFrame(np.atleast_2d(a), columns=X.columns))[:, 1]  # noqa: E731
    sign = 1.0 if p(x)[0] >= 0.5 else -1.0
    order = sorted(range(x.size), key=lambda j: (-abs(values[j]), j))
    kept, dropped = order[:k], order[k:]

    def only(keep):
        rows = []
        for b in bg:
            z = b.copy()
            z[keep] = x[keep]
            rows.append(z)
        return float(np.mean(p(np.array(rows))))

    suff = sign * (p(x)[0] - only(kept))
    comp = sign * (p(x)[0] - only(dropped)) if k else 0.0
    shown = np.zeros_like(values)
    shown[kept] = values[kept]
    rho = stats.spearmanr(np.abs(values), np.abs(shown)).statistic if k else np.nan
    return suff, comp, rho


def test_average_curve_equals_a_brute_force_recomputation(bc, gb_model):
    """The global view's numbers, recomputed row by row and background row by background row."""
    from explainers import ShapExplainer

    X, _, train, test = bc
    shap = ShapExplainer(gb_model, background=X.iloc[train], background_size=20)
    rows = [int(r) for r in test[:5]]
    expls = [shap.explain(X.iloc[[r]]) for r in rows]
    bg = X.iloc[train[:20]].to_numpy(float)
    f = lambda a: gb_model.predict_proba(pd.DataFrame(a, columns=X.columns))[:, 1]  # noqa: E731
    train_rows = X.iloc[train].to_numpy(float)
    ctxs = [xp.make_context(f, train_rows, bg, X.iloc[r].to_numpy(float), ("benign", "malignant"), num_samples=0,
                            full=False) for r in rows]
    avg = xp.average_curve(expls, ctxs, measures=("sufficiency", "comprehensiveness", "spearman"))
    assert avg.n_rows == 5 and avg.k.tolist() == list(range(31))
    for k in (0, 1, 3, 10, 30):
        table = np.array([_brute_force(gb_model, X, r, e.values, bg, k) for r, e in zip(rows, expls)])
        for j, m in enumerate(("sufficiency", "comprehensiveness")):
            assert avg.measures[m][k] == pytest.approx(table[:, j].mean(), abs=1e-12)
            assert avg.std_error[m][k] == pytest.approx(table[:, j].std(ddof=1) / np.sqrt(5), abs=1e-12)
        if k:
            assert avg.measures["spearman"][k] == pytest.approx(table[:, 2].mean(), abs=1e-12)
    assert np.isnan(avg.measures["spearman"][0]) and avg.measures["sufficiency"][30] == pytest.approx(0, abs=1e-12)


def test_make_context_is_the_services_context(sample_workspace):
    """The dashboard builds its row context with make_context: reference = training medians."""
    import importlib

    service = importlib.import_module("app.services.persuasive")

    ctx = service._context(int(sample_workspace.test_idx[0]), True)
    train = sample_workspace.X.iloc[sample_workspace.train_idx].to_numpy(float)
    np.testing.assert_array_equal(ctx.reference, np.median(train, axis=0))
    assert ctx.neighborhood is not None and ctx.neighborhood.Z.shape[0] == service.NEIGHBORHOOD


def test_global_view_draws_each_mean_with_its_standard_error(sample_workspace, monkeypatch):
    """The Persuasive page's global curve comes from average_curve and shows ± 1 standard error."""
    import importlib

    from app.views import figures_persuasive

    service = importlib.import_module("app.services.persuasive")
    monkeypatch.setattr(service, "GLOBAL_ROWS", 4)
    g = service._make_global()
    assert g.n_rows == 4 and g.k.tolist() == list(range(31))
    fig = figures_persuasive.global_tradeoff(g, 3)
    suff = next(t for t in fig.data if t.name.startswith("sufficiency"))
    np.testing.assert_allclose(suff.error_y.array, g.std_error["sufficiency"])
    assert np.all(np.asarray(suff.error_y.array)[1:30] > 0)
