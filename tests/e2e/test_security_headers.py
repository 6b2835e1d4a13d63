"""Every page is drawn under the Content-Security-Policy, with no violation and no console error (issue 27).

A CSP violation is not always a SEVERE console entry in headless Chromium (measured: Plotly's refused
``new Function`` showed none), so each page also records the document's ``securitypolicyviolation`` events.
"""
from __future__ import annotations

import time

import pytest
import requests
from selenium.webdriver.common.by import By

from tests.e2e.browser import chromium_driver, severe_console_errors, wait_for_figures, wait_until

pytestmark = pytest.mark.e2e

LISTEN = """window.__cspViolations = [];
document.addEventListener('securitypolicyviolation',
    e => window.__cspViolations.push(e.violatedDirective + ' ' + e.blockedURI + ' ' + e.sourceFile + ':' + e.lineNumber));"""

PAGES = {  # path -> the fewest Plotly figures it draws at the sample's first row
    "/": 0, "/descriptive": 4, "/persuasive": 3, "/surrogate": 1, "/attention": 1, "/text": 1,
    "/upload": 0, "/study-admin": 0, "/study/trust-pilot": 0,
}

WEBGL_SCATTER = """const div = document.createElement('div'); div.id = 'csp-gl'; document.body.appendChild(div);
const x = Array.from({length: 4001}, (_, i) => i), y = x.map(i => (i * 7919) % 101);
window.Plotly.newPlot(div, [{type: 'scattergl', x: x, y: y, mode: 'markers'}])
  .then(() => { window.__glDrawn = 'drawn'; }, e => { window.__glDrawn = 'failed: ' + e; });"""
"""Plotly's own WebGL scatter, 4,001 points (past ``app.views.figures.SVG_MAX_POINTS``, where the app's scatters are
WebGL), drawn in the page the server sent: its regl code compiles with ``new Function``, which the policy refuses
without ``'unsafe-eval'`` (a violation event and no canvas). The sample's own scatters are SVG (143 held-out rows)."""


@pytest.fixture(scope="module")
def watched():
    with chromium_driver(width=1400, height=1000) as driver:
        driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": LISTEN})
        yield driver


def test_the_policy_is_sent(server):
    policy = requests.get(server + "/", timeout=30).headers["Content-Security-Policy"]
    assert "frame-ancestors 'none'" in policy and "script-src 'self' 'sha256-" in policy


@pytest.mark.parametrize("path", list(PAGES))
def test_every_page_is_drawn_under_the_policy(server, watched, path):
    watched.get(server + path)
    drawn = wait_for_figures(watched, timeout=120, minimum=PAGES[path])
    assert drawn >= PAGES[path]
    assert watched.find_elements(By.CSS_SELECTOR, "#_pages_content *")
    if path == "/descriptive":  # a WebGL scatter (regl), as the beeswarm draws past 4,000 dots, under this policy
        watched.execute_script(WEBGL_SCATTER)
        wait_until(lambda: watched.execute_script("return window.__glDrawn"), "the WebGL scatter's promise")
        assert watched.execute_script("return window.__glDrawn") == "drawn"
        assert watched.find_elements(By.CSS_SELECTOR, "#csp-gl canvas.gl-canvas-context")
        assert not [e for e in watched.find_elements(By.CSS_SELECTOR, ".no-webgl") if e.is_displayed()]
    time.sleep(1)  # late callbacks (the frontier's progress, the text page's second figures) report too
    assert watched.execute_script("return window.__cspViolations") == []
    assert severe_console_errors(watched) == []
