"""The notebook API (``app.notebook.Candor``): the dashboard's numbers and figures from a notebook, each checked
against an oracle computed here, the command line's trust rule for model files, and the README's example run."""
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import skops.io as sio
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.metrics import r2_score

from app.notebook import Candor
from explainers.muse.frontier import predict_rule_set
from explainers.numbers import plain
from workspace.errors import CandorError
from workspace.settings import Settings, installed

ROOT = Path(__file__).resolve().parents[2]
NUMERIC = ["age", "Medu", "Fedu", "traveltime", "studytime", "failures", "famrel", "freetime", "goout", "Dalc",
           "Walc", "health", "absences"]


class Custom(LogisticRegression):
    """A subclass outside scikit-learn: its skops file names a type outside Candor's reviewed list."""


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    return tmp_path_factory.mktemp("notebook-cache")


@pytest.fixture(scope="module")
def sample(cache):
    with installed(Settings(cache_dir=cache, warm=False)):  # Candor.load keeps the settings it was loaded under
        return Candor.load()


@pytest.fixture(scope="module")
def student(shared_data, tmp_path_factory):
    """UCI Student Performance (Portuguese, 649 rows): its numeric columns and the final grade G3, as a CSV."""
    frame = pd.read_csv(shared_data / "student_performance" / "student-por.csv", sep=";")[NUMERIC + ["G3"]]
    folder = tmp_path_factory.mktemp("student")
    frame.to_csv(folder / "student.csv", index=False)
    passed = frame.assign(passed=np.where(frame.G3 >= 10, "pass", "fail")).drop(columns="G3")
    passed.to_csv(folder / "passed.csv", index=False)
    ridge = Ridge(alpha=1.0).fit(frame[NUMERIC], frame.G3)
    sio.dump(ridge, folder / "ridge.skops")
    sio.dump(Custom(max_iter=1000).fit(passed[NUMERIC], passed.passed), folder / "custom.skops")
    return folder, frame, ridge


def test_a_row_explained_from_the_notebook_holds_its_oracles(sample):
    ws = sample.workspace
    row = sample.held_out[0]
    s = sample.shap(row)
    # the sample is a GradientBoostingClassifier explained in log-odds of "malignant" (its class 1)
    assert s.prediction == pytest.approx(float(ws.adapter.model.decision_function(ws.X.iloc[[row]])[0]), abs=1e-9)
    assert abs(s.base_value + s.values.sum() - s.prediction) < 1e-9
    assert 0 < sample.lime(row).fidelity.value <= 1
    story = sample.persuasive(row, k=3)
    phi = np.asarray(story.simplification.parent.values, dtype=float)
    top = np.argsort(-np.abs(phi), kind="stable")[:3]
    assert story.settings["k"] == 3
    assert story.simplification.fidelity_after["mass_retained"] == pytest.approx(
        np.abs(phi[top]).sum() / np.abs(phi).sum(), abs=1e-12)
    fig = sample.figure("waterfall", row)  # the Descriptive page's waterfall: base_value, each bar, the prediction
    assert fig.layout.title.text.startswith(f"SHAP: from base_value {plain(s.base_value)} to prediction "
                                            f"{plain(s.prediction)} log-odds")


def test_the_surrogate_agreement_is_its_rules_against_the_model_on_the_held_out_rows(sample):
    v = sample.surrogate()
    ws = sample.workspace
    X = ws.X.iloc[ws.test_idx]
    said = np.where(ws.adapter.model.predict(X) == 1, ws.classes[1], ws.classes[0])  # classes: (benign, malignant)
    agreement = float(np.mean(predict_rule_set(v.rule_set, X) == said))
    assert v.heldout.agreement == pytest.approx(agreement, abs=1e-12)
    assert v.n_eval == len(ws.test_idx) == 143 and 0.9 < agreement <= 1


def test_figures_by_name_and_their_refusals(sample):
    assert sample.figure("roc").layout.title.text.startswith("ROC")
    with pytest.raises(CandorError, match=r"^no figure named 'nope'; the figures are importance, beeswarm, "):
        sample.figure("nope")
    with pytest.raises(CandorError, match=r"^figure 'pdp' needs a feature: figure\('pdp', feature=...\)$"):
        sample.figure("pdp")
    with pytest.raises(CandorError, match=r"^not shown: a binary model: its confusion matrix is the one above$"):
        sample.figure("multiclass")
    with pytest.raises(CandorError, match=r"^row 569 does not exist; rows are numbered 0 to 568$"):
        sample.figure("lime", 569)


def test_a_regressor_on_real_data_gets_its_r2_and_no_rules(student, cache):
    folder, frame, ridge = student
    with installed(Settings(cache_dir=cache, warm=False)):
        c = Candor.load(folder / "ridge.skops", folder / "student.csv", target="G3")
    ws = c.workspace
    test = frame.iloc[ws.test_idx]
    assert c.performance().regressor.r2.value == pytest.approx(r2_score(test.G3, ridge.predict(test[NUMERIC])),
                                                               abs=1e-9)
    s = c.shap(int(ws.test_idx[0]))
    assert abs(s.base_value + s.values.sum() - s.prediction) < 1e-9
    with pytest.raises(CandorError, match=r"^Rule surrogates \(MUSE, CART\) imitate a classifier.s labels; this "
                                          r"model is a regressor"):
        c.surrogate()
    with pytest.raises(CandorError, match=r"^not shown: a regressor has no ROC"):
        c.figure("roc")


def test_model_files_follow_the_command_lines_trust_rule(student, cache):
    folder, _, _ = student
    with pytest.raises(CandorError, match=r"custom.skops: refusing to load types that are not on Candor's reviewed "
                                          r"list .*tests.app.test_notebook.Custom"):
        Candor.load(folder / "custom.skops", folder / "passed.csv", target="passed")
    with installed(Settings(cache_dir=cache, warm=False)), pytest.warns(UserWarning, match="lets the model file run"):
        c = Candor.load(folder / "custom.skops", folder / "passed.csv", target="passed", trust_model_code=True)
    assert c.workspace.classes == ("fail", "pass")
    with pytest.raises(CandorError, match=r"^Candor.load: model_path, data_path and target go together; missing "
                                          r"target$"):
        Candor.load(folder / "custom.skops", folder / "passed.csv")


def _readme_example() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## From a notebook", 1)[1]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


def test_the_readme_example_runs_on_the_bundled_sample(monkeypatch, cache):
    """The README's notebook example, run as written (from the checkout, as the README says), on the sample's files:
    its explanation, its rules, its report and its dashboard, which answers and then stops."""
    monkeypatch.chdir(ROOT)
    scope: dict = {}
    with installed(Settings(cache_dir=cache, warm=False)):
        exec(compile(_readme_example(), "README.md", "exec"), scope)
    c, dashboard, report = scope["c"], scope["dashboard"], scope["report"]
    assert c.workspace.name == "breast_cancer.csv" and len(c.held_out) == 143
    assert scope["shap"].additivity_gap < 1e-9
    assert 'data-figures-expected="' in report.read_text(encoding="utf-8")
    assert dashboard.url.startswith("http://127.0.0.1:") and not dashboard.running
