"""Drive Debian's headless Chromium through chromedriver (selenium), for tests and screenshots."""
from __future__ import annotations

import contextlib
import shutil
import tempfile
import time

from selenium import webdriver
from selenium.common.exceptions import (NoSuchElementException, SessionNotCreatedException,
                                        StaleElementReferenceException)
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By

FLAGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-dev-shm-usage"]


def find_chromium() -> tuple[str, str]:
    """Paths of chromium and chromedriver; raises RuntimeError naming what is missing."""
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    if not (browser and driver):
        raise RuntimeError("Debian's chromium and chromium-driver are required: apt-get install chromium chromium-driver")
    return browser, driver


@contextlib.contextmanager
def chromium_driver(width: int = 1400, height: int = 1000, page_load_strategy: str = "normal"):
    """A headless Chromium session with browser console logging enabled.

    ``page_load_strategy="none"``: chromedriver answers every command without waiting for a navigation under way to
    load (WebDriver's page load strategies); the default waits for it."""
    browser, driver_path = find_chromium()
    profile = tempfile.mkdtemp(prefix="candor-chromium-")
    opts = webdriver.ChromeOptions()
    opts.binary_location = browser
    for flag in FLAGS + [f"--user-data-dir={profile}", f"--window-size={width},{height}"]:
        opts.add_argument(flag)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    opts.page_load_strategy = page_load_strategy
    driver = _start(driver_path, opts)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def _start(driver_path: str, opts, attempts: int = 3):
    """Start Chromium, retrying a start that fails: on a loaded 2-core machine Chromium sometimes exits before
    chromedriver connects ("SessionNotCreatedException: Chrome instance exited"; two benchmark runs in a row
    failed so and passed when rerun). A browser that never starts still fails, after ``attempts`` tries."""
    for attempt in range(1, attempts + 1):
        try:
            return webdriver.Chrome(service=Service(executable_path=driver_path), options=opts)
        except SessionNotCreatedException:
            if attempt == attempts:
                raise
            time.sleep(2 * attempt)


def wait_for_figures(driver, timeout: float = 30, minimum: int = 1) -> int:
    """Wait until at least ``minimum`` Plotly figures have drawn and nothing is loading; return the count.

    A figure counts once however many ``svg.main-svg`` layers Plotly gave it (two each: counting the layers let one
    drawn figure pass for two).
    """
    deadline = time.time() + timeout
    while time.time() < deadline:
        n = driver.execute_script(
            "return [...document.querySelectorAll('.js-plotly-plot')].filter(p => p.querySelector('.main-svg')).length")
        loading = driver.execute_script(
            "return document.querySelectorAll('[data-dash-is-loading=\"true\"]').length")
        ready = driver.execute_script("return !!document.querySelector('#_pages_content') "
                                      "&& document.querySelector('#_pages_content').children.length > 0")
        if n >= minimum and not loading and ready:
            return n
        time.sleep(0.2)
    raise TimeoutError(f"fewer than {minimum} figures rendered within {timeout} s")


def wait_until(predicate, what: str, timeout: float = 60):
    """Call ``predicate()`` every 0.2 s until it returns something truthy; return that value.

    Raises
    ------
    AssertionError
        Naming ``what`` if ``timeout`` seconds pass first.
    """
    deadline = time.time() + timeout
    while time.time() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.2)
    raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")


def severe_console_errors(driver) -> list[str]:
    """Browser console entries at SEVERE level (JS errors, failed requests)."""
    return [e["message"] for e in driver.get_log("browser") if e.get("level") == "SEVERE"]


def wait_text(driver, element_id: str, needle: str, timeout: float = 60) -> str:
    """Wait until the element's visible text contains ``needle``; return that text.

    Dash re-renders components, so an element found a moment ago may be stale: read it again.
    """
    deadline = time.time() + timeout
    text = ""
    while time.time() < deadline:
        try:
            text = driver.find_element(By.ID, element_id).text
        except (StaleElementReferenceException, NoSuchElementException):
            text = ""
        if needle in text:
            return text
        time.sleep(0.2)
    raise AssertionError(f"{needle!r} not in #{element_id}: {text[:400]!r}")


def svg_text(driver, selector: str) -> str:
    """The text of every SVG element matching ``selector`` (figure titles, legends), retried across redraws."""
    for _ in range(20):
        try:
            return " ".join(e.text for e in driver.find_elements(By.CSS_SELECTOR, selector))
        except StaleElementReferenceException:
            time.sleep(0.1)
    raise AssertionError(f"{selector} kept being redrawn")


_PLOTS = """
const arr = v => (v === undefined || v === null) ? null : Array.from(v);
return [...document.querySelectorAll(arguments[0] + ' .js-plotly-plot')].filter(g => g._fullData).map(g => ({
  alt: (g.layout.meta && g.layout.meta.alt) || '', title: (g._fullLayout.title && g._fullLayout.title.text) || '',
  ticktext: arr(g._fullLayout.xaxis && g._fullLayout.xaxis.ticktext),
  traces: g._fullData.map(t => ({name: t.name, x: arr(t.x), y: arr(t.y), customdata: arr(t.customdata)}))}));
"""


def plot_data(driver, selector: str = "body") -> list[dict]:
    """Every drawn Plotly figure under ``selector``, as drawn: its text alternative, title, x tick texts and each
    trace's name, x, y and customdata (numbers as the browser holds them, float64)."""
    return driver.execute_script(_PLOTS, selector)
