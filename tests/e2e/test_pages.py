"""Every page in real headless Chromium (Debian's chromium + chromedriver), against `python -m app`.

The `server` and `browser` fixtures live in tests/e2e/conftest.py.

Each test opens a page, waits for its figures, interacts (another row, the k control, a table
click) and asserts what the browser shows and that its console has no errors.
"""
from __future__ import annotations

import time

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from tests.e2e.browser import severe_console_errors, svg_text, wait_for_figures, wait_text

pytestmark = pytest.mark.e2e


def _set_row(driver, row: int) -> None:
    box = driver.find_element(By.ID, "row-input")
    box.send_keys(Keys.CONTROL, "a")
    box.send_keys(str(row), Keys.ENTER)






def test_model_and_data_page(server, browser):
    browser.get(server + "/")
    wait_for_figures(browser, minimum=0)
    wait_text(browser, "overview-summary", "HELD-OUT ACCURACY")
    assert "0.958" in browser.find_element(By.ID, "overview-summary").text
    rows = browser.find_elements(By.CSS_SELECTOR, "#overview-table tbody tr")
    assert 10 <= len(rows) <= 14  # header + one page of 12, never the 569 rows
    id_cells = browser.find_elements(By.CSS_SELECTOR, "#overview-table td[data-dash-column='id']")
    [five] = [c for c in id_cells if c.text == "5"]
    five.click()
    wait_text(browser, "row-status", "train · true malignant")
    assert browser.find_element(By.ID, "row-input").get_attribute("value") == "5"
    assert severe_console_errors(browser) == []


def test_descriptive_page_changes_with_the_row(server, browser):
    browser.get(server + "/descriptive")
    assert wait_for_figures(browser, minimum=4) >= 4
    before = svg_text(browser, "#descriptive-shap-waterfall .gtitle")
    _set_row(browser, 200)
    deadline = time.time() + 30
    while svg_text(browser, "#descriptive-shap-waterfall .gtitle") == before and time.time() < deadline:
        time.sleep(0.2)
    assert svg_text(browser, "#descriptive-shap-waterfall .gtitle") != before
    wait_text(browser, "descriptive-agreement", "Row 200")
    assert "TreeExplainer" in browser.find_element(By.ID, "descriptive-notes").text
    assert severe_console_errors(browser) == []


def test_surrogate_page(server, browser):
    browser.get(server + "/surrogate")
    wait_text(browser, "surrogate-summary", "AGREEMENT WITH THE MODEL", timeout=90)
    assert "MUSE surrogate" in browser.find_element(By.ID, "surrogate-summary").text
    assert browser.find_elements(By.CSS_SELECTOR, ".neighborhood")
    deadline = time.time() + 120  # the frontier is a background job with a progress bar
    while "MUSE" not in svg_text(browser, "#surrogate-frontier .legendtext") and time.time() < deadline:
        time.sleep(0.5)
    assert {"MUSE", "CART", "FLAT"} <= set(svg_text(browser, "#surrogate-frontier .legendtext").split())
    points = browser.find_elements(By.CSS_SELECTOR, "#surrogate-frontier .scatterlayer .point")
    assert len(points) >= 24
    assert severe_console_errors(browser) == []


def test_persuasive_k_control_updates_both_sides(server, browser):
    browser.get(server + "/persuasive")
    wait_for_figures(browser, minimum=3)
    wait_text(browser, "persuasive-statement", "(k = 3)")
    handle = browser.find_element(By.CSS_SELECTOR, "#persuasive-k [role='slider']")
    handle.click()
    handle.send_keys(Keys.ARROW_RIGHT)
    wait_text(browser, "persuasive-statement", "(k = 4)")
    bars = browser.find_elements(By.CSS_SELECTOR, "#persuasive-topk-bar .bars .point")
    assert len(bars) == 4
    assert "features hidden" in browser.find_element(By.ID, "persuasive-cost").text
    assert "What was dropped (26 features)" in browser.find_element(By.ID, "persuasive-dropped").text
    assert "GILPIN: PROCESSING" in browser.find_element(By.ID, "persuasive-statement").text.upper()
    assert "sentences shown" in browser.find_element(By.ID, "persuasive-verify").text
    assert severe_console_errors(browser) == []


def test_attention_page(server, browser):
    browser.get(server + "/attention")
    assert wait_for_figures(browser, minimum=4, timeout=60) >= 4
    wait_text(browser, "attention-notes", "Integrated Gradients")
    assert "layer 1" in svg_text(browser, "#attention-heatmap .annotation-text")
    _set_row(browser, 10)
    wait_text(browser, "attention-notes", "log-odds")
    assert severe_console_errors(browser) == []
