"""The what-if editor (issue 25) in headless Chromium on the bundled sample: an edit changes the prediction and the
SHAP panel, the edited row survives a reload from its URL, "Reset to row N" brings the table row back, a value
outside the data's range is refused in one line and changes nothing, and the page passes axe."""
from __future__ import annotations

import re
from urllib.parse import parse_qs, urlsplit

import pytest
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from tests.e2e.browser import severe_console_errors, wait_for_figures, wait_text, wait_until
from tests.e2e.test_wcag_axe import _violations, axe_source  # noqa: F401  (the axe fixture)

pytestmark = pytest.mark.e2e

ROW = 128
FEATURE = "worst concave points"
"""The sample model's strongest feature: moving it to the data's largest value moves the prediction."""


def _status(driver) -> str:
    return driver.find_element(By.ID, "row-status").text


def _shap_text(driver) -> str:
    """The SHAP waterfall's labels and numbers as drawn (its SVG text)."""
    return driver.execute_script(
        "return [...document.querySelectorAll('#descriptive-shap-waterfall svg text')].map(t => t.textContent)"
        ".join('|')")


def _control(driver, name: str):
    """The number box of feature ``name`` (its label's ``for``)."""
    label = driver.find_element(By.XPATH, f"//label[starts-with(normalize-space(.), '{name} (')]")
    return driver.execute_script("return document.getElementById(arguments[0]);", label.get_attribute("for"))


def _open_editor(driver) -> None:
    """Unfold the editor (a keyboard user's Enter on its summary does the same)."""
    summary = driver.find_element(By.CSS_SELECTOR, ".whatif-editor summary")
    if not driver.execute_script("return arguments[0].parentElement.open;", summary):
        _click(driver, summary)
    wait_until(lambda: driver.find_elements(By.XPATH, "//label[starts-with(normalize-space(.), 'mean radius (')]")
               and _control(driver, "mean radius").is_displayed(), "the editor to unfold and draw its controls")


def _click(driver, element) -> None:
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'}); arguments[0].click();", element)


def _type(driver, box, value: str) -> None:
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'}); arguments[0].focus(); arguments[0].select();",
                          box)
    ActionChains(driver).send_keys(value, Keys.ENTER).perform()  # typed into the focused box, as a user would


def test_an_edit_follows_to_every_panel_survives_a_reload_and_resets(server, browser, axe_source):  # noqa: F811
    d = browser
    d.get(f"{server}/descriptive?row={ROW}")
    wait_for_figures(d, minimum=4, timeout=90)
    before_status = wait_until(lambda: "P(" in _status(d) and _status(d), "the row's status line")
    before_shap = _shap_text(d)
    _open_editor(d)
    box = _control(d, FEATURE)
    hi = float(box.get_attribute("max"))
    assert box.get_attribute("value") != "" and float(box.get_attribute("value")) < hi

    _type(d, box, repr(hi))
    note = wait_text(d, "descriptive-whatif-note", "Edited row")
    assert f"row {ROW} with 1 feature changed" in note and FEATURE in note, note
    after_status = wait_until(lambda: "edited from row" in _status(d) and _status(d), "the edited row's status")
    assert re.search(r"P\(\w+\) [0-9.]+", after_status).group() != re.search(r"P\(\w+\) [0-9.]+", before_status).group()
    wait_until(lambda: _shap_text(d) != before_shap, "the SHAP waterfall to change")
    assert "as edited" in d.find_element(By.ID, "descriptive-agreement").text
    query = parse_qs(urlsplit(d.current_url).query)
    assert query["row"] == [str(ROW)] and query["edit"] == [f"{FEATURE}={hi!r}"], d.current_url
    edited_shap = _shap_text(d)

    # a value outside the data's range: one line, nothing changes (not the URL, not the panels)
    url = d.current_url
    _type(d, _control(d, "mean radius"), "1000")
    message = wait_text(d, "descriptive-whatif-message", "must be")
    assert "mean radius must be a number from" in message and "nothing changed" in message
    assert d.current_url == url and _shap_text(d) == edited_shap

    # the URL reopens the same edited row in a fresh page load
    d.get(url)
    wait_for_figures(d, minimum=4, timeout=90)
    wait_text(d, "descriptive-whatif-note", "Edited row")
    wait_until(lambda: _shap_text(d) == edited_shap, "the reloaded page to show the edited row's SHAP")
    assert wait_until(lambda: "edited from row" in _status(d) and _status(d), "status") == after_status
    _open_editor(d)  # the controls are drawn when the editor opens, holding the edited row's values
    assert float(_control(d, FEATURE).get_attribute("value")) == hi

    # the Persuasive page explains the same edited row (its status line, its URL)
    _click(d, d.find_element(By.LINK_TEXT, "Persuasive"))
    wait_until(lambda: "/persuasive" in d.current_url and "edit=" in d.current_url, "the Persuasive URL's edit")
    assert wait_until(lambda: "edited from row" in _status(d) and _status(d), "persuasive status") == after_status
    wait_text(d, "persuasive-whatif-note", "Edited row")
    d.get(url)
    wait_for_figures(d, minimum=4, timeout=90)

    # "Reset to row N": the table row again, its URL without edits
    reset = d.find_element(By.ID, "descriptive-whatif-reset")
    wait_until(lambda: reset.is_enabled(), "the reset button")
    assert reset.text == f"Reset to row {ROW}"
    _click(d, reset)
    wait_until(lambda: _shap_text(d) == before_shap, "the table row's SHAP back")
    wait_until(lambda: "edit=" not in d.current_url, "the URL without edits")
    assert wait_until(lambda: "P(" in _status(d) and "edited" not in _status(d) and _status(d), "status") \
        == before_status
    assert d.find_element(By.ID, "descriptive-whatif-note").text == ""

    _open_editor(d)  # folded again by the reload: open for axe
    bad = [f"{v['id']}: {v['targets'][:3]}" for v in _violations(d, axe_source)]
    assert bad == [], bad
    assert severe_console_errors(d) == []
