"""While global SHAP is computed (the warm-up, or a class switch computing it live), the Descriptive page's global
panels show a blank figure with the waiting text, not Plotly's empty axes (-1..6 x 0..4) that a new user took for a
broken chart. The answer of the global panels' callback is held back in the browser (``fetch`` wrapped before the
page loads), so the page stays as it is while it waits."""
from __future__ import annotations

import pytest
import requests

from tests.e2e.browser import chromium_driver, wait_until

HOLD_GLOBAL = """
(() => {
    const real = window.fetch;
    window.fetch = function(url, opts) {
        const body = opts && typeof opts.body === "string" ? opts.body : "";
        if (body.includes('"descriptive-global-bar.figure') || body.includes('"id":"descriptive-global-bar"')) {
            window.__held = (window.__held || 0) + 1;
            return new Promise(() => {});  // never answered: the panel waits
        }
        return real.apply(this, arguments);
    };
})();
"""


@pytest.fixture(scope="module")
def held_browser():
    with chromium_driver(width=1400, height=1000) as driver:
        driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": HOLD_GLOBAL})
        yield driver


def _global_panels(driver) -> list:
    return driver.execute_script(
        "return ['descriptive-global-bar', 'descriptive-global-beeswarm'].map(id => {"
        " const g = document.getElementById(id); if (!g || !g.querySelector('.main-svg')) return null;"
        " return [g.querySelectorAll('.xtick, .ytick').length,"
        " Array.from(g.querySelectorAll('.annotation-text')).map(a => a.textContent)]; });")


def test_global_panels_wait_with_a_blank_figure_and_the_waiting_text(server, held_browser):
    wait_until(lambda: requests.get(server + "/_candor/ready", timeout=5).status_code == 200, "the warm-up", 300)
    held_browser.get(server + "/descriptive?beeswarm=on")  # the beeswarm's panel shown: it waits as the bar does
    wait_until(lambda: held_browser.execute_script("return window.__held || 0") > 0, "the global panels' request")
    panels = wait_until(lambda: all(_global_panels(held_browser)) and _global_panels(held_browser), "both panels")
    assert panels == [[0, ["global SHAP is being computed: how far, just below"]]] * 2, panels
