"""The Descriptive page names one SHAP algorithm per row: the method line and the standard-error card agree.

A new user's RandomForest on wine (3 classes, one class vs rest) read "SHAP TreeExplainer, interventional" beside
"largest standard error 0.000649, converged after 52 orderings": shap 0.51's Tree SHAP missed f(x) − base on
that forest (by 0.0003 on every row), so each row was redone by permutation SHAP and the line claimed the wrong one.
Candor's own Tree SHAP is exact there; a tree backend that misses (shap's, for models Candor does not read) is
stood in for by shifting one value of Candor's, so the redone path is still named right.
"""
import re

import pytest
from sklearn.datasets import load_wine
from sklearn.ensemble import RandomForestClassifier

from app.views.descriptive import ALGORITHM_WORDS, _shap_error_metric
from explainers.shap_explainer import ShapExplainer


def _text(component) -> str:
    out, stack = [], [component]
    while stack:
        c = stack.pop()
        if isinstance(c, str):
            out.append(c)
        elif isinstance(c, (list, tuple)):
            stack.extend(reversed(c))
        elif c is not None:
            stack.append(getattr(c, "children", None))
    return " | ".join(out)


def _missing_tree(e: ShapExplainer, by: float = 3e-4) -> ShapExplainer:
    """Make ``e``'s tree backend miss f(x) − base by ``by`` on every row (as shap's did on this forest)."""
    exact = e._backend.shap_values

    def off(X):
        v = exact(X).copy()
        v[:, 0, :] += by
        return v

    e._backend.shap_values = off
    return e


@pytest.fixture(scope="module")
def wine_rf():
    w = load_wine(as_frame=True)
    X = w.data
    m = RandomForestClassifier(n_estimators=100, random_state=0).fit(X, w.target)
    e = ShapExplainer(m, background=X, target_index=0, target_name="class_0")  # as the app: 100 rows
    return X, e


def test_candors_tree_shap_is_additive_on_the_forest_shap_missed(wine_rf):
    X, e = wine_rf
    r = e.explain(X.iloc[[5]])
    assert e.algorithm == "tree" and r.params["algorithm"] == "tree" and r.additivity_gap < 1e-12
    assert max(r.params["standard_error"]) == 0 and r.params["tree_rows_recomputed"] == 0


@pytest.fixture
def wine_rf_missing(wine_rf):
    X, _ = wine_rf
    m = wine_rf[1].model
    return X, _missing_tree(ShapExplainer(m, background=X, target_index=0, target_name="class_0"))


def test_redone_tree_row_is_named_permutation_in_source_and_card(wine_rf_missing):
    X, e = wine_rf_missing
    assert e.algorithm == "tree"
    r = e.explain(X.iloc[[5]])
    assert r.params["algorithm"] == "permutation" and r.params["orderings"] > 0
    assert max(r.params["standard_error"]) > 0
    assert "Tree SHAP" not in r.source.split("permutation SHAP for this row")[0]
    assert r.source.startswith("SHAP ") and "permutation SHAP for this row" in r.source
    card = _text(_shap_error_metric(r))
    assert "permutation SHAP" in card and f"after {r.params['orderings']} orderings" in card
    # every algorithm the card names is the one the method line names
    named = [w for w in ALGORITHM_WORDS.values() if w in card]
    assert named == ["permutation SHAP"] and all(w in r.source for w in named)


def test_global_path_row_with_errors_is_named_permutation(wine_rf_missing):
    """The all-rows computation hands a redone row's standard errors to ``from_row`` without a count."""
    X, e = wine_rf_missing
    g = e.explain_many(X.iloc[[7]])
    assert g.standard_error.max() > 0
    r = e.from_row(X.iloc[[7]], g.values[0], g.base_value, standard_error=g.standard_error[0])
    assert r.params["algorithm"] == "permutation" and "permutation SHAP for this row" in r.source
    assert re.search(r"\d(\.\d+)?e[-+]\d", r.source) is None


def test_exact_tree_row_card_names_tree_explainer():
    w = load_wine(as_frame=True)
    X, y = w.data, (w.target == 0).astype(int)
    from sklearn.tree import DecisionTreeClassifier
    m = DecisionTreeClassifier(max_depth=3, random_state=0).fit(X, y)
    e = ShapExplainer(m, background=X, background_size=40, target_index=1)
    r = e.explain(X.iloc[[3]])
    assert r.params["algorithm"] == "tree" and max(r.params["standard_error"]) == 0
    card = _text(_shap_error_metric(r))
    assert "0 (exact)" in card and "Tree SHAP" in card and "Tree SHAP" in r.source


def test_global_view_source_counts_the_rows_permutation_shap_recomputed(wine_rf_missing):
    X, e = wine_rf_missing
    g = e.explain_many(X.iloc[[7, 8]])
    redone = int((g.standard_error.max(axis=1) > 0).sum())
    assert redone == 2 and "2 of 2 rows recomputed by permutation SHAP" in g.source
