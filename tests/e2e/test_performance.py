"""The Performance page in headless Chromium on the bundled sample (issue 25): the ROC, precision-recall,
calibration and confusion figures draw with their text alternatives; the threshold opens from the URL, moves
from the keyboard, and the counts, the rates and the URL follow; axe-core finds no WCAG 2.1 AA violation."""
from __future__ import annotations

import re
import time

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from tests.e2e.browser import severe_console_errors, wait_for_figures, wait_text
from tests.e2e.test_wcag_axe import _assert_clean, axe_source  # noqa: F401  (the module's axe fixture)

pytestmark = pytest.mark.e2e

COUNTS = re.compile(r"Threshold (\d\.\d\d): (\d+) true positives, (\d+) false positives, (\d+) true negatives, "
                    r"(\d+) false negatives")


def _counts(driver) -> tuple:
    m = COUNTS.search(driver.find_element(By.ID, "performance-threshold-text").text)
    assert m, driver.find_element(By.ID, "performance-threshold-text").text
    return m.group(1), tuple(int(g) for g in m.groups()[1:])


def test_performance_page_threshold_moves_counts_and_url(server, browser, axe_source):  # noqa: F811
    browser.get(server + "/performance?threshold=10")
    wait_text(browser, "performance-threshold-text", "Threshold 0.10", timeout=90)
    assert wait_for_figures(browser, timeout=60, minimum=4) >= 4  # ROC, PR, calibration, confusion
    alts = browser.execute_script(
        "return [...document.querySelectorAll('.js-plotly-plot')].map(g => g.layout && g.layout.meta "
        "&& g.layout.meta.alt).filter(Boolean);")
    assert any(a.startswith("ROC curve over 143 held-out rows; ROC AUC 0.991") for a in alts), alts
    assert any("precision-recall curve" in a for a in alts) and any(a.startswith("calibration over 10 bins")
                                                                     for a in alts), alts
    first, counts = _counts(browser)
    assert first == "0.10" and sum(counts) == 143 and counts[1] > 0
    thumb = browser.find_element(By.CSS_SELECTOR, "#performance-threshold [role='slider']")
    assert thumb.get_attribute("aria-label") or thumb.get_attribute("aria-labelledby")
    for key in (Keys.ARROW_RIGHT, Keys.END):  # a hundredth up, then to 1.00
        thumb.send_keys(key)
    deadline = time.time() + 30
    while _counts(browser)[0] != "1.00" and time.time() < deadline:
        time.sleep(0.2)
    moved, after = _counts(browser)
    assert moved == "1.00" and sum(after) == 143
    # the same positives and negatives; no probability of the sample's held-out rows reaches 1.00
    assert (after[0] + after[3], after[1] + after[2]) == (counts[0] + counts[3], counts[1] + counts[2])
    assert after[0] + after[1] < counts[0] + counts[1]
    assert "threshold=100" in browser.current_url
    circle = browser.execute_script(  # the chosen threshold's circle on the ROC curve moved to (FPR, TPR) at 1.00
        "const g = document.querySelector('#performance-roc .js-plotly-plot'); return [g.data[2].x, g.data[2].y];")
    assert circle == [[after[1] / (after[1] + after[2])], [after[0] / (after[0] + after[3])]]
    rates = browser.find_element(By.ID, "performance-rates").text
    assert "true positive rate (recall)" in rates and f"{after[0]} of {after[0] + after[3]}" in rates
    _assert_clean(browser, axe_source, "/performance")
    assert severe_console_errors(browser) == []
