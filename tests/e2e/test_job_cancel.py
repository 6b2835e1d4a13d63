"""The Surrogate page's "Fit MUSE" job in headless Chromium (issue 14): progress shows done/total, Cancel ends the
job's process, and the buttons say so (Fit MUSE enabled again, Cancel disabled).

"Fit MUSE" is one background job (MUSE, then the frontier of its settings); before, the frontier ran as a
second job that Cancel no longer reached once MUSE was fitted, with Fit MUSE enabled again meanwhile.
"""
from __future__ import annotations

import time
from urllib.parse import urlparse

import psutil
import requests
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from tests.e2e.browser import wait_until


def _server_process(base: str) -> psutil.Process:
    port = urlparse(base).port
    for conn in psutil.net_connections(kind="tcp"):
        if conn.status == psutil.CONN_LISTEN and conn.laddr.port == port and conn.pid:
            return psutil.Process(conn.pid)
    raise AssertionError(f"no process listens on port {port}")


def _disabled(driver, element_id: str) -> bool:
    return driver.execute_script(f"return document.getElementById('{element_id}').disabled;")


def test_fit_muse_reports_progress_and_cancel_ends_its_process(server, browser):
    wait_until(lambda: requests.get(server + "/_candor/ready", timeout=5).status_code == 200, "the warm-up", 300)
    server_proc = _server_process(server)
    browser.get(server + "/surrogate")
    wait_until(lambda: browser.find_elements(By.CSS_SELECTOR, "#surrogate-frontier .main-svg")
          and _disabled(browser, "surrogate-cancel") and not _disabled(browser, "surrogate-fit"), "the page", 120)
    assert not browser.find_element(By.ID, "surrogate-wait").text  # warm: nothing to wait for
    width = browser.find_element(By.ID, "surrogate-max-width")  # settings not fitted yet: a real job
    width.send_keys(Keys.CONTROL, "a")
    width.send_keys("2")
    before = {p.pid for p in server_proc.children(recursive=True)}
    browser.find_element(By.ID, "surrogate-fit").click()
    # 12 fits: MUSE at its default 10 rules is also the frontier's point at budget 10, read, not fitted again
    label = wait_until(lambda: (t := browser.find_element(By.ID, "surrogate-progress-label").text) and " of 12" in t
                       and t, "the job's progress", 120)
    assert label.startswith("MUSE and its frontier: ") and label.split(": ")[1].split(" of ")[0].isdigit(), label
    # the label sits beside the bar, whole (inside it a new user read "MUSE and its fr")
    assert browser.execute_script(
        "const bar = document.getElementById('surrogate-progress'),"
        " label = document.getElementById('surrogate-progress-label');"
        " return !bar.contains(label) && label.scrollWidth <= label.clientWidth + 1"
        " && label.getBoundingClientRect().width > 0;")
    jobs = wait_until(lambda: [p for p in server_proc.children(recursive=True) if p.pid not in before], "the job's process")
    assert _disabled(browser, "surrogate-fit") and not _disabled(browser, "surrogate-cancel")
    browser.find_element(By.ID, "surrogate-cancel").click()
    wait_until(lambda: not any(p.is_running() and p.status() != psutil.STATUS_ZOMBIE for p in jobs), "the job to end", 30)
    wait_until(lambda: not _disabled(browser, "surrogate-fit") and _disabled(browser, "surrogate-cancel"),
          "Fit MUSE enabled and Cancel disabled", 30)
    assert not browser.find_element(By.ID, "surrogate-progress-box").is_displayed()  # no stale bar after a cancel
    time.sleep(2)  # nothing restarts it, and no second job keeps the buttons busy
    assert not _disabled(browser, "surrogate-fit") and _disabled(browser, "surrogate-cancel")
    assert not [p for p in server_proc.children(recursive=True) if p.pid not in before and p.is_running()
                and p.status() != psutil.STATUS_ZOMBIE]


def test_a_refit_that_ends_hides_its_progress_at_once(server, browser):
    """A new user's refit of cached settings ended (the Method line said so) while the bar stayed at
    "1 of 13 surrogates fitted, about 2 s left" for 20 s and more: once the job ends the bar is gone."""
    wait_until(lambda: requests.get(server + "/_candor/ready", timeout=5).status_code == 200, "the warm-up", 300)
    browser.get(server + "/surrogate")
    wait_until(lambda: browser.find_elements(By.CSS_SELECTOR, "#surrogate-frontier .main-svg")
               and _disabled(browser, "surrogate-cancel") and not _disabled(browser, "surrogate-fit"), "the page", 120)
    wait_until(lambda: not browser.find_element(By.ID, "surrogate-progress-box").is_displayed(), "no job's bar", 60)
    # the default settings: MUSE and the frontier are cached, so the job ends within a second or two;
    # an observer records that it ran (Fit MUSE disabled, then enabled again) however short it was
    browser.execute_script(
        "window.__fit = []; const b = document.getElementById('surrogate-fit');"
        " new MutationObserver(() => window.__fit.push(b.disabled)).observe(b, {attributes: true});")
    browser.find_element(By.ID, "surrogate-fit").click()
    wait_until(lambda: (seen := browser.execute_script("return window.__fit;")) and True in seen
               and not _disabled(browser, "surrogate-fit"), "the job to run and end", 120)
    assert _disabled(browser, "surrogate-cancel")
    assert not browser.find_element(By.ID, "surrogate-progress-box").is_displayed(), \
        browser.find_element(By.ID, "surrogate-progress-label").get_attribute("textContent")
