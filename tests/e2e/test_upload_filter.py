"""In Chromium (issue 25): a model, its table and a features file uploaded through the Your model page's file
inputs, then the Model & data table filtered by value in its filter row, on a real table (UCI Student Performance).

One server of its own: an upload switches what every page explains for everyone, so the session's server (the
bundled sample) is left alone.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import skops.io as sio
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select
from sklearn.compose import ColumnTransformer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import OneHotEncoder

from tests.e2e.browser import severe_console_errors, wait_text, wait_until
from tests.e2e.serving import running_app

pytestmark = pytest.mark.e2e

FEATURES = ("Mjob: {name: Mother's job, description: The mother's occupation}\n"
            "absences: {name: Absences, unit: days, decimals: 0}\n")


@pytest.fixture(scope="module")
def files(shared_data, tmp_path_factory):
    frame = pd.read_csv(shared_data / "student_performance" / "student-por.csv", sep=";")
    frame = frame[["Mjob", "absences", "age"]].assign(passed=np.where(frame.G3 >= 10, "pass", "fail"))
    folder = tmp_path_factory.mktemp("student-upload")
    model = Pipeline([("prep", ColumnTransformer([("job", OneHotEncoder(), ["Mjob"])], remainder="passthrough")),
                      ("lr", LogisticRegression(max_iter=1000))]).fit(frame[["Mjob", "absences", "age"]], frame.passed)
    sio.dump(model, folder / "student.skops")
    frame.to_csv(folder / "student.csv", index=False)
    (folder / "student.features.yaml").write_text(FEATURES)
    return folder, frame


@pytest.fixture(scope="module")
def own_server(tmp_path_factory):
    env = {"CANDOR_UPLOAD_DIR": str(tmp_path_factory.mktemp("uploads")),
           "CANDOR_STATE_DIR": str(tmp_path_factory.mktemp("state")),
           "CANDOR_CACHE_DIR": str(tmp_path_factory.mktemp("cache")), "CANDOR_WARM": "0"}
    with running_app([], env, tmp_path_factory.mktemp("log") / "server.log") as base:
        yield base


def _send(browser, upload_id: str, path) -> None:
    """Choose ``path`` in the dcc.Upload's own file input, as the file dialog would."""
    field = browser.find_element(By.CSS_SELECTOR, f"#{upload_id} input[type=file]")
    browser.execute_script("arguments[0].style.display = 'block';", field)
    field.send_keys(str(path))


def _filter(browser, column: str, text: str) -> None:
    cell = browser.find_element(By.CSS_SELECTOR, f"th.dash-filter[data-dash-column='{column}'] input")
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'});", cell)
    cell.click()
    cell.send_keys(text, Keys.ENTER)


def _column_cells(browser, column: str) -> list[str]:
    return [c.text for c in browser.find_elements(By.CSS_SELECTOR, f"td[data-dash-column='{column}']")]


def test_a_features_file_uploaded_in_the_browser_and_the_table_filtered_by_value(own_server, browser, files):
    folder, frame = files
    browser.get(own_server + "/upload")
    wait_until(lambda: browser.find_elements(By.ID, "upload-features"), "the upload page")
    _send(browser, "upload-model", folder / "student.skops")
    wait_text(browser, "upload-model-status", "student.skops: stored on the server")
    _send(browser, "upload-data", folder / "student.csv")
    wait_text(browser, "upload-data-status", "student.csv: stored on the server")
    _send(browser, "upload-features", folder / "student.features.yaml")
    wait_text(browser, "upload-features-status", "2 feature(s) named or formatted")
    wait_until(lambda: len(Select(browser.find_element(By.ID, "upload-target")).options) >= 4, "the target's options")
    target = browser.find_element(By.ID, "upload-target")  # near the window's bottom edge, below alerts still drawing
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'});", target)
    Select(target).select_by_visible_text("passed")
    button = browser.find_element(By.ID, "upload-load")
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'}); arguments[0].click();", button)
    said = wait_text(browser, "upload-result", "Now explaining student.csv")
    assert "feature names and value formats from student.features.yaml" in said

    browser.get(own_server + "/")
    wait_until(lambda: _column_cells(browser, "c0"), "the data table")
    headers = [h.text for h in browser.find_elements(By.CSS_SELECTOR, "th.dash-header")]
    assert "Mother's job" in headers and "Absences" in headers
    assert _column_cells(browser, "c1")[0] == "4"  # absences of row 0, as the table shows the raw value

    teacher = int((frame.Mjob == "teacher").sum())
    _filter(browser, "c0", "teacher")  # a text column: containing it
    wait_text(browser, "overview-table-columns-note", f"{teacher:,} of 649 rows match the filter")
    assert set(_column_cells(browser, "c0")) == {"teacher"} and len(_column_cells(browser, "c0")) == 12
    both = int(((frame.Mjob == "teacher") & (frame.absences > 10)).sum())
    _filter(browser, "c1", "> 10")  # a number column: an operator and a number
    wait_text(browser, "overview-table-columns-note", f"{both:,} of 649 rows match the filter")
    assert all(int(v) > 10 for v in _column_cells(browser, "c1")) and set(_column_cells(browser, "c0")) == {"teacher"}
    assert severe_console_errors(browser) == []
