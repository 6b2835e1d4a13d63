"""Links that reproduce what they show, in headless Chromium on a real table (issue 25): UCI Adult (1,200 rows of
shared/data, eight features, a one-hot Pipeline of gradient-boosted trees) served by ``python -m app`` (the
session's ``adult_server``, tests/e2e/conftest.py). A what-if edit survives a reload from its URL; a Surrogate link
with features of interest and a budget shows its own fit (fitted as the page's job, then read from the cache), not
the default one, and a line says when the controls and the surrogate shown differ."""
from __future__ import annotations

import re
from urllib.parse import parse_qs, urlsplit

import pytest
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from tests.e2e.browser import severe_console_errors, wait_for_figures, wait_text, wait_until
from tests.e2e.test_whatif import _control, _shap_text, _status  # the what-if page's readers, shared

pytestmark = pytest.mark.e2e

ROW = 17


def _open_editor(driver):
    """Unfold the what-if editor (its controls are drawn on the first opening); return the age box."""
    summary = driver.find_element(By.CSS_SELECTOR, ".whatif-editor summary")
    if not driver.execute_script("return arguments[0].parentElement.open;", summary):
        driver.execute_script("arguments[0].scrollIntoView({block: 'center'}); arguments[0].click();", summary)
    return wait_until(lambda: driver.find_elements(By.XPATH, "//label[starts-with(normalize-space(.), 'age (')]")
                      and _control(driver, "age").is_displayed() and _control(driver, "age"), "the editor's controls")


def _text(driver, element_id: str) -> str:
    return driver.find_element(By.ID, element_id).text


def test_an_adult_what_if_edit_survives_a_reload_from_its_url(adult_server, browser):
    base, frame = adult_server.base, adult_server.frame
    d = browser
    d.get(f"{base}/descriptive?row={ROW}")
    wait_for_figures(d, minimum=4, timeout=180)
    before = wait_until(lambda: "P(" in _status(d) and _status(d), "the row's status line")
    before_shap = _shap_text(d)
    box = _open_editor(d)
    assert float(box.get_attribute("value")) == frame.age.iloc[ROW] != 80
    d.execute_script("arguments[0].focus(); arguments[0].select();", box)
    ActionChains(d).send_keys("80", Keys.ENTER).perform()
    note = wait_text(d, "descriptive-whatif-note", "Edited row", timeout=90)
    assert f"row {ROW} with 1 feature changed" in note and f"age {frame.age.iloc[ROW]} → 80" in note, note
    edited = wait_until(lambda: "edited from row" in _status(d) and _status(d), "the edited row's status")
    assert re.search(r"P\([^)]+\) [0-9.]+", edited).group() != re.search(r"P\([^)]+\) [0-9.]+", before).group()
    wait_until(lambda: _shap_text(d) != before_shap, "the SHAP waterfall to change")
    wait_until(lambda: parse_qs(urlsplit(d.current_url).query).get("edit") == ["age=80"], "the edit in the URL")
    url, edited_shap = d.current_url, _shap_text(d)

    d.get(url)  # a fresh load of the copied address: the same edited row
    wait_for_figures(d, minimum=4, timeout=120)
    wait_text(d, "descriptive-whatif-note", "Edited row")
    assert wait_until(lambda: "edited from row" in _status(d) and _status(d), "status after reload") == edited
    wait_until(lambda: _shap_text(d) == edited_shap, "the reloaded page to show the edited row's SHAP")
    assert float(_open_editor(d).get_attribute("value")) == 80
    assert severe_console_errors(d) == []


def test_an_adult_surrogate_link_shows_its_own_fit(adult_server, browser):
    base = adult_server.base
    d = browser
    link = f"{base}/surrogate?foi=age&foi=sex&max_rules=5"
    d.get(link)
    # the link's settings: MUSE at 5 rules over age and sex, fitted as the page's job (not the default fit)
    source = wait_text(d, "surrogate-summary", "budgets: 5 rules", timeout=420)
    assert "descriptors over age, sex" in source and "budgets: 10 rules" not in source
    rules = d.execute_script("return [...document.querySelectorAll('#surrogate-summary .metric')]"
                             ".filter(m => m.querySelector('.metric-label').textContent === 'Rules')"
                             ".map(m => m.querySelector('.metric-value').textContent)[0];")
    assert 1 <= int(rules) <= 5
    wait_until(lambda: _text(d, "surrogate-match") == "", "no line once the surrogate shown is the link's")
    wait_until(lambda: d.find_element(By.ID, "surrogate-fit").is_enabled(), "the job to end")
    assert parse_qs(urlsplit(d.current_url).query) == {"foi": ["age", "sex"], "max_rules": ["5"]}

    # a control changed after: one line says the surrogate shown is not of the settings above
    box = d.find_element(By.ID, "surrogate-max-rules")
    d.execute_script("arguments[0].focus(); arguments[0].select();", box)
    ActionChains(d).send_keys("6", Keys.TAB).perform()
    assert wait_text(d, "surrogate-match", "not of the settings above") == (
        "The surrogate shown is another fit, not of the settings above (features of interest age, sex; 6 rules): "
        "Fit MUSE fits them.")

    # the same link again: its fit from the cache, no job, no line
    d.get(link)
    source = wait_text(d, "surrogate-summary", "budgets: 5 rules", timeout=60)
    assert "descriptors over age, sex" in source
    assert d.find_element(By.ID, "surrogate-progress-box").get_attribute("hidden") is not None
    assert _text(d, "surrogate-match") == "" and severe_console_errors(d) == []


def test_an_adult_players_link_shows_the_raw_columns_shapley_values(adult_server, browser):
    """On a one-hot tree Pipeline a ``players=raw`` link applies (on the sample it is named and left out:
    ``tests/e2e/test_links.py``): the radio holds it, the method line says so, the URL keeps it."""
    base = adult_server.base
    d = browser
    d.get(f"{base}/descriptive?row={ROW}&players=raw")
    wait_text(d, "descriptive-notes", "Shapley values with the raw columns as players", timeout=180)
    assert d.find_element(By.ID, "descriptive-shap-players-box").is_displayed()
    assert _text(d, "url-note") == ""
    assert parse_qs(urlsplit(d.current_url).query) == {"row": [str(ROW)], "players": ["raw"]}
