"""Every page in real headless Chromium (Debian's chromium + chromedriver), against `python -m app`.

Each test opens a page, waits for its figures, interacts (another row, the k control, a table
click) and asserts what the browser shows and that its console has no errors.
"""
from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import requests
from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from tests.e2e.browser import chromium_driver, severe_console_errors, wait_for_figures

pytestmark = pytest.mark.e2e
ROOT = Path(__file__).resolve().parents[2]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server():
    port = _free_port()
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "app", "--port", str(port)], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    base = f"http://127.0.0.1:{port}"
    deadline = time.time() + 120
    while time.time() < deadline:
        try:
            if requests.get(base + "/", timeout=2).status_code == 200:
                break
        except requests.ConnectionError:
            time.sleep(0.3)
        if proc.poll() is not None:
            raise RuntimeError(f"server exited: {proc.stdout.read()}")
    yield base
    proc.terminate()
    proc.wait(timeout=20)


@pytest.fixture(scope="module")
def browser():
    with chromium_driver(width=1400, height=1000) as driver:
        yield driver


def _set_row(driver, row: int) -> None:
    box = driver.find_element(By.ID, "row-input")
    box.send_keys(Keys.CONTROL, "a")
    box.send_keys(str(row), Keys.ENTER)


def _wait_text(driver, element_id: str, needle: str, timeout: float = 30) -> str:
    deadline = time.time() + timeout
    text = ""
    while time.time() < deadline:
        try:
            text = driver.find_element(By.ID, element_id).text
        except (StaleElementReferenceException, NoSuchElementException):  # re-rendered while we read it
            text = ""
        if needle in text:
            return text
        time.sleep(0.2)
    raise AssertionError(f"{needle!r} not in #{element_id}: {text[:300]!r}")


def _svg_text(driver, selector: str) -> str:
    for _ in range(20):
        try:
            return " ".join(e.text for e in driver.find_elements(By.CSS_SELECTOR, selector))
        except StaleElementReferenceException:  # the figure was redrawn between find and read
            time.sleep(0.1)
    raise AssertionError(f"{selector} kept being redrawn")


def test_model_and_data_page(server, browser):
    browser.get(server + "/")
    wait_for_figures(browser, minimum=0)
    _wait_text(browser, "overview-summary", "HELD-OUT ACCURACY")
    assert "0.958" in browser.find_element(By.ID, "overview-summary").text
    rows = browser.find_elements(By.CSS_SELECTOR, "#overview-table tbody tr")
    assert 10 <= len(rows) <= 14  # header + one page of 12, never the 569 rows
    id_cells = browser.find_elements(By.CSS_SELECTOR, "#overview-table td[data-dash-column='id']")
    [five] = [c for c in id_cells if c.text == "5"]
    five.click()
    _wait_text(browser, "row-status", "train · true malignant")
    assert browser.find_element(By.ID, "row-input").get_attribute("value") == "5"
    assert severe_console_errors(browser) == []


def test_descriptive_page_changes_with_the_row(server, browser):
    browser.get(server + "/descriptive")
    assert wait_for_figures(browser, minimum=4) >= 4
    before = _svg_text(browser, "#descriptive-shap-waterfall .gtitle")
    _set_row(browser, 200)
    deadline = time.time() + 30
    while _svg_text(browser, "#descriptive-shap-waterfall .gtitle") == before and time.time() < deadline:
        time.sleep(0.2)
    assert _svg_text(browser, "#descriptive-shap-waterfall .gtitle") != before
    _wait_text(browser, "descriptive-agreement", "Row 200")
    assert "TreeExplainer" in browser.find_element(By.ID, "descriptive-notes").text
    assert severe_console_errors(browser) == []


def test_surrogate_page(server, browser):
    browser.get(server + "/surrogate")
    wait_for_figures(browser, minimum=1)
    text = _wait_text(browser, "surrogate-summary", "AGREEMENT WITH THE MODEL")
    assert "0.972" in text
    assert len(browser.find_elements(By.CSS_SELECTOR, ".rules-table tbody tr")) == 8
    assert severe_console_errors(browser) == []


def test_persuasive_k_control_updates_both_sides(server, browser):
    browser.get(server + "/persuasive")
    wait_for_figures(browser, minimum=3)
    _wait_text(browser, "persuasive-statement", "(k = 3)")
    handle = browser.find_element(By.CSS_SELECTOR, "#persuasive-k [role='slider']")
    handle.click()
    handle.send_keys(Keys.ARROW_RIGHT)
    _wait_text(browser, "persuasive-statement", "(k = 4)")
    bars = browser.find_elements(By.CSS_SELECTOR, "#persuasive-topk-bar .bars .point")
    assert len(bars) == 4
    assert "features hidden" in browser.find_element(By.ID, "persuasive-cost").text
    assert severe_console_errors(browser) == []


def test_attention_page(server, browser):
    browser.get(server + "/attention")
    assert wait_for_figures(browser, minimum=4, timeout=60) >= 4
    _wait_text(browser, "attention-notes", "Integrated Gradients")
    assert "layer 1" in _svg_text(browser, "#attention-heatmap .annotation-text")
    _set_row(browser, 10)
    _wait_text(browser, "attention-notes", "log-odds")
    assert severe_console_errors(browser) == []
