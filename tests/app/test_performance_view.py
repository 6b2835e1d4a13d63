"""The Performance page's service and views (issue 25) on the bundled sample, a 3-class model and a regressor:
the service's curves and areas equal scikit-learn on the model's own held-out probabilities, the model card's ROC
AUC is the same number, the threshold callback's counts equal a brute-force count, a multiclass model shows its
full confusion matrix beside the one-vs-rest views, and a regressor shows predicted vs actual with a one-line
"not shown" where ROC does not apply; the report has the section."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import average_precision_score, confusion_matrix, r2_score, roc_auc_score, roc_curve

from app import services


@pytest.fixture
def sample(sample_workspace):
    with services.overridden(services.ServiceState(sample_workspace)):
        yield sample_workspace


def _texts(tree) -> str:
    """Every string in a Dash component tree."""
    if isinstance(tree, str):
        return tree
    if isinstance(tree, (list, tuple)):
        return " ".join(_texts(t) for t in tree)
    kids = getattr(tree, "children", None)
    return _texts(kids) if kids is not None else ""


def _assigned(patch) -> dict:
    """What a Dash ``Patch`` assigns, by location."""
    return {tuple(op["location"]): op["params"]["value"] for op in patch.to_plotly_json()["operations"]
            if op["operation"] == "Assign"}


def test_the_sample_s_curves_equal_scikit_learn_and_the_model_card(sample):
    ws = sample
    view = services.performance.performance()
    c = view.classifier
    X, y = ws.X.iloc[ws.test_idx], ws.y[ws.test_idx]
    p = ws.adapter.model.predict_proba(X)[:, 1]  # the fitted estimator itself, not the adapter's outputs
    fpr, tpr, _ = roc_curve(y, p, drop_intermediate=False)
    np.testing.assert_allclose(c.fpr, fpr)
    np.testing.assert_allclose(c.tpr, tpr)
    assert c.roc_auc.value == pytest.approx(roc_auc_score(y, p), abs=1e-12)
    assert c.average_precision.value == pytest.approx(average_precision_score(y, p), abs=1e-12)
    assert services.model_summary().metrics["roc_auc"] == c.roc_auc.value  # one number, one home
    assert c.roc_auc.low <= c.roc_auc.value <= c.roc_auc.high and c.roc_auc.n_boot == 1000
    assert view.regressor is None and view.multiclass is None and "multiclass" in view.not_applicable


def test_the_threshold_callback_counts_as_brute_force(sample):
    from app.callbacks import performance as cb

    ws = sample
    p = ws.adapter.model.predict_proba(ws.X.iloc[ws.test_idx])[:, 1]
    y = ws.y[ws.test_idx]
    for hundredths in (10, 50, 100):
        fig, table, line, roc, pr = cb.render_confusion(hundredths)
        called = p >= hundredths / 100
        tp, fp = int(np.sum(called & (y == 1))), int(np.sum(called & (y == 0)))
        tn, fn = int(np.sum(~called & (y == 0))), int(np.sum(~called & (y == 1)))
        assert line == (f"Threshold {hundredths / 100:.2f}: {tp} true positives, {fp} false positives, {tn} true "
                        f"negatives, {fn} false negatives.")
        assert np.asarray(fig.data[0].z).tolist() == [[tp, fn], [fp, tn]]
        assert f"{tp} of {tp + fn} malignant" in _texts(table)
        assert fig.layout.meta["alt"].startswith(f"at threshold {hundredths / 100:.2f}: {tp} malignant rows")
        # the circle on the curves moves to (FPR, TPR) and (recall, precision) of that threshold, nothing else sent
        assert _assigned(roc) == {("data", 2, "x"): [fp / (fp + tn)], ("data", 2, "y"): [tp / (tp + fn)]}
        assert _assigned(pr) == {("data", 2, "x"): [tp / (tp + fn)],
                                 ("data", 2, "y"): [tp / (tp + fp) if tp + fp else None]}
    assert "between 0 and 1" in _texts(cb.render_confusion(150)[1])


def test_the_report_has_the_performance_section(sample):
    from app.report.content import report_content
    from app.report.sections import performance_section

    class Figs:
        def __init__(self):
            self.drawn = []

        def add(self, fig):
            self.drawn.append(fig)
            return f"<figure>{len(self.drawn)}</figure>"

    c = report_content([sample.test_idx[0]])
    figs = Figs()
    html = performance_section(c, figs)
    assert "<h2 id=\"performance\">Model performance</h2>" in html and "ROC AUC 0.991" in html
    roc_circle = figs.drawn[0].data[2]
    assert (roc_circle.x, roc_circle.y) == ((c.threshold.counts.fpr,), (c.threshold.counts.tpr,))  # at 0.5
    assert [f.layout.title.text.split(":")[0] for f in figs.drawn] == [
        "ROC curve of P(malignant)", "Precision-recall of P(malignant)", "Calibration of P(malignant) in 10 bins",
        "Confusion at threshold 0.50 on 143 held-out rows"]


@pytest.fixture(scope="module")
def wine():
    from sklearn.datasets import load_wine
    from sklearn.ensemble import GradientBoostingClassifier


    data = load_wine(as_frame=True)
    X, names = data.data, ("barolo", "grignolino", "barbera")
    y = np.array(names)[data.target]
    model = GradientBoostingClassifier(n_estimators=20, max_depth=2, random_state=0).fit(X.iloc[::2], y[::2])
    return model, X, y


def test_a_multiclass_model_shows_every_class_beside_one_vs_rest(tmp_path, wine):
    from skops.io import dump

    from app.views.performance import page_body
    from workspace.workspace import load_user_workspace

    model, X, y = wine
    dump(model, tmp_path / "wine.skops")
    X.assign(cultivar=y).to_csv(tmp_path / "wine.csv", index=False)
    ws = load_user_workspace(tmp_path / "wine.skops", tmp_path / "wine.csv", "cultivar")
    with services.overridden(services.ServiceState(ws)):
        view = services.performance.performance()
        pair = ws.pair
        names = list(pair.adapter.class_names)
        true = np.array(names)[pair.y[pair.test_idx]]
        predicted = model.predict(X.iloc[pair.test_idx])
        np.testing.assert_array_equal(view.multiclass.matrix, confusion_matrix(true, predicted, labels=names))
        assert view.multiclass.accuracy == pytest.approx(np.mean(true == predicted))
        assert view.classifier is not None and view.classifier.target == ws.positive_class  # one-vs-rest beside it
        text = _texts(page_body(view))
        assert "Every class (beside the one-vs-rest views above)" in text


def test_a_regressor_shows_predicted_vs_actual_and_says_it_has_no_roc(tmp_path):
    from skops.io import dump
    from sklearn.linear_model import LinearRegression

    from app.views.performance import page_body
    from workspace.workspace import load_user_workspace

    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(80, 3)), columns=["a", "b", "c"])
    target = 10 * X["a"] - 5 * X["b"] + 50 + rng.normal(0, 1, 80)
    model = LinearRegression().fit(X, target)
    dump(model, tmp_path / "linear.skops")
    X.assign(y=target).to_csv(tmp_path / "table.csv", index=False)
    ws = load_user_workspace(tmp_path / "linear.skops", tmp_path / "table.csv", "y")
    with services.overridden(services.ServiceState(ws)):
        view = services.performance.performance()
        r = view.regressor
        actual, predicted = ws.y[ws.test_idx], model.predict(X.iloc[ws.test_idx])
        assert r.r2.value == pytest.approx(r2_score(actual, predicted))
        assert r.rmse.value == pytest.approx(np.sqrt(np.mean((actual - predicted) ** 2)))
        assert view.classifier is None
        text = _texts(page_body(view))
        assert "Not shown: a regressor has no ROC, precision-recall or calibration curve and no threshold." in text
        with pytest.raises(Exception, match="a regressor has no ROC"):
            services.performance.confusion(0.5)


def test_a_multiclass_model_shown_under_other_class_names_counts_its_own_predictions(tmp_path):
    """``--classes`` names the model's classes (0, 1, 2) for people; ``predict`` still gives 0, 1, 2: the matrix maps
    them through the model's ``classes_`` (mapping them through the shown names raised KeyError: '0')."""
    from skops.io import dump
    from sklearn.datasets import load_wine
    from sklearn.ensemble import GradientBoostingClassifier

    from workspace.torch_options import TorchOptions
    from workspace.workspace import load_user_workspace

    data = load_wine(as_frame=True)
    X, y = data.data, data.target.to_numpy()
    model = GradientBoostingClassifier(n_estimators=10, max_depth=2, random_state=0).fit(X.iloc[::2], y[::2])
    dump(model, tmp_path / "wine.skops")
    X.assign(cultivar=y).to_csv(tmp_path / "wine.csv", index=False)
    ws = load_user_workspace(tmp_path / "wine.skops", tmp_path / "wine.csv", "cultivar",
                             torch_options=TorchOptions(classes=("barolo", "grignolino", "barbera")))
    with services.overridden(services.ServiceState(ws)):
        m = services.performance.performance().multiclass
        rows = ws.pair.test_idx
        assert m.class_names == ("barolo", "grignolino", "barbera")
        np.testing.assert_array_equal(m.matrix, confusion_matrix(y[rows], model.predict(X.iloc[rows]), labels=[0, 1, 2]))


def test_check_prints_the_performance_line(sample):
    """``python -m app check``'s "perf" line: the sample's scores with their intervals and the counts at 0.5."""
    ws = sample
    p = ws.adapter.model.predict_proba(ws.X.iloc[ws.test_idx])[:, 1]
    y = ws.y[ws.test_idx]
    called = p >= 0.5
    counts = [int(np.sum(called & (y == 1))), int(np.sum(called & (y == 0))), int(np.sum(~called & (y == 0))),
              int(np.sum(~called & (y == 1)))]
    (line,) = services.performance.lines(0)
    assert line.startswith(f"perf    143 held-out rows: ROC AUC {roc_auc_score(y, p):.3f} (95% interval ")
    assert line.endswith("at 0.50: {} TP, {} FP, {} TN, {} FN".format(*counts)) and "average precision" in line


def test_resamples_shrink_past_a_hundred_thousand_held_out_rows():
    """rows × resamples at most 10⁸ (at least 100 resamples): the view stays seconds of CPU on a big table."""
    from app.services.performance import resamples

    assert [resamples(n) for n in (143, 8_141, 100_000, 200_000, 5_000_000)] == [1000, 1000, 1000, 500, 100]


def test_a_forged_threshold_is_refused_before_the_callback_runs():
    """The threshold control's kind (app/serve/callback_inputs.py): whole hundredths 0..100, nothing else."""
    from app.serve.callback_inputs import problem

    declared = {"id": "performance-threshold", "property": "value"}
    assert [problem(declared, v) is None for v in (0, 30, 100, 50.0)] == [True] * 4
    assert [problem(declared, v) is None for v in (101, -1, 0.5, "abc", True, [30])] == [False] * 6
