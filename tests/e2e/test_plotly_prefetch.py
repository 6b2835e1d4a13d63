"""Plotly's script is loaded while a page without figures is read, once (assets/candor_plotly_prefetch.js, issue 23).

The landing page (Model & data) draws no graph, so Dash would load plotly.js only when the reader opens a page with
one; the prefetch loads it once the landing page is quiet, and the page with graphs then uses it: one script
element for plotly.js in the document, never two (a second would evaluate 3.5 MB again). The race that made an
earlier version load it twice (a graph mounting while the prefetch's script is still in flight) is forced here by
throttling the browser's network.
"""
from __future__ import annotations

import pytest
from selenium.webdriver.common.by import By

from tests.e2e.browser import chromium_driver, severe_console_errors, wait_for_figures, wait_until

pytestmark = pytest.mark.e2e

PLOTLY_SCRIPTS = "return [...document.querySelectorAll('script[src*=\"plotly.min.js\"]')].map(s => s.src);"
LOADED = "return !!(window.Plotly && window.Plotly.newPlot);"
IN_FLIGHT = ("return !!document.querySelector('script[data-candor-prefetch]') "
             "&& !(window.Plotly && window.Plotly.newPlot);")  # the prefetch's script asked for, not yet run
DESCRIPTIVE = "document.querySelector('a.nav-link[href=\"/descriptive\"]').click();"


def test_the_landing_page_loads_plotly_once_and_the_next_page_uses_it(server, browser):
    browser.get(server + "/")
    wait_until(lambda: browser.execute_script(LOADED), "plotly.js loaded on the landing page")
    scripts = browser.execute_script(PLOTLY_SCRIPTS)
    assert len(scripts) == 1 and scripts[0].endswith("/_dash-component-suites/plotly/package_data/plotly.min.js")
    assert browser.execute_script(
        "return document.querySelector('script[src*=\"plotly.min.js\"]').dataset.candorPrefetch;") == "plotly"
    assert browser.find_elements(By.CSS_SELECTOR, ".js-plotly-plot") == []  # no page graph asked for it
    browser.execute_script(DESCRIPTIVE)
    wait_for_figures(browser, minimum=4)
    assert browser.execute_script(PLOTLY_SCRIPTS) == scripts  # the graphs used it: no second load


def test_graphs_that_mount_while_the_prefetch_is_in_flight_wait_for_it(server):
    # a browser of its own that never waits for a page to load: at this bandwidth chromedriver, waiting for the
    # landing page's load event under the default strategy, held a command past selenium's 120 s read timeout (three
    # times in CI runs, once with no other run beside it); every wait below is bounded instead
    with chromium_driver(page_load_strategy="none") as browser:
        _race(server, browser)


def _race(server, browser) -> None:
    browser.execute_cdp_cmd("Network.enable", {})
    browser.execute_cdp_cmd("Network.setCacheDisabled", {"cacheDisabled": True})
    # 300 kB/s from the start: plotly.js (4.8 MB, served uncompressed) takes about 16 s to arrive, the landing page's
    # scripts (1.5 MB) 5 s, and the Descriptive page's layout is drawn while plotly.js is still on its way
    browser.execute_cdp_cmd("Network.emulateNetworkConditions", {
        "offline": False, "latency": 0, "downloadThroughput": 300_000, "uploadThroughput": 300_000})
    try:
        browser.get(server + "/")  # returns at once (strategy "none")
        wait_until(lambda: browser.execute_script(IN_FLIGHT), "the prefetch's script in flight", 90)
        browser.execute_script(DESCRIPTIVE)  # the graphs mount before plotly.js has arrived
        wait_until(lambda: browser.execute_script(  # its layout drawn: its graphs have asked for plotly.js
            "return location.pathname === '/descriptive' && !!document.getElementById('descriptive-notes');"),
                   "the Descriptive page's layout", 30)
        assert browser.execute_script(IN_FLIGHT), "plotly.js arrived before the graphs mounted: no race was tested"
    finally:
        browser.execute_cdp_cmd("Network.emulateNetworkConditions", {
            "offline": False, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1})
    wait_for_figures(browser, minimum=4, timeout=120)
    assert browser.execute_script(LOADED)
    scripts = browser.execute_script(PLOTLY_SCRIPTS)
    assert len(scripts) == 1, scripts  # the graphs waited for the prefetch's load instead of starting their own
    # every figure shown is drawn with its data (the beeswarm's, hidden until its switch is on, keeps its placeholder)
    shown = browser.execute_script("return [...document.querySelectorAll('#_pages_content .js-plotly-plot')]"
                                   ".filter(g => g.getClientRects().length > 0).map(g => (g._fullData || []).length);")
    assert len(shown) >= 4 and all(shown), shown
    assert severe_console_errors(browser) == []


def test_a_page_with_graphs_loads_plotly_itself_and_the_prefetch_adds_nothing(server, browser):
    browser.get(server + "/descriptive")
    wait_for_figures(browser, minimum=4)
    browser.execute_script("return new Promise(r => setTimeout(r, 1000));")  # the prefetch's quiet ticks
    scripts = browser.execute_script(PLOTLY_SCRIPTS)
    assert len(scripts) == 1
    assert browser.execute_script(
        "return document.querySelector('script[src*=\"plotly.min.js\"]').dataset.candorPrefetch || null;") is None
