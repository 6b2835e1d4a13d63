"""Cohorts, the error tree and fairness rates against independent oracles: pandas group-bys, a brute-force
recount of each leaf, hand counts, and a planted model where the story misleads most in a known cohort."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import explainers.persuasive as xp
from explainers import Explanation
from explainers._codec import TabularCodec
from explainers.cohorts import (Filter, cohort_figures, cohort_mask, error_tree, filters_text, misleads_most,
                                parse_filters)
from explainers.fairness import fairness_report
from explainers.muse import CartSurrogate


@pytest.fixture(scope="module")
def table():
    rng = np.random.default_rng(3)
    X = pd.DataFrame({"age": rng.integers(18, 80, 400).astype(float), "mean radius": rng.normal(14, 3, 400),
                      "code": rng.integers(0, 3, 400).astype(float)})
    y = (X["mean radius"] + rng.normal(0, 2, 400) > 14).astype(int).to_numpy()
    pred = (X["mean radius"] > 14).astype(int).to_numpy()
    return X, y, pred


def test_cohort_accuracy_and_agreement_equal_pandas_group_bys(table):
    X, y, pred = table
    f = parse_filters("age >= 40; mean radius < 15.5", X.columns)
    m = cohort_mask(X, f)
    frame = X.assign(correct=(y == pred), inside=(X["age"] >= 40) & (X["mean radius"] < 15.5))
    assert m.sum() == frame["inside"].sum() > 20
    cart = CartSurrogate(max_leaf_nodes=3).fit(X, pred)
    sur = cart.predict(X)
    fig = cohort_figures("mine", m, y == pred, rule_set=cart.rule_set_, X=X, y_model=pred)
    oracle = frame.assign(agree=(sur == pred)).groupby("inside")[["correct", "agree"]].mean().loc[True]
    assert fig.n_rows == int(frame["inside"].sum())
    assert fig.accuracy == pytest.approx(oracle["correct"]) and fig.agreement == pytest.approx(oracle["agree"])
    assert fig.accuracy_low < fig.accuracy < fig.accuracy_high and fig.agreement_low <= fig.agreement <= fig.agreement_high


def test_error_tree_leaves_equal_a_brute_force_recount_and_find_the_planted_cohort():
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.uniform(0, 1, (600, 4)), columns=["a", "b", "c", "d"])
    wrong = ((X["a"] > 0.6) & (X["b"] <= 0.3)).to_numpy() | (rng.uniform(size=600) < 0.02)
    tree = error_tree(X, wrong, min_leaf=10)
    assert tree.max_depth == 3 and all(len(leaf.filters) <= 3 for leaf in tree.leaves)
    assert sum(leaf.n_rows for leaf in tree.leaves) == 600 and tree.n_errors == int(wrong.sum())
    for leaf in tree.leaves:  # recount with pandas' own query, from the leaf's text
        query = " and ".join(f"`{f.feature}` {f.op} {f.value!r}" for f in leaf.filters) or "index == index"
        inside = X.query(query).index.to_numpy()
        assert leaf.n_rows == len(inside) >= 10 and leaf.n_errors == int(wrong[inside].sum())
        assert leaf.error_rate == pytest.approx(wrong[inside].mean())
    worst = tree.leaves[0]
    assert worst.error_rate > 0.9 and {f.feature for f in worst.filters} == {"a", "b"}
    assert [leaf.error_rate for leaf in tree.leaves] == sorted((leaf.error_rate for leaf in tree.leaves), reverse=True)
    # a leaf's text reads back to the same rows, with thresholds a person would write
    again = parse_filters(filters_text(worst.filters), X.columns)
    assert np.array_equal(cohort_mask(X, again), cohort_mask(X, worst.filters))
    assert all(len(str(f.value)) <= 6 for f in worst.filters)


def test_filters_on_levels_read_and_write_through_the_codec():
    raw = pd.DataFrame({"sex": ["Female", "Male", "Male", "Female"], "age": [30, 40, 50, 60]})
    codec = TabularCodec(raw)
    X = codec.encode(raw)
    f = parse_filters("sex == Female; age > 35", X.columns, codec)
    assert cohort_mask(X, f).tolist() == [False, False, False, True]
    assert filters_text(f, codec) == "sex == Female; age > 35"
    assert cohort_mask(X, parse_filters("sex in Male, Female", X.columns, codec)).all()
    for bad, why in [("sex == Other", "no level 'Other'"), ("sex > Male", "is a category"),
                     ("height > 3", "cannot read"), ("age >", "cannot read"), ("age > x", "not a number")]:
        with pytest.raises(ValueError, match=why):
            parse_filters(bad, X.columns, codec)
    assert parse_filters("  ", X.columns) == () and cohort_mask(X, ()).all()
    assert Filter("age", "!=", 30.0).mask(np.array([30.0, np.nan])).tolist() == [False, True]


def test_an_error_tree_leaf_on_a_category_names_its_levels_and_reads_back():
    """A split of category codes is stated as the set of levels on its side (Adult's error tree wrote
    "marital-status <= Married-civ-spouse", which the cohort filter refused: a leaf picked on the page failed)."""
    rng = np.random.default_rng(1)
    levels = ["Divorced", "Married", "Never-married", "Separated", "Widowed"]
    raw = pd.DataFrame({"status": rng.choice(levels, 800), "age": rng.integers(18, 80, 800)})
    codec = TabularCodec(raw)
    X = codec.encode(raw)
    wrong = (raw.status.isin(["Divorced", "Married"]) & (raw.age > 50)).to_numpy() | (rng.uniform(size=800) < 0.02)
    tree = error_tree(X, wrong, min_leaf=10, categorical=["status"])
    on_status = [leaf for leaf in tree.leaves if any(f.feature == "status" for f in leaf.filters)]
    assert on_status and sum(leaf.n_rows for leaf in tree.leaves) == 800
    for leaf in tree.leaves:
        assert all(f.op in ("==", "in") for f in leaf.filters if f.feature == "status")
        text = filters_text(leaf.filters, codec)
        again = parse_filters(text, X.columns, codec)  # the page's leaf picker sets this text as the cohort
        inside = raw.assign(i=True).i.copy()
        for f in leaf.filters:  # recount with pandas from the levels' names
            col = raw[f.feature]
            inside &= (col.isin([codec.column("status").levels[int(v)] for v in np.atleast_1d(f.value)])
                       if f.feature == "status" else {"<=": col <= f.value, ">": col > f.value}[f.op])
        assert np.array_equal(cohort_mask(X, again), inside.to_numpy()) and leaf.n_rows == int(inside.sum())
    assert filters_text(tree.leaves[0].filters, codec) == "status in Divorced, Married; age > 50"  # the planted one


def test_fairness_rates_equal_a_hand_count_and_fairlearn():
    from fairlearn.metrics import MetricFrame, false_positive_rate, selection_rate, true_positive_rate

    rng = np.random.default_rng(1)
    g = rng.choice(["a", "b", "c"], 900, p=[0.5, 0.3, 0.2])
    y = rng.integers(0, 2, 900)
    p = np.where(g == "a", rng.uniform(size=900) < 0.6, rng.uniform(size=900) < 0.3).astype(int)
    r = fairness_report(y, p, g, feature="group")
    df = pd.DataFrame({"g": g, "y": y, "p": p})
    hand = {"selection_rate": df.groupby("g")["p"].mean(),
            "true_positive_rate": df[df.y == 1].groupby("g")["p"].mean(),
            "false_positive_rate": df[df.y == 0].groupby("g")["p"].mean()}
    frame = MetricFrame(metrics={"selection_rate": selection_rate, "true_positive_rate": true_positive_rate,
                                 "false_positive_rate": false_positive_rate}, y_true=y, y_pred=p, sensitive_features=g)
    for name, by in hand.items():
        got = {x.group: x.rate for x in r.rates[name]}
        assert got == pytest.approx(by.to_dict())
        assert all(x.low <= x.rate <= x.high for x in r.rates[name])
        value, low, high = r.difference[name]
        assert value == pytest.approx(by.max() - by.min()) == pytest.approx(frame.difference()[name])
        assert low <= value <= high
        assert r.ratio[name][0] == pytest.approx(by.min() / by.max()) == pytest.approx(frame.ratio()[name])
    assert r.difference["selection_rate"][1] > 0.2  # the planted gap (0.6 vs 0.3) is resolved by its interval
    with pytest.raises(ValueError, match="groups"):
        fairness_report(y, p, np.zeros(900), feature="one")


def test_the_story_misleads_most_in_the_planted_cohort():
    """f reads only x0 where x5 <= 0; where x5 > 0 it reads x0..x4 alike: a one-item story keeps almost all of
    the prediction in the first cohort and little of it in the second."""
    rng = np.random.default_rng(2)
    X = rng.normal(size=(80, 6))
    w = np.array([3.0, 0, 0, 0, 0, 0])

    def f(a):
        a = np.atleast_2d(a)
        z = a @ w + np.where(a[:, 5] > 0, 1.5 * a[:, 1:5].sum(axis=1), 0.0)
        return 1 / (1 + np.exp(-z))

    bg = rng.normal(size=(40, 6))
    names = tuple(f"x{j}" for j in range(6))
    suff = np.full(len(X), np.nan)
    for i, x in enumerate(X):  # occlusion attributions: the story's order is what matters here
        phi = np.array([f(x)[0] - f(np.where(np.arange(6) == j, 0.0, x))[0] for j in range(6)])
        e = Explanation("shap", names, phi, float(f(np.zeros(6))[0]), float(f(x)[0]), x, "probability", "y", "planted")
        ctx = xp.make_context(f, bg, bg, x, ("no", "yes"), num_samples=0, full=False)
        suff[i] = xp.tradeoff_curve(e, ctx, measures=("sufficiency",), max_k=1)[1].fidelity_after["sufficiency"]
    frame = pd.DataFrame(X, columns=names)
    cohorts = [cohort_figures(n, cohort_mask(frame, parse_filters(t, names)), np.ones(len(X), bool),
                              story={"sufficiency": suff})
               for n, t in [("simple", "x5 <= 0"), ("everyone", ""), ("tangled", "x5 > 0")]]
    ranked = misleads_most(cohorts)
    assert [c.name for c in ranked] == ["tangled", "everyone", "simple"]
    mean, low, high, n = ranked[0].story["sufficiency"]
    assert n == ranked[0].n_rows and low <= mean <= high and low > ranked[-1].story["sufficiency"][2]
