"""Real headless Chromium against ``python -m app`` serving a user's Pipeline, and the upload page."""
from __future__ import annotations

import time

import numpy as np
import pandas as pd
import pytest
import skops.io as sio
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select
from sklearn.compose import ColumnTransformer
from sklearn.ensemble import GradientBoostingClassifier
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import OneHotEncoder

from tests.e2e.browser import chromium_driver, severe_console_errors, wait_for_figures, wait_text
from tests.e2e.serving import running_app

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """``python -m app`` on a Pipeline with a string column holding missing values and odd column names."""
    d = tmp_path_factory.mktemp("byo-e2e")
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"age<30": rng.integers(0, 2, 300), "a[a1]:x2": rng.normal(size=300),
                          "plan": rng.choice(["basic", "pro", None], 300)})
    frame["churn"] = np.where(frame["a[a1]:x2"] + (frame.plan == "pro") > 0.5, "yes", "no")
    prep = ColumnTransformer([("plan", OneHotEncoder(handle_unknown="ignore"), ["plan"])], remainder="passthrough")
    model = Pipeline([("prep", prep), ("gb", GradientBoostingClassifier(n_estimators=20, random_state=0))])
    sio.dump(model.fit(frame.drop(columns="churn"), frame.churn), d / "model.skops")
    frame.to_csv(d / "data.csv", index=False)
    env = {"CANDOR_UPLOAD_DIR": str(d / "uploads"), "CANDOR_CACHE_DIR": str(d / "cache"),
           "CANDOR_TEXT_DIR": str(d / "text")}
    args = ["--model", str(d / "model.skops"), "--data", str(d / "data.csv"), "--target", "churn"]
    with running_app(args, env, d / "server.log") as base, chromium_driver() as driver:
        yield base, driver, d


def test_pipeline_pages_show_raw_values_and_names(served):
    base, driver, _ = served
    driver.get(base + "/")
    text = wait_text(driver, "overview-table", "(missing)")
    assert "a[a1]:x2" in text and "age<30" in text and "basic" in text
    driver.get(base + "/descriptive")
    assert wait_for_figures(driver, timeout=60, minimum=3) >= 3
    assert "plan" in driver.find_element(By.ID, "descriptive-shap-waterfall").text
    assert severe_console_errors(driver) == []


def test_upload_page_stores_files_and_switches_the_model(served):
    base, driver, d = served
    driver.get(base + "/upload")
    wait_text(driver, "_pages_content", "Your model")
    assert "Candor · data.csv" in driver.find_element(By.ID, "navbar").text
    (d / "churn_upload.csv").write_bytes((d / "data.csv").read_bytes())  # another name, so the navbar must change
    driver.find_element(By.CSS_SELECTOR, "#upload-model input[type=file]").send_keys(str(d / "model.skops"))
    wait_text(driver, "upload-model-status", "model.skops: stored on the server")
    driver.find_element(By.CSS_SELECTOR, "#upload-data input[type=file]").send_keys(str(d / "churn_upload.csv"))
    wait_text(driver, "upload-data-status", "churn_upload.csv: stored on the server")
    deadline = time.time() + 30
    while time.time() < deadline and len(driver.find_elements(By.CSS_SELECTOR, "#upload-target option")) < 4:
        time.sleep(0.2)
    Select(driver.find_element(By.ID, "upload-target")).select_by_visible_text("churn")
    # the page's third step (a features file) put the button near the window's edge: scrolled to, as a user would
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'}); arguments[0].click();",
                          driver.find_element(By.ID, "upload-load"))
    assert "300 rows x 3 features" in wait_text(driver, "upload-result", "Now explaining churn_upload.csv")
    # the navbar names the new model at once, without a navigation (a new user saw the old one's until then)
    assert "Candor · churn_upload.csv" in wait_text(driver, "navbar", "churn_upload.csv", timeout=10)
    assert driver.current_url == base + "/upload" and not driver.find_element(By.ID, "row-picker").is_displayed()
    assert len(list((d / "uploads").glob("*-*"))) == 2  # the two stored files (beside the folder's index.json)
    driver.find_element(By.CSS_SELECTOR, "#upload-model input[type=file]").send_keys(str(d / "data.csv"))
    wait_text(driver, "upload-model-status", "data.csv: a model upload must be one of .skops")
    assert severe_console_errors(driver) == []


def test_a_regressor_gets_the_pages_that_apply(tmp_path_factory):
    """Diabetes regressor: R² on Model & data, SHAP in its units, no Surrogate/Persuasive links, pages say why."""
    from sklearn.datasets import load_diabetes
    from sklearn.ensemble import GradientBoostingRegressor

    d = tmp_path_factory.mktemp("byo-regressor")
    data = load_diabetes(as_frame=True)
    model = GradientBoostingRegressor(n_estimators=50, random_state=0).fit(data.data, data.target)
    sio.dump(model, d / "model.skops")
    data.data.assign(progression=data.target).to_csv(d / "data.csv", index=False)
    env = {"CANDOR_UPLOAD_DIR": str(d / "uploads"), "CANDOR_CACHE_DIR": str(d / "cache"),
           "CANDOR_TEXT_DIR": str(d / "text"), "CANDOR_STATE_DIR": str(d / "state")}
    args = ["--model", str(d / "model.skops"), "--data", str(d / "data.csv"), "--target", "progression"]
    with running_app(args, env, d / "server.log") as base, chromium_driver() as driver:
        driver.get(base + "/")
        summary = wait_text(driver, "overview-summary", "regression (predicted progression)")
        assert "R²" in summary and "MAE" in summary and "ROC AUC" not in summary
        nav = driver.find_element(By.ID, "navbar").text
        assert "Descriptive" in nav and "Surrogate" not in nav and "Persuasive" not in nav
        driver.get(base + "/descriptive?row=3")
        assert wait_for_figures(driver, timeout=90, minimum=3) >= 3
        assert "predicted progression" in driver.find_element(By.ID, "descriptive-notes").text
        driver.get(base + "/surrogate")
        assert "this model is a regressor" in wait_text(driver, "_pages_content", "Rule surrogates")
        driver.get(base + "/persuasive")
        assert "a regressor's predictions" in wait_text(driver, "_pages_content", "persuasive layer")
        assert severe_console_errors(driver) == []
