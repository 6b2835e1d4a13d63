"""Issue 7 cases 9 and 10 through the app's services: what reaches the browser is small and serialisable."""
import json

import numpy as np
import pandas as pd
import pytest
from sklearn.compose import ColumnTransformer
from sklearn.ensemble import GradientBoostingClassifier
from sklearn.impute import SimpleImputer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import Pipeline
from sklearn.metrics import roc_auc_score
from sklearn.preprocessing import OneHotEncoder

from app.views import figures, figures_rows
from app import services
from workspace.errors import CandorError
from workspace.workspace import load_user_workspace
from app.services import _core

from .conftest import write_pair
from tests.table_records import by_name


def test_case9_nullable_int_with_pd_na_in_table_and_figures(tmp_path, rng, install):
    n = 120
    frame = pd.DataFrame({"visits": pd.array(rng.integers(0, 9, n), dtype="Int64"), "score": rng.normal(size=n)})
    frame.loc[5, "visits"] = pd.NA
    frame["churn"] = np.where(frame.score > 0, "yes", "no")
    model = Pipeline([("impute", SimpleImputer()), ("lr", LogisticRegression())]).fit(frame[["visits", "score"]],
                                                                                      frame.churn)
    ws = load_user_workspace(*write_pair(tmp_path, model, frame, "parquet"), "churn")
    assert str(ws.raw.visits.dtype) == "Int64" and np.isnan(ws.X.visits[5])
    install(ws)
    records, pages = services.data_page(0, 12)
    named = by_name(records)
    assert len(records) == 12 and pages == 10 and named[5]["visits"] == "(missing)"
    json.dumps(records)  # nothing the browser cannot take
    expl = services.shap_row(5)
    assert expl.params["feature_labels"][0] == "(missing)" and expl.additivity_gap < 1e-9
    json.loads(figures.waterfall(expl).to_json())
    json.loads(figures_rows.beeswarm(services.global_view().beeswarm).to_json())
    assert services.lime_row(5).params["binned_missing"] == ("visits",)


def test_case10_20k_rows_never_reach_the_browser_whole(tmp_path, rng, install):
    n = 20_000
    frame = pd.DataFrame({f"x{i}": rng.normal(size=n) for i in range(4)})
    frame["plan"] = rng.choice(["basic", "pro", "team"], n)
    frame["churn"] = np.where(frame.x0 + (frame.plan == "pro") > 0.5, 1, 0)
    prep = ColumnTransformer([("cat", OneHotEncoder(), ["plan"])], remainder="passthrough")
    model = Pipeline([("prep", prep), ("gb", GradientBoostingClassifier(n_estimators=15, max_depth=2,
                                                                          random_state=0))])
    model.fit(frame.drop(columns="churn"), frame.churn)
    ws = load_user_workspace(*write_pair(tmp_path, model, frame), "churn")
    install(ws)
    records, pages = services.data_page(3, 12)
    named = by_name(records)
    assert len(records) == 12 and pages == 1667 and named[0]["id"] == 36 and named[0]["plan"] in {"basic", "pro", "team"}
    assert len(json.dumps(records)) < 5000
    g = services.global_importance()
    assert g.values.shape == (5000, 5) and "seeded sample of 5,000 of 20,000 rows" in g.source
    assert g.feature_names == ("x0", "x1", "x2", "x3", "plan")
    outside = next(r for r in range(n) if r not in set(services.tabular._shap_all()[1]))
    e = services.shap_row(outside)
    assert e.additivity_gap < 1e-6 and e.prediction == pytest.approx(model.decision_function(ws.raw.iloc[[outside]])[0])
    assert e.params["probability"] == pytest.approx(model.predict_proba(ws.raw.iloc[[outside]])[0, 1])


def test_multiclass_model_is_served_one_class_against_the_rest(tmp_path, rng, install):
    X = pd.DataFrame(rng.normal(size=(240, 3)), columns=["f0", "f1", "f2"])
    y = np.array(["cat", "dog", "eel"])[(X.f0 > 0).astype(int) + (X.f1 > 0.5).astype(int)]
    model = LogisticRegression(max_iter=500).fit(X, y)
    paths = write_pair(tmp_path, model, X.assign(animal=y))
    ws = load_user_workspace(*paths, "animal", target_class="dog")
    assert ws.classes == ("not dog", "dog") and set(np.unique(ws.y)) == {0, 1}
    install(ws)
    s = services.model_summary()
    assert s.task == "3-class classification (dog vs rest)" and "pages explain 'dog' against the rest" in s.source
    e = services.shap_row(0)
    assert e.prediction == pytest.approx(model.predict_proba(X.iloc[[0]])[0, 1]) and e.additivity_gap < 1e-9
    with pytest.raises(Exception, match="class 'bird' is not one of the model's classes: cat, dog, eel"):
        load_user_workspace(*paths, "animal", target_class="bird")


def test_model_agnostic_global_view_fits_its_time_budget(tmp_path, rng, install, monkeypatch):
    """A model SHAP cannot explain exactly (an SVC) gets a global sample sized by one timed row."""
    from sklearn.svm import SVC

    from app.services import tabular

    X = pd.DataFrame(rng.normal(size=(400, 4)), columns=["a", "b", "c", "d"])
    y = np.where(X.a + X.b ** 2 > 1, "hi", "lo")
    model = SVC(probability=True, random_state=0).fit(X, y)
    install(load_user_workspace(*write_pair(tmp_path, model, X.assign(t=y)), "t"))
    assert tabular._shap().algorithm == "permutation"
    row = int(tabular._sample_order()[5])
    alone = services.shap_row(row)  # before the global view: computed alone, without waiting for it
    assert not _core.is_ready("shap_all")
    monkeypatch.setattr(tabular, "AGNOSTIC_BUDGET_S", 1e-9)  # nothing fits: the floor of 10 rows
    g = services.global_importance()
    assert g.values.shape == (10, 4)
    assert "global view over a seeded sample of 10 of 400 rows (model-agnostic SHAP took" in g.source
    assert "the sample fits a 0 s budget" in g.source
    _, where = tabular._shap_all()
    assert set(where) == set(int(r) for r in tabular._sample_order()[:10])
    # the global view samples to a looser tolerance than a row alone: the two agree within their standard errors
    se = np.hypot(g.standard_error[where[row]], alone.params["standard_error"])
    assert (np.abs(g.values[where[row]] - alone.values) <= 4 * se + 1e-12).all()
    first = int(tabular._sample_order()[0])  # the timed row, put back in its place
    np.testing.assert_array_equal(g.values[where[first]],
                                  tabular._explain_global(tabular.workspace().X.iloc[[first]]).values[0])
    monkeypatch.setattr(tabular, "AGNOSTIC_BUDGET_S", 1e9)  # everything fits: capped at 200
    assert len(tabular._agnostic_rows()[0]) == 200


def test_svc_margins_are_served_in_margin_units_and_persuasive_is_not_offered(tmp_path, rng, install):
    """Case 6 in the dashboard: an SVC without probabilities is explained in decision_function margins."""
    from sklearn.svm import SVC

    X = pd.DataFrame(rng.normal(size=(300, 3)), columns=["a", "b", "c"])
    y = np.where(X.a - X.b > 0, "pos", "neg")
    svc = SVC(random_state=0).fit(X, y)
    ws = load_user_workspace(*write_pair(tmp_path, svc, X.assign(label=y)), "label")
    install(ws)
    test = ws.test_idx
    s = services.model_summary()
    assert s.task == "binary classification, margins"
    assert s.metrics["accuracy"] == pytest.approx(np.mean(svc.predict(X.iloc[test]) == y[test]))
    assert s.metrics["roc_auc"] == pytest.approx(roc_auc_score(y[test] == "pos", svc.decision_function(X.iloc[test])))
    r = int(test[0])
    margin = svc.decision_function(X.iloc[[r]])[0]
    assert services.row_status(r).endswith(f"margin of pos {margin:.3f}")
    e = services.shap_row(r)
    assert e.prediction == pytest.approx(margin) and e.additivity_gap < 1e-9 and "margin" in e.params["units"]
    lime = services.lime_row(r)
    assert lime.prediction == pytest.approx(margin) and "margin" in lime.params["units"]
    records, _ = services.data_page(0, 5)
    named = by_name(records)
    assert named[0]["margin of pos"] == pytest.approx(round(svc.decision_function(X.iloc[[0]])[0], 4))
    assert services.why_not("persuasive").startswith("The persuasive layer measures")
    assert services.why_not("surrogate") is None


def test_regressor_is_served_with_r2_and_without_label_pages(tmp_path, install):
    """A regressor on real data (scikit-learn's diabetes): R², MAE and RMSE; no surrogate or persuasive page."""
    from sklearn.datasets import load_diabetes
    from sklearn.ensemble import GradientBoostingRegressor
    from sklearn.metrics import r2_score

    data = load_diabetes(as_frame=True)
    model = GradientBoostingRegressor(n_estimators=50, random_state=0).fit(data.data, data.target)
    paths = write_pair(tmp_path, model, data.data.assign(progression=data.target, visit_id=np.arange(442)))
    ws = load_user_workspace(*paths, "progression")
    assert ws.notes == ("data.csv: 1 column(s) the model does not take are left out: visit_id",)
    with pytest.raises(CandorError, match="is a regressor; a target class .* applies to classifiers only"):
        load_user_workspace(*paths, "progression", target_class="high")
    install(ws)
    test = ws.test_idx
    s = services.model_summary()
    assert s.task == "regression (predicted progression)" and s.classes == ()
    assert s.metrics["r2"] == pytest.approx(r2_score(data.target.iloc[test], model.predict(data.data.iloc[test])))
    r = int(test[0])
    pred = model.predict(data.data.iloc[[r]])[0]
    assert services.row_status(r) == (f"held-out · true progression {data.target.iloc[r]:.4g} · predicted {pred:.4g}")
    e = services.shap_row(r)
    assert e.prediction == pytest.approx(pred) and e.additivity_gap < 1e-6
    records, _ = services.data_page(0, 3)
    named = by_name(records)
    assert named[0]["progression"] == pytest.approx(data.target.iloc[0]) and "predicted progression" in named[0]
    assert "regressor" in services.why_not("surrogate") and services.why_not("persuasive") is not None
    json.dumps(records)  # what reaches the browser serialises


def test_columns_named_like_the_tables_own_keys_keep_their_values(tmp_path, rng, install):
    """A feature named ``id`` or ``split`` and a target named like the output column used to overwrite the
    row number the table links by (``row_id``) and the split: every cell now keeps the user's value."""
    n = 200
    frame = pd.DataFrame({"id": rng.normal(size=n), "split": rng.choice(["a", "b"], n), "x": rng.normal(size=n)})
    frame["y"] = (frame["id"] + frame["x"] > 0).astype(int)
    prep = ColumnTransformer([("cat", OneHotEncoder(), ["split"])], remainder="passthrough")
    model = Pipeline([("prep", prep), ("lr", LogisticRegression())]).fit(frame.drop(columns="y"), frame.y)
    install(load_user_workspace(*write_pair(tmp_path, model, frame), "y"))
    records, _ = services.data_page(1, 5)
    assert [r["id"] for r in records] == [5, 6, 7, 8, 9]  # the row number, never the feature
    columns = services.data_columns()
    names = [c["name"] for c in columns]
    assert names.count("id") == 2 and names.count("split") == 2 and len({c["id"] for c in columns}) == len(columns)
    feature_id = next(c["id"] for c in columns if c["name"] == "id" and c["id"] != "id")
    feature_split = next(c["id"] for c in columns if c["name"] == "split" and c["id"] != "_split")
    assert [r[feature_id] for r in records] == [round(v, 4) for v in frame["id"].iloc[5:10]]
    assert [r[feature_split] for r in records] == list(frame["split"].iloc[5:10])
