"""Gunicorn with two workers (as the Procfile runs it): a class chosen in the browser reaches every worker."""
from __future__ import annotations


import numpy as np
import pytest
import requests
from selenium.webdriver.common.by import By
from sklearn.datasets import load_wine
from sklearn.ensemble import GradientBoostingClassifier

from tests.byo.conftest import write_pair
from tests.e2e.browser import chromium_driver, severe_console_errors, wait_text
from tests.e2e.serving import running_gunicorn

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    d = tmp_path_factory.mktemp("multiworker")
    data = load_wine(as_frame=True)
    y = np.array(["barolo", "grignolino", "barbera"])[data.target]
    model = GradientBoostingClassifier(n_estimators=30, max_depth=2, random_state=0).fit(data.data, y)
    model_path, data_path = write_pair(d, model, data.data.assign(cultivar=y))
    env = {"CANDOR_MODEL": str(model_path), "CANDOR_DATA": str(data_path), "CANDOR_TARGET": "cultivar",
           "CANDOR_STATE_DIR": str(d / "state"), "CANDOR_CACHE_DIR": str(d / "cache"),
           "CANDOR_UPLOAD_DIR": str(d / "uploads"), "CANDOR_TEXT_DIR": str(d / "text")}
    with running_gunicorn(env, d / "gunicorn.log", workers=2) as base, chromium_driver() as driver:
        yield base, driver


def _workers(base: str, want: int = 2, tries: int = 200) -> dict[int, dict]:
    """What each worker explains: ``/_candor/workspace`` on fresh connections until ``want`` pids answered."""
    seen: dict[int, dict] = {}
    for _ in range(tries):
        info = requests.get(base + "/_candor/workspace", headers={"Connection": "close"}, timeout=60).json()
        seen[info["pid"]] = info
        if len(seen) >= want:
            break
    return seen


def test_class_chosen_in_one_worker_is_explained_by_all(served):
    base, driver = served
    before = _workers(base)
    assert len(before) == 2, "gunicorn should answer from two worker processes"
    assert {tuple(w["classes"]) for w in before.values()} == {("not grignolino", "grignolino")}

    driver.get(base + "/")
    wait_text(driver, "overview-summary", "grignolino vs rest")
    driver.find_element(By.ID, "class-select").click()  # a dcc.Dropdown: open it, click the option
    [barolo] = [o for o in driver.find_elements(By.CSS_SELECTOR, "[role='option']") if o.text == "barolo"]
    barolo.click()
    # the page reloads itself; whichever worker serves it must explain barolo
    wait_text(driver, "overview-summary", "barolo vs rest", timeout=90)
    assert driver.find_element(By.ID, "class-select").text.strip() == "barolo"

    after = _workers(base)
    assert len(after) == 2
    assert {tuple(w["classes"]) for w in after.values()} == {("not barolo", "barolo")}
    assert len({w["generation"] for w in after.values()}) == 1
    for _ in range(6):  # reloads land on either worker: the choice holds on each
        driver.get(base + "/")
        assert "barolo vs rest" in wait_text(driver, "overview-summary", "barolo vs rest", timeout=60)
    assert severe_console_errors(driver) == []
