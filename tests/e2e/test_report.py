"""The review report in real headless Chromium: opened offline from a file, it draws every figure and requests
nothing; printed by :func:`app.report.pdf.print_pdf` it is a PDF of several pages."""
from __future__ import annotations

import json
import re
import shutil
import tempfile
import time

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By

from tests.e2e.browser import FLAGS, find_chromium


@pytest.fixture(scope="module")
def report_file(sample_workspace, tmp_path_factory):
    """The sample's report for row 3 (the default rows' computation is covered in tests/app/test_report.py)."""
    from app.report.content import report_content
    from app.report.render import expected_figures, render_html
    from workspace import settings

    folder = tmp_path_factory.mktemp("report")
    with settings.overridden(cache_dir=folder / "cache"):
        content = report_content([3])
        path = folder / "review.html"
        path.write_text(render_html(content), encoding="utf-8")
    return path, expected_figures(content)


@pytest.fixture(scope="module")
def offline_browser():
    """Headless Chromium with the network emulated offline and every request it sees logged (CDP Network)."""
    browser, driver_path = find_chromium()
    profile = tempfile.mkdtemp(prefix="candor-chromium-")
    opts = webdriver.ChromeOptions()
    opts.binary_location = browser
    for flag in FLAGS + [f"--user-data-dir={profile}", "--window-size=1400,1000"]:
        opts.add_argument(flag)
    opts.set_capability("goog:loggingPrefs", {"performance": "ALL", "browser": "ALL"})
    driver = webdriver.Chrome(service=Service(executable_path=driver_path), options=opts)
    try:
        driver.execute_cdp_cmd("Network.enable", {})
        driver.execute_cdp_cmd("Network.emulateNetworkConditions", {"offline": True, "latency": 0,
                                                                    "downloadThroughput": -1, "uploadThroughput": -1})
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def _requests(driver) -> list[str]:
    urls = []
    for entry in driver.get_log("performance"):
        msg = json.loads(entry["message"])["message"]
        if msg["method"] == "Network.requestWillBeSent":
            urls.append(msg["params"]["request"]["url"])
    return urls


def test_report_opens_offline_draws_every_figure_and_requests_nothing(report_file, offline_browser):
    path, expected = report_file
    driver = offline_browser
    # model performance (ROC, precision-recall, calibration, confusion at 0.5), global SHAP, permutation importance,
    # the surrogate's confusion, the held-out curve, the Cohorts page's two; row 3: descriptive bars, the story, its tradeoff
    assert expected == 4 + 4 + 2 * 3 + 2 + 3  # ... 2 for each of the 3 dependence views, the Cohorts page's 2
    driver.get_log("performance")  # the blank start page's own chrome:// requests: not the report's
    driver.get(path.as_uri())
    deadline = time.time() + 60
    while time.time() < deadline and driver.execute_script(
            "return document.body && document.body.getAttribute('data-figures-drawn')") is None:
        time.sleep(0.2)
    assert driver.execute_script("return document.body.getAttribute('data-figures-drawn')") == str(expected)
    drawn = driver.execute_script(
        "return Array.from(document.querySelectorAll('.js-plotly-plot'))"
        ".filter(p => p.querySelector('svg.main-svg g.trace, svg.main-svg .hm, canvas.gl-canvas-context') !== null)"
        ".length")  # a WebGL scatter (the Dependence page's) draws into a canvas, not an SVG trace
    assert drawn == expected
    bars = driver.find_elements(By.CSS_SELECTOR, ".js-plotly-plot g.point path")
    assert len(bars) >= 30  # bars were drawn, not empty axes
    requests = _requests(driver)
    # the document itself, and plotly's inline data: images (the heatmap), nothing fetched from anywhere
    assert [u for u in requests if not u.startswith("data:")] == [path.as_uri()]
    assert [e for e in driver.get_log("browser") if e.get("level") == "SEVERE"] == []


def test_report_prints_to_a_pdf_of_several_pages(report_file, tmp_path):
    from app.report.pdf import print_pdf

    path, _ = report_file
    pdf = tmp_path / "review.pdf"
    print_pdf(path, pdf)
    data = pdf.read_bytes()
    assert data[:5] == b"%PDF-"
    pages = len(re.findall(rb"/Type\s*/Page(?!s)", data))
    assert pages > 1


def test_tradeoff_axis_titles_clear_their_legends(report_file, offline_browser):
    """A new user saw 'k (features shown = concepts named)' drawn over both fidelity curves' legends in the
    report (drawn at the page's 260 px minimum; the legend sits 0.3 of the plot's height below it)."""
    path, _ = report_file
    driver = offline_browser
    driver.get(path.as_uri())
    deadline = time.time() + 60
    while time.time() < deadline and driver.execute_script(
            "return document.body && document.body.getAttribute('data-figures-drawn')") is None:
        time.sleep(0.2)
    boxes = driver.execute_script("""
        return Array.from(document.querySelectorAll('.js-plotly-plot')).map(p => {
          const t = p.querySelector('.g-xtitle text'), l = p.querySelector('g.legend');
          if (!t || !l) return null;
          const a = t.getBoundingClientRect(), b = l.getBoundingClientRect();
          return {title: t.textContent, t: [a.left, a.top, a.right, a.bottom], l: [b.left, b.top, b.right, b.bottom]};
        }).filter(x => x !== null && /concepts named/.test(x.title));""")
    assert len(boxes) == 2, boxes  # the held-out curve and row 3's tradeoff
    for box in boxes:
        (tl, tt, tr, tb), (ll, lt, lr, lb) = box["t"], box["l"]
        overlap = min(tr, lr) > max(tl, ll) and min(tb, lb) > max(tt, lt)
        assert not overlap and lt >= tb, box  # the legend starts below the axis title
