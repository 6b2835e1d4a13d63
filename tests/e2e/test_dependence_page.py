"""The Dependence page in headless Chromium on the bundled sample (issue 25): a link opens the feature it names,
the keyboard picks another, both figures draw with their text alternatives, the URL follows, axe finds nothing."""
from __future__ import annotations

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from tests.e2e.browser import severe_console_errors, svg_text, wait_for_figures, wait_text, wait_until
from tests.e2e.test_wcag_axe import _assert_clean, _tab_to, axe_source  # noqa: F401  (axe_source: a fixture)

pytestmark = pytest.mark.e2e


def test_pick_a_feature_see_both_figures_and_no_axe_violations(server, browser, axe_source):  # noqa: F811
    browser.get(server + "/dependence?feature=mean%20radius")
    wait_text(browser, "dependence-notes", "ICE curves", timeout=120)
    wait_for_figures(browser, timeout=60, minimum=2)
    assert "SHAP dependence of mean radius" in svg_text(browser, "#dependence-shap .gtitle")
    assert "Partial dependence and ICE of mean radius" in svg_text(browser, "#dependence-pdp .gtitle")
    browser.execute_script("if (window.candorA11y) window.candorA11y();")
    labels = [e.get_attribute("aria-label") or "" for e in browser.find_elements(By.CSS_SELECTOR, "[role='figure']")]
    assert any("SHAP value" in a for a in labels) and any("ICE curves run against it" in a for a in labels)
    notes = browser.find_element(By.ID, "dependence-notes").text
    assert "of the 143 ICE curves" in notes and "95 % CI" in notes and "Coloured by" in notes
    _assert_clean(browser, axe_source, "/dependence")

    browser.find_element(By.TAG_NAME, "body").click()  # from the top of the page, by keyboard only
    picker = _tab_to(browser, lambda el: el.get_attribute("id") == "dependence-feature")
    picker.send_keys(Keys.ENTER)  # opens the list on the current feature; the arrow moves, Enter picks
    options = wait_until(lambda: browser.find_elements(By.CSS_SELECTOR, "[role='option']"), "the list to open", 10)
    names = [o.text for o in options]
    following = names[names.index("mean radius") + 1]
    browser.switch_to.active_element.send_keys(Keys.ARROW_DOWN)
    browser.switch_to.active_element.send_keys(Keys.ENTER)
    wait_text(browser, "dependence-notes", f"The PDP of {following}", timeout=60)
    wait_for_figures(browser, timeout=60, minimum=2)
    wait_until(lambda: "feature=" + following.replace(" ", "+") in browser.current_url, "the URL to name it", 10)
    assert f"SHAP dependence of {following}" in svg_text(browser, "#dependence-shap .gtitle")
    browser.get(browser.current_url)  # the link reopens the picked feature
    wait_text(browser, "dependence-notes", f"The PDP of {following}", timeout=60)
    assert severe_console_errors(browser) == []
