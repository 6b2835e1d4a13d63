"""WCAG 2.1 AA on every page, checked by axe-core (npm, pinned in tests/e2e/axe/) in real headless Chromium,
and keyboard operation of the controls Dash draws itself.

``scripts/test`` installs axe-core with ``npm ci`` in tests/e2e/axe/. Each page is opened, its figures
drawn, axe.min.js injected and run with the WCAG 2.0/2.1 A and AA rules; the test fails listing every
violation's rule id and the CSS targets of its nodes.
"""
from __future__ import annotations

import re
import time
from pathlib import Path

import pytest
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from tests.e2e.browser import severe_console_errors, wait_for_figures, wait_text

pytestmark = pytest.mark.e2e

AXE = Path(__file__).parent / "axe" / "node_modules" / "axe-core" / "axe.min.js"
TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]
_RUN = ("const done = arguments[arguments.length - 1];"
        "if (window.candorA11y) window.candorA11y();"
        "axe.run(document, {runOnly: {type: 'tag', values: arguments[0]}, resultTypes: ['violations']})"
        ".then(r => done(r.violations.map(v => ({id: v.id, impact: v.impact, help: v.help,"
        " targets: v.nodes.map(n => n.target.join(' '))}))), e => done([{id: 'axe-error', impact: 'n/a',"
        " help: String(e), targets: []}]));")


@pytest.fixture(scope="module")
def axe_source() -> str:
    if not AXE.exists():
        raise RuntimeError(f"{AXE} is missing: run `npm ci` in tests/e2e/axe (scripts/test does)")
    return AXE.read_text()


def _violations(driver, axe_source: str) -> list[dict]:
    time.sleep(0.3)  # a last animation frame for the accessibility pass of assets/a11y.js
    driver.execute_script(axe_source)
    driver.set_script_timeout(60)
    return driver.execute_async_script(_RUN, TAGS)


UNREADABLE = re.compile(r"\d\.?\d*[eE][+-]\d|np\.\w+\(|\{'|\btrace \d+\b|If everywhere|IF always")
"""What a first-time user found in people-facing text: scientific notation, numpy reprs, dict reprs, Plotly's
"trace 0" legend entries, "If everywhere:" and "IF always THEN" rule texts."""


def _assert_readable(driver, where: str) -> None:
    text = driver.execute_script("return document.body.innerText + '\\n' + "
                                 "[...document.querySelectorAll('svg text')].map(t => t.textContent).join('\\n')")
    hits = sorted({text[max(0, m.start() - 40):m.end() + 15].replace("\n", " ") for m in UNREADABLE.finditer(text)})
    assert hits == [], f"unreadable text on {where}: {hits}"


_UNREACHABLE = """
if (window.candorA11y) window.candorA11y();
const sel = 'button, input, select, textarea, a[href], [role="slider"], [role="combobox"], [role="checkbox"], [role="radio"]';
return [...document.querySelectorAll(sel)]
  .filter(e => e.getClientRects().length && !e.disabled && !e.closest('[inert]') && e.type !== 'hidden')
  .filter(e => !(e.type === 'file' && e.parentElement && e.parentElement.tabIndex >= 0))  // the drop zone takes Tab
  .filter(e => e.tabIndex < 0)
  .map(e => e.tagName.toLowerCase() + (e.id ? '#' + e.id : '') + '.' + String(e.className).split(' ')[0]);
"""


def _assert_reachable(driver, where: str) -> None:
    """Every visible, enabled control is in the Tab order (Dash 4's dropdown button had tabindex -1)."""
    assert driver.execute_script(_UNREACHABLE) == [], f"controls Tab never reaches on {where}"


def _assert_clean(driver, axe_source: str, where: str) -> None:
    _assert_readable(driver, where)
    _assert_reachable(driver, where)
    found = _violations(driver, axe_source)
    report = "\n".join(f"  {v['id']} ({v['impact']}): {v['help']}\n    " + "\n    ".join(v["targets"][:8])
                       for v in found)
    assert found == [], f"axe-core found {len(found)} WCAG 2.1 AA violation(s) on {where}:\n{report}"


PAGES = [("/", 0, ("overview-summary", "Held-out accuracy")),
         ("/descriptive", 5, ("descriptive-agreement", "Row")),  # 5: permutation importance beside mean |SHAP|
         ("/persuasive", 3, ("persuasive-statement", "(k = 3)")),
         ("/surrogate", 0, ("surrogate-summary", "Agreement with the model")),
         ("/attention", 4, ("attention-notes", "Integrated Gradients")),
         ("/text", 1, None),
         ("/upload", 0, None),
         ("/study-admin", 0, None)]


@pytest.mark.parametrize("path,figures,text", PAGES, ids=[p[0] for p in PAGES])
def test_no_axe_violations(server, browser, axe_source, path, figures, text):
    browser.get(server + path)
    if text:
        wait_text(browser, *text, timeout=90)
    wait_for_figures(browser, timeout=90, minimum=figures)
    _assert_clean(browser, axe_source, path)


def test_no_axe_violations_login_and_study(server, browser, axe_source):
    browser.get(server + "/login")
    _assert_clean(browser, axe_source, "/login")
    browser.get(server + "/study/trust-pilot")
    wait_text(browser, "study-body", "Consent")
    _assert_clean(browser, axe_source, "the study's consent screen")
    browser.execute_script("arguments[0].click();",
                           browser.find_element(By.CSS_SELECTOR, "#study-body input[type=checkbox]"))
    for _screen in ("Instructions", "Case 1"):
        before = browser.find_element(By.ID, "study-body").text
        for group in browser.find_elements(By.CSS_SELECTOR, "#study-body .study-radio"):
            browser.execute_script("arguments[0].click();", group.find_elements(By.CSS_SELECTOR, "input")[0])
        browser.execute_script("arguments[0].click();",
                               browser.find_element(By.CSS_SELECTOR, "#study-body button.btn-primary"))
        deadline = time.time() + 30
        while browser.find_element(By.ID, "study-body").text in ("", before) and time.time() < deadline:
            time.sleep(0.1)
        wait_for_figures(browser, timeout=60, minimum=0)
        _assert_clean(browser, axe_source, f"the study's screen after {before.splitlines()[0]!r}")
    assert severe_console_errors(browser) == []


def _tab_to(driver, predicate, limit: int = 80):
    """Press Tab until the focused element satisfies ``predicate``; return it (or fail naming what was reached)."""
    seen = []
    for _ in range(limit):
        ActionChains(driver).send_keys(Keys.TAB).perform()
        el = driver.switch_to.active_element
        if predicate(el):
            return el
        seen.append(el.get_attribute("id") or el.get_attribute("class") or el.tag_name)
    raise AssertionError(f"not reachable by Tab; focus went through {seen}")


def test_keyboard_reaches_and_operates_dash_controls(server, browser):
    """From the top of the Persuasive page, Tab reaches the k slider (arrow keys move it) and the Values dropdown
    (Enter opens its list); each focused control draws a visible outline."""
    browser.get(server + "/persuasive")
    wait_text(browser, "persuasive-statement", "(k = 3)")
    browser.find_element(By.TAG_NAME, "body").click()
    thumb = _tab_to(browser, lambda el: el.get_attribute("role") == "slider")
    assert thumb.get_attribute("aria-label") == "k: items shown"
    outline = browser.execute_script("const s = getComputedStyle(document.activeElement);"
                                     "return [s.outlineStyle, parseFloat(s.outlineWidth)];")
    assert outline[0] != "none" and outline[1] >= 2
    thumb.send_keys(Keys.ARROW_RIGHT)
    wait_text(browser, "persuasive-statement", "(k = 4)")
    button = _tab_to(browser, lambda el: el.get_attribute("id") == "persuasive-rounding")
    assert button.tag_name == "button"
    assert button.get_attribute("aria-label") == "Values: exact"
    button.send_keys(Keys.ENTER)
    deadline = time.time() + 10
    while not browser.find_elements(By.CSS_SELECTOR, "[role='listbox'], [role='option']") and time.time() < deadline:
        time.sleep(0.1)
    assert browser.find_elements(By.CSS_SELECTOR, "[role='option']"), "Enter did not open the Values list"
    assert severe_console_errors(browser) == []
