"""Each user action on the Text page costs one Dash request (issue 14), counted in headless Chromium.

The probe of :mod:`benchmarks.browser_timing` counts the ``_dash-update-component`` requests an action starts.
Opening the page is one request once the server has loaded the text model (two for the very first visit).
Before, opening was 9, a new text was a chain of 8 (the text to a store, then notes, pickers, agreement, job status, the
Lopardo card, then the head view and aggregates once the pickers answered) and a layer 2. No timings are
asserted here (``python -m benchmarks.text_page`` measures them).
"""
from __future__ import annotations

import json

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from benchmarks import browser_timing as bt
from benchmarks.text_page import OPTION, RADIO, close_dropdown, open_dropdown, option_label
from tests.e2e.browser import svg_text

pytestmark = pytest.mark.e2e

FIVE_PLOTS = bt.VISIBLE_PLOTS.strip().removeprefix("return ").rstrip(";") + " >= 5"


def _notes_say(text: str) -> str:
    return f"return ({FIVE_PLOTS}) && document.getElementById('text-notes').innerText.includes({json.dumps(text)});"


def _act(driver, act, drawn: str) -> list[dict]:
    """Run ``act()``; the Dash requests it started, once the page has settled."""
    before = bt.state(driver)["started"]
    act()
    bt.wait_settled(driver, drawn, since_started=before, timeout=120)
    return bt.requests_since(driver, before)


def _choose(driver, dropdown: str, option: str) -> None:
    open_dropdown(driver, dropdown)
    bt.click(driver, OPTION % json.dumps(option))


def _outputs(sent: list[dict]) -> list[str]:
    return [r["output"] for r in sent]


def test_each_text_page_action_is_one_request(server, browser):
    bt.install_probe(browser)
    browser.get(server + "/text")
    bt.wait_settled(browser, _notes_say("for built-in example 0"), timeout=180)
    opened = [o for o in _outputs(bt.requests_since(browser, 0)) if "text-" in o]
    # the first opening in a server: every panel, then the head view and aggregates with the layer and heads
    # the first request read from the model (before: 9 requests, among them the dataset's pickers and an
    # empty pick); the server may have loaded the model already (another test opened the page): then one
    assert len(opened) in (1, 2) and "text-lopardo-summary" in opened[0], opened
    assert len(opened) == 1 or "text-head-view" in opened[1], opened
    assert svg_text(browser, "#text-head-view .annotation-text") == "head 0 head 1 head 2 head 3"  # heads 0-3 chosen
    browser.refresh()  # the model is loaded now: the page comes with its pickers filled, one request
    bt.wait_settled(browser, _notes_say("for built-in example 0"), timeout=120)
    opened = [o for o in _outputs(bt.requests_since(browser, 0)) if "text-" in o]
    assert len(opened) == 1 and "text-head-view" in opened[0], opened
    assert "Head view: layer 5" in svg_text(browser, "#text-head-view .gtitle")
    assert "?" not in browser.current_url  # the pickers' values are the page's defaults: a short link

    def enter():
        box = browser.find_element(By.ID, "text-input")
        box.send_keys(Keys.CONTROL, "a")
        box.send_keys("The soup was cold but the waiter was kind.", Keys.ENTER)

    sent = _act(browser, enter, _notes_say("for typed"))
    assert len(sent) == 1, _outputs(sent)  # before: 8
    for part in ("text-current.data", "text-notes", "text-head-view", "text-aggregates", "text-agreement",
                 "text-lopardo-summary"):
        assert part in sent[0]["output"]
    assert "Predicted" in browser.find_element(By.ID, "text-notes").text
    assert "text=The+soup+was+cold" in browser.current_url  # the URL follows in the browser, no request

    sent = _act(browser, lambda: _choose(browser, "text-row", _option_label(browser, 2)),
                _notes_say("for text 2 of built-in examples"))
    assert len(sent) == 1, _outputs(sent)  # before: 8
    assert browser.find_element(By.ID, "text-input").get_attribute("value") == \
        "The battery lasts all day and the screen is gorgeous."

    sent = _act(browser, lambda: _choose(browser, "text-layer", "layer 2"), _notes_say("for text 2"))
    assert len(sent) == 1, _outputs(sent)  # before: 2 (head view, aggregates)
    assert "Head view: layer 2" in svg_text(browser, "#text-head-view .gtitle")
    assert "layer 2" in svg_text(browser, "#text-aggregates .yaxislayer-above text")

    sent = _act(browser, lambda: _choose(browser, "text-heads", "head 7"), _notes_say("for text 2"))
    assert len(sent) == 1, _outputs(sent)
    assert svg_text(browser, "#text-head-view .annotation-text") == "mean over heads 0, 1, 2, 3, 7"  # 5 heads: their mean
    browser.find_element(By.TAG_NAME, "body").send_keys(Keys.ESCAPE)

    sent = _act(browser, lambda: bt.click(browser, RADIO % ("text-metric", "kendall")), _notes_say("for text 2"))
    assert len(sent) == 1 and "text-agreement" in sent[0]["output"], _outputs(sent)
    assert "Kendall" in svg_text(browser, "#text-agreement .gtitle")


def _option_label(driver, i: int) -> str:
    """The dataset picker's option ``i`` (opened to read it, then closed)."""
    open_dropdown(driver, "text-row")
    label = option_label(driver, i)
    close_dropdown(driver)
    return label
