"""Rank stability over reruns: exact 1.0 for a deterministic explainer, brute force for tied features."""
from itertools import combinations

import numpy as np
import pandas as pd
import pytest
from lime.lime_tabular import LimeTabularExplainer
from scipy import stats

from explainers import LimeExplainer, ModelAdapter, ShapExplainer
from explainers.stability import rank_stability, rerun_stability


def test_linear_shap_with_a_fixed_background_is_exactly_stable(scaled_logistic, bc):
    """Background = all 40 rows given (< background_size), so every seed gives the same background and Linear
    SHAP is deterministic: each rerun equals the closed form w_j (x_j − mean_bg(x_j)) and stability is 1.0."""
    model, Xs = scaled_logistic
    train = bc[2]
    bg = Xs.iloc[train[:40]]
    x = Xs.iloc[[int(bc[3][0])]]
    adapter = ModelAdapter.for_table(model, bg)
    make = lambda s: ShapExplainer(adapter, background=bg, background_size=100, seed=s).explain(x)  # noqa: E731
    st = rerun_stability(make, range(6), k=5, method="shap")
    closed_form = model.coef_[0] * (x.to_numpy()[0] - bg.to_numpy().mean(axis=0))
    np.testing.assert_allclose(st.values, np.tile(closed_form, (6, 1)), rtol=0, atol=1e-10)
    assert st.topk_overlap == 1.0 and st.topk_overlap_min == 1.0 and st.jaccard == 1.0
    assert st.spearman == pytest.approx(1.0, abs=1e-12) and st.kendall_tau_b == pytest.approx(1.0, abs=1e-12)
    assert st.identical_sets and st.modal_set_share == 1.0 and st.stable
    top5 = set(np.argsort(-np.abs(closed_form))[:5].tolist())
    assert set(np.flatnonzero(st.topk_frequency == 1.0).tolist()) == top5
    assert set(np.unique(st.topk_frequency).tolist()) == {0.0, 1.0}
    assert "same in all 6 reruns" in st.verdict()


def _proba(a):
    p = 1 / (1 + np.exp(-(a[:, 0] + a[:, 1] + 0.3 * a[:, 2])))  # features a and b tied, c smaller
    return np.column_stack([1 - p, p])


def test_tied_features_stability_equals_brute_force_over_pairs_of_lime_reruns():
    """Two tied features: which one LIME ranks first depends on the seed. Expected values are computed by
    running lime directly for every rerun's seeds (2 fits each, averaged) and enumerating all pairs."""
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(300, 3)), columns=["a", "b", "c"])
    x = np.array([1.0, 1.0, 1.0])
    lime = LimeExplainer(_proba, training_data=X, class_names=("no", "yes"), repeats=2, num_samples=200)
    seeds = lime.independent_seeds(8)
    assert seeds == (0, 3, 6, 9, 12, 15, 18, 21)
    st = rerun_stability(lambda s: lime.explain(x, seed=s, num_samples=200), seeds, k=1, method="lime")

    def direct(seed):
        w = np.zeros(3)
        for s in (seed, seed + 1):
            exp = LimeTabularExplainer(X.to_numpy(), feature_names=list("abc"), class_names=["no", "yes"],
                                       discretize_continuous=True, discretizer="quartile",
                                       random_state=s).explain_instance(x, _proba, labels=(1,), num_features=3,
                                                                        num_samples=200)
            for j, v in exp.local_exp[1]:
                w[j] += v / 2
        return w

    runs = [direct(s) for s in seeds]
    top1 = [int(np.argmax(np.abs(w))) for w in runs]
    assert 0 < top1.count(0) < 8 and set(top1) == {0, 1}  # the tie really moves the top feature
    pairs = list(combinations(range(8), 2))
    expected_overlap = sum(top1[i] == top1[j] for i, j in pairs) / len(pairs)
    expected_rho = np.mean([stats.spearmanr(np.abs(runs[i]), np.abs(runs[j]))[0] for i, j in pairs])
    expected_tau = np.mean([stats.kendalltau(np.abs(runs[i]), np.abs(runs[j]))[0] for i, j in pairs])
    assert st.topk_overlap == pytest.approx(expected_overlap, abs=1e-12)
    assert st.jaccard == pytest.approx(expected_overlap, abs=1e-12)  # k = 1: same set or disjoint
    assert st.spearman == pytest.approx(expected_rho, abs=1e-12)
    assert st.kendall_tau_b == pytest.approx(expected_tau, abs=1e-12)
    np.testing.assert_allclose(st.topk_frequency, [top1.count(0) / 8, top1.count(1) / 8, 0.0], atol=0)
    assert st.modal_set_share == max(top1.count(0), top1.count(1)) / 8
    assert st.moving == ((0, 1) if top1.count(0) >= top1.count(1) else (1, 0))
    assert not st.identical_sets and "moving in and out: " in st.verdict()


def test_ranks_and_spread_by_hand():
    V = np.array([[3.0, -2.0, 1.0, 0.0], [1.0, 3.0, -2.0, 0.5], [2.0, 2.0, 0.0, 1.0]])
    st = rank_stability(V, k=2, feature_names=list("pqrs"))
    # top-2 sets: {p,q}, {q,r}, {p,q} (tie p=q=2 broken by lower index): pairwise overlaps 1/2, 1, 1/2
    assert st.topk_overlap == pytest.approx(2 / 3) and st.topk_overlap_min == 0.5
    assert st.jaccard == pytest.approx((1 / 3 + 1 + 1 / 3) / 3)
    np.testing.assert_allclose(st.topk_frequency, [2 / 3, 1.0, 1 / 3, 0.0])
    np.testing.assert_array_equal(st.rank_min, [1, 1, 2, 3])
    np.testing.assert_array_equal(st.rank_max, [3, 2, 4, 4])
    np.testing.assert_allclose(st.value_sd, V.std(axis=0, ddof=1))
    assert st.modal_set_share == pytest.approx(2 / 3) and not st.stable


@pytest.mark.parametrize("values, match", [
    (np.ones((1, 3)), "reruns >= 2"), (np.array([[1.0, np.nan], [1.0, 2.0]]), "NaN"),
])
def test_bad_reruns_are_refused_with_a_message(values, match):
    with pytest.raises(ValueError, match=match):
        rank_stability(values)
