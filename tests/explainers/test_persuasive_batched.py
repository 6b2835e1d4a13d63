"""The batched tradeoff curve equals the straightforward per-k operator chain (exact oracle, bundled sample).

:func:`explainers.persuasive.tradeoff_curve` measures every k of a row's curve
with one model call; the oracle is the chain run once per k (describe → group →
top-k → round → verified sentences), each step measured on its own, as the
Persuasive service did before. Values must agree to 1e-12.
"""
import math
from dataclasses import replace

import numpy as np
import pytest

import explainers.persuasive as xp

TOL = 1e-12
ROUNDINGS = [None, 0.05, "qualitative", "direction"]


def _per_k(e, ctx, rounding, groups, sensitive):
    """The straightforward path: every operator, measured and worded, once per k."""
    start = xp.describe(e, ctx)
    if groups:
        start = xp.group_features(start, groups, ctx, sensitive=sensitive)
    out = []
    for k in range(len(start.items) + 1):
        s = xp.top_k_items(start, k, ctx)
        if rounding == "direction":
            s = xp.direction_only(s, ctx)
        elif rounding is not None:
            s = xp.round_values(s, rounding, ctx)
        out.append(xp.summarize(s, ctx))
    return out


def _same(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or abs(a - b) <= TOL


def _assert_curve_matches(curve, slow, keys):
    assert len(curve) == len(slow)
    for k, (fast, ref) in enumerate(zip(curve, slow)):
        assert fast.k == k and fast.items == ref.items
        assert set(fast.fidelity_after) == set(keys) & set(ref.fidelity_after)
        for key, value in fast.fidelity_after.items():
            assert _same(value, ref.fidelity_after[key]), (k, key, value, ref.fidelity_after[key])
        for key in ("n_items", "n_chunks"):
            assert fast.complexity_after[key] == ref.complexity_after[key], (k, key)


@pytest.fixture(scope="module")
def sample(sample_workspace):
    """The persuasive service module and four held-out rows: two predicted malignant, two benign."""
    import importlib

    from app import services

    svc = importlib.import_module("app.services.persuasive")
    rows = [int(r) for r in sample_workspace.test_idx[:40]]
    preds = {r: services.shap_row(r).prediction >= 0.5 for r in rows}
    pos = [r for r in rows if preds[r]][:2]
    neg = [r for r in rows if not preds[r]][:2]
    assert pos and neg, "the oracle needs rows predicted in each class"
    return svc, pos + neg


@pytest.mark.parametrize("rounding", ROUNDINGS)
def test_curve_equals_per_k_chain_on_sample_rows(sample, rounding):
    from app import services

    svc, rows = sample
    for r in rows:
        e, ctx = services.shap_row(r), svc._context(r, False)
        fast = xp.tradeoff_curve(e, ctx, rounding=rounding)
        _assert_curve_matches(fast, _per_k(e, ctx, rounding, None, ()), xp.CHEAP_MEASURES)


@pytest.mark.parametrize("rounding", [None, "qualitative"])
def test_curve_equals_per_k_chain_with_grouping_and_sensitive(sample, rounding):
    from app import services

    svc, rows = sample
    groups = svc._groups()
    assert groups, "the sample has correlated groups"
    sensitive = (next(iter(groups.values()))[1],)
    for r in rows[1:3]:
        e, ctx = services.shap_row(r), svc._context(r, False)
        fast = xp.tradeoff_curve(e, ctx, rounding=rounding, groups=groups, sensitive=sensitive)
        assert len(fast) < e.values.size + 1
        _assert_curve_matches(fast, _per_k(e, ctx, rounding, groups, sensitive), xp.CHEAP_MEASURES)


def test_curve_calls_the_model_a_fixed_number_of_times(sample):
    """One call per chain step before O1 (describe, group, round) and one batch for every k (no AOPC)."""
    from app import services

    svc, rows = sample
    e, ctx = services.shap_row(rows[0]), svc._context(rows[0], True)
    calls = []

    def counting(a):
        calls.append(len(a))
        return ctx.predict_fn(a)

    groups = svc._groups()
    curve = xp.tradeoff_curve(e, replace(ctx, predict_fn=counting), rounding=0.05, groups=groups)
    assert len(calls) == 4  # describe, group, round, then every k at once:
    assert calls[-1] == (1 + 2 * len(curve)) * len(ctx.background)  # f(x), then kept and removed per k


def test_service_curve_matches_per_k_chain_and_the_chosen_k(sample):
    from app.views import figures_persuasive
    from app import services

    svc, rows = sample
    plotted = {key for key, *_ in figures_persuasive.ROW_MEASURES}
    assert plotted <= set(svc.CURVE_MEASURES)
    for r, rounding in ((rows[0], "exact"), (rows[-1], "0.1")):
        view = services.persuasive_view(r, 4, rounding)
        e, ctx = services.shap_row(r), svc._context(r, False)
        slow = _per_k(e, ctx, svc._parse(rounding), None, ())
        _assert_curve_matches(view.curve, slow, svc.CURVE_MEASURES)
        now = view.curve[4]  # the marked point sits on the curve
        assert now.complexity_after["n_chunks"] == view.simplification.complexity_after["n_chunks"]
        for key in svc.CURVE_MEASURES:
            assert _same(now.fidelity_after[key], view.simplification.fidelity_after[key]), key


def test_many_equals_single_on_a_known_model():
    """attribution_fidelity_many gives attribution_fidelity's values for each vector (g = x·w, exact)."""
    w = np.array([0.5, -1.0, 2.0, 0.1, 0.0])
    f = lambda a: np.asarray(a, float) @ w  # noqa: E731
    rng = np.random.default_rng(0)
    x, bg = rng.normal(size=5), rng.normal(size=(7, 5))
    nb = xp.make_neighborhood(f, x, np.ones(5), num_samples=60, seed=1)
    phi = w * (x - bg.mean(0))
    shown = [phi * (np.arange(5) < k) for k in range(6)]
    feats = [list(range(k)) for k in range(6)]
    kw = dict(prediction=float(f(x[None])[0]), base_value=float(f(bg).mean()), predict_fn=f, x=x, background=bg)
    many = xp.attribution_fidelity_many(phi, shown, feats, neighborhood=nb, **kw)
    for s, S, got in zip(shown, feats, many):
        one = xp.attribution_fidelity(phi, s, S, baseline=np.zeros(5), neighborhood=nb, full=False, **kw)
        assert list(got) == list(xp.CHEAP_MEASURES)
        assert all(_same(got[key], one[key]) for key in got)
    only = xp.attribution_fidelity_many(phi, shown, feats, measures=("spearman",), **kw)
    assert [list(d) for d in only] == [["spearman"]] * 6
    with pytest.raises(ValueError, match="unknown measures"):
        xp.attribution_fidelity_many(phi, shown, feats, measures=("aopc",), **kw)
