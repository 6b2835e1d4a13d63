"""Every page in real headless Chromium (Debian's chromium + chromedriver), against `python -m app`.

The `server` and `browser` fixtures live in tests/e2e/conftest.py.

Each test opens a page, waits for its figures, interacts (another row, the k control, a table
click) and asserts what the browser shows and that its console has no errors.
"""
from __future__ import annotations

import time
from urllib.parse import parse_qs, urlsplit

import pytest
from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException
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
    wait_text(browser, "overview-summary", "Held-out accuracy")
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
    notes = browser.find_element(By.ID, "descriptive-notes").text
    assert "exact interventional Tree SHAP" in notes and "log-odds" in notes
    assert "log-odds, probability" in svg_text(browser, "#descriptive-shap-waterfall .gtitle")
    assert severe_console_errors(browser) == []


BEESWARM_TRACES = ("const g = document.querySelector('#descriptive-global-beeswarm .js-plotly-plot');"
                   " return g && g.data ? g.data.length : -1;")


def test_the_beeswarm_is_drawn_only_when_shown_and_its_switch_travels_in_the_url(server, browser):
    """The page opens with the beeswarm hidden and undrawn (its graph keeps the waiting placeholder: no trace, no
    WebGL canvas); its switch draws it and writes beeswarm=on into the address, and that link opens it drawn."""
    browser.get(server + "/descriptive")
    wait_for_figures(browser, minimum=4)
    wait_text(browser, "descriptive-agreement", "Row")
    time.sleep(1)  # the global panel's answer is in (asked again each second while it waits)
    assert not browser.find_element(By.ID, "descriptive-global-beeswarm-box").is_displayed()
    assert browser.execute_script(BEESWARM_TRACES) == 0
    assert not browser.find_elements(By.CSS_SELECTOR, "#descriptive-global-beeswarm canvas")
    browser.find_element(By.CSS_SELECTOR, "#descriptive-global-beeswarm-show input").click()
    deadline = time.time() + 60
    while browser.execute_script(BEESWARM_TRACES) < 1 and time.time() < deadline:
        time.sleep(0.2)
    assert browser.execute_script(BEESWARM_TRACES) >= 1  # one trace a feature
    assert browser.find_element(By.ID, "descriptive-global-beeswarm-box").is_displayed()
    assert parse_qs(urlsplit(browser.current_url).query).get("beeswarm") == ["on"]
    browser.get(server + "/descriptive?beeswarm=on")
    deadline = time.time() + 60
    while browser.execute_script(BEESWARM_TRACES) < 1 and time.time() < deadline:
        time.sleep(0.2)
    assert browser.execute_script(BEESWARM_TRACES) >= 1
    assert browser.find_element(By.ID, "descriptive-global-beeswarm-box").is_displayed()
    assert severe_console_errors(browser) == []


def test_surrogate_page(server, browser):
    browser.get(server + "/surrogate")
    wait_text(browser, "surrogate-summary", "Agreement with the model", timeout=90)
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


def _wait(predicate, timeout: float = 30, what: str = "condition") -> None:
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            if predicate():
                return
        except (NoSuchElementException, StaleElementReferenceException):
            pass  # the page is still rendering
        time.sleep(0.2)
    raise TimeoutError(f"{what} not met within {timeout} s")


def test_the_row_travels_in_the_url(server, browser):
    """A link with ?row=N opens that row; a new row rewrites the URL in place; pages keep it."""
    browser.get(server + "/descriptive?row=42")
    _wait(lambda: browser.find_element(By.ID, "row-input").get_attribute("value") == "42", what="row 42 from URL")
    assert wait_for_figures(browser, timeout=60, minimum=3) >= 3
    _set_row(browser, 7)
    _wait(lambda: browser.current_url.endswith("/descriptive?row=7"), what="URL with row 7")
    _set_row(browser, 5000)  # out of range: the box gives no number; the URL keeps the last row
    wait_text(browser, "row-status", "enter a whole row number from 0 to 568")
    assert browser.current_url.endswith("/descriptive?row=7")
    _set_row(browser, 7)
    browser.find_element(By.LINK_TEXT, "Persuasive").click()
    _wait(lambda: urlsplit(browser.current_url).path == "/persuasive"  # the page adds its own state (app/shell/url_state.py)
          and parse_qs(urlsplit(browser.current_url).query).get("row") == ["7"], what="row kept across pages")
    assert browser.find_element(By.ID, "row-input").get_attribute("value") == "7"
    browser.get(server + "/")
    wait_text(browser, "overview-table", "malignant")
    [five] = [c for c in browser.find_elements(By.CSS_SELECTOR, "#overview-table td[data-dash-column='id']")
              if c.text == "5"]
    five.click()
    wait_text(browser, "overview-explain-links", "Row 5:")
    link = browser.find_element(By.LINK_TEXT, "Descriptive →")
    assert link.get_attribute("href").endswith("/descriptive?row=5")
    link.click()
    _wait(lambda: browser.current_url.endswith("/descriptive?row=5"), what="explain link")
    assert browser.find_element(By.ID, "row-input").get_attribute("value") == "5"
    browser.get(server + "/descriptive?row=-5")  # a bad link is reported, and does not stick
    wait_text(browser, "url-note", "row=-5: outside 0–568")
    browser.get(server + "/descriptive")
    _wait(lambda: "?row=" in browser.current_url and "row=-5" not in browser.current_url, what="default row")
    assert severe_console_errors(browser) == []
