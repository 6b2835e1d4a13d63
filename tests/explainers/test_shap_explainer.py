"""SHAP oracles: exact additivity for trees, w·(x − E[x]) for linear models (docs/methods.md, "SHAP" and "Tests with exact oracles")."""
import numpy as np
import pytest

from explainers import ModelAdapter, OutputView, ShapExplainer


def test_tree_shap_is_additive_on_every_row(bc, gb_model):
    """A boosted classifier is explained exactly in its margin: base + sum = the model's log-odds."""
    X, _, train, test = bc
    e = ShapExplainer(ModelAdapter.for_table(gb_model, X.iloc[train]), background=X.iloc[train],
                      target_name="malignant", background_size=50)
    g = e.explain_many(X.iloc[test])
    pred = gb_model.decision_function(X.iloc[test])
    gaps = np.abs(g.base_value + g.values.sum(axis=1) - pred)
    assert g.values.shape == (len(test), 30)
    assert gaps.max() < 1e-9
    assert e.output_space == "log_odds" and e.units == "log-odds of class '1'"
    assert "exact interventional Tree SHAP" in e.source and "50 background rows" in e.source


def test_tree_base_value_is_mean_background_output(bc, gb_model):
    X, _, train, _ = bc
    e = ShapExplainer(ModelAdapter.for_table(gb_model, X.iloc[train]), background=X.iloc[train],
                      background_size=80, seed=3)
    expl = e.explain(X.iloc[[0]])
    assert expl.base_value == pytest.approx(gb_model.decision_function(e.background).mean(), abs=1e-9)
    assert expl.additivity_gap < 1e-9
    # the probability of the same class is shown beside the log-odds
    assert expl.params["probability"] == pytest.approx(gb_model.predict_proba(X.iloc[[0]])[0, 1], abs=1e-12)
    other = ShapExplainer(ModelAdapter.for_table(gb_model, X.iloc[train]), background=X.iloc[train],
                          background_size=80, seed=3, target_index=0)
    np.testing.assert_allclose(other.explain(X.iloc[[0]]).values, -expl.values, atol=1e-12)


def test_linear_shap_equals_coef_times_centred_input(bc, scaled_logistic):
    X, _, train, _ = bc
    model, Xs = scaled_logistic
    e = ShapExplainer(ModelAdapter.for_table(model, Xs.iloc[train]), background=Xs.iloc[train], background_size=100)
    x = Xs.iloc[[7]]
    expl = e.explain(x)
    expected = model.coef_[0] * (x.to_numpy()[0] - e.background.to_numpy().mean(axis=0))
    np.testing.assert_allclose(expl.values, expected, atol=1e-8)
    assert expl.output_space == "log_odds"
    assert expl.additivity_gap < 1e-8


def test_a_bare_model_is_refused_naming_the_adapter(bc, gb_model):
    """One kind of model: an adapter (issue 24). A bare model, or a view of one output, is refused in one line."""
    X, _, train, _ = bc
    with pytest.raises(TypeError, match=r"ModelAdapter, got GradientBoostingClassifier; wrap a fitted model"):
        ShapExplainer(gb_model, background=X.iloc[train])
    view = OutputView(ModelAdapter.for_table(gb_model, X), 1)
    with pytest.raises(TypeError, match=r"got OutputView; .* pass view.adapter, target_index=view.index"):
        ShapExplainer(view, background=X.iloc[train])


def test_explain_takes_one_row(bc, gb_model):
    X, _, train, _ = bc
    with pytest.raises(ValueError, match="one row"):
        ShapExplainer(ModelAdapter.for_table(gb_model, X.iloc[train]), background=X.iloc[train]).explain(X.iloc[:2])


def test_permutation_shap_in_chunks_equals_one_call_and_is_additive():
    """Wide tables are walked in chunks of whole coalitions: same values, exactly additive (telescoping)."""
    from explainers._permutation import permutation_shap

    rng = np.random.default_rng(0)
    X, w = rng.normal(size=(50, 7)), rng.normal(size=7)
    f = lambda a: np.column_stack([np.tanh(a @ w), (a ** 2).sum(1)])  # noqa: E731
    whole = permutation_shap(f, X[0], X[1:], max_orderings=8, seed=3)
    chunked = permutation_shap(f, X[0], X[1:], max_orderings=8, seed=3, max_rows=60)  # 1 coalition per call
    np.testing.assert_array_equal(whole.values, chunked.values)
    np.testing.assert_array_equal(whole.standard_error, chunked.standard_error)
    np.testing.assert_array_equal(whole.base, chunked.base)
    np.testing.assert_allclose(whole.base + whole.values.sum(axis=0), f(X[:1])[0], atol=1e-12)
    np.testing.assert_allclose(whole.base, f(X[1:]).mean(axis=0), atol=1e-12)
