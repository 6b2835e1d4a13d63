"""The Persuasive page's story test in headless Chromium on the bundled sample (issue 25): the immutable picker by
keyboard alone, the job run to its card (verdict beside the story, the counterfactual list), axe 0 violations with
the card shown, and the card back to its hint once k changes the story."""
from __future__ import annotations

import time

import pytest
import requests
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from tests.e2e.browser import severe_console_errors, wait_text, wait_until
from tests.e2e.test_wcag_axe import _assert_clean, _tab_to, axe_source  # noqa: F401  (axe_source: a fixture)

pytestmark = pytest.mark.e2e


def _card(driver) -> str:
    return driver.find_element(By.ID, "persuasive-story-card").text


def test_story_test_by_keyboard_runs_shows_its_card_passes_axe_and_resets_with_k(server, browser, axe_source):
    wait_until(lambda: requests.get(server + "/_candor/ready", timeout=5).status_code == 200, "the warm-up", 300)
    browser.get(server + "/persuasive")
    wait_text(browser, "persuasive-statement", "(k = 3)", timeout=90)
    assert "Story test: search for the smallest changes" in _card(browser)
    browser.find_element(By.TAG_NAME, "body").click()
    picker = _tab_to(browser, lambda el: el.get_attribute("id") == "persuasive-story-immutable")
    picker.send_keys(Keys.ENTER)
    search = wait_until(lambda: browser.find_elements(By.CSS_SELECTOR, "#persuasive-story-immutable ~ * input, "
                                                      "[role='listbox'] input, input[type='search']"),
                        "the picker's search box", 10)[0]
    search.send_keys("worst radius")
    search.send_keys(Keys.ENTER)
    search.send_keys(Keys.ESCAPE)
    wait_until(lambda: "worst radius" in browser.find_element(By.ID, "persuasive-story-immutable").text,
               "worst radius picked by keyboard", 10)
    run = _tab_to(browser, lambda el: el.get_attribute("id") == "persuasive-story-run")
    run.send_keys(Keys.ENTER)
    wait_text(browser, "persuasive-story-card", "the story at k = 3", timeout=120)
    card = _card(browser)
    assert "held fixed: worst radius" in card and "Cheapest flips needing a hidden feature" in card
    assert ("The story's features alone flip the decision" in card
            or "The story's features alone did not flip the decision" in card)
    rows = browser.find_elements(By.CSS_SELECTOR, ".counterfactual-table tbody tr")
    assert 1 <= len(rows) <= 5
    assert all("→" in r.text for r in rows) and "worst radius:" not in card.split("Counterfactuals of this row")[1]
    wait_until(lambda: browser.find_element(By.ID, "persuasive-story-cancel").get_attribute("disabled"),
               "Cancel disabled once the job ended", 10)
    _assert_clean(browser, axe_source, "/persuasive with the story test's card")
    slider = browser.find_element(By.CSS_SELECTOR, "#persuasive-k [role='slider']")
    slider.send_keys(Keys.ARROW_RIGHT)
    wait_text(browser, "persuasive-statement", "(k = 4)")
    wait_until(lambda: "Story test: search for the smallest changes" in _card(browser), "the card's hint again", 10)
    time.sleep(0.5)
    assert severe_console_errors(browser) == []
