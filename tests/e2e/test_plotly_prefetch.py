"""Plotly's script is loaded while a page without figures is read, once (assets/candor_plotly_prefetch.js, issue 23).

The landing page (Model & data) draws no graph, so Dash would load plotly.js only when the reader opens a page with
one; the prefetch loads it once the landing page is quiet, and the page with graphs then uses it: one script
element for plotly.js in the document, never two (a second would evaluate 3.5 MB again).
"""
from __future__ import annotations

import pytest
from selenium.webdriver.common.by import By

from tests.e2e.browser import wait_for_figures, wait_until

pytestmark = pytest.mark.e2e

PLOTLY_SCRIPTS = "return [...document.querySelectorAll('script[src*=\"plotly.min.js\"]')].map(s => s.src);"


def test_the_landing_page_loads_plotly_once_and_the_next_page_uses_it(server, browser):
    browser.get(server + "/")
    wait_until(lambda: browser.execute_script("return !!window.Plotly;"), "plotly.js loaded on the landing page")
    scripts = browser.execute_script(PLOTLY_SCRIPTS)
    assert len(scripts) == 1 and scripts[0].endswith("/_dash-component-suites/plotly/package_data/plotly.min.js")
    assert browser.execute_script(
        "return document.querySelector('script[src*=\"plotly.min.js\"]').dataset.candorPrefetch;") == "plotly"
    assert browser.find_elements(By.CSS_SELECTOR, ".js-plotly-plot") == []  # no page graph asked for it
    browser.execute_script("document.querySelector('a.nav-link[href=\"/descriptive\"]').click();")
    wait_for_figures(browser, minimum=4)
    assert browser.execute_script(PLOTLY_SCRIPTS) == scripts  # the graphs used it: no second load


def test_a_page_with_graphs_loads_plotly_itself_and_the_prefetch_adds_nothing(server, browser):
    browser.get(server + "/descriptive")
    wait_for_figures(browser, minimum=4)
    browser.execute_script("return new Promise(r => setTimeout(r, 1000));")  # the prefetch's quiet ticks
    scripts = browser.execute_script(PLOTLY_SCRIPTS)
    assert len(scripts) == 1
    assert browser.execute_script(
        "return document.querySelector('script[src*=\"plotly.min.js\"]').dataset.candorPrefetch || null;") is None
