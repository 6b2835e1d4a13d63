"""In Chromium: a refused action says on the page, in one line, what it needs (issue 27).

The server refuses callbacks before Dash runs them (app/serve/access.py: 403, 413); Dash's renderer only logged
those in the console, so a viewer's click on a stale page, or an upload over a limit, showed nothing.
``assets/candor_refusals.js`` shows the server's line. The controls are driven with Dash's own
``dash_clientside.set_props``, as a page rendered before a role changed (or a crafted click) would.
"""
from __future__ import annotations

import pytest
from selenium.webdriver.common.by import By

from accounts.users import add_user
from tests.e2e.browser import chromium_driver, wait_until
from tests.e2e.serving import running_app

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def guarded_server(tmp_path_factory):
    folder = tmp_path_factory.mktemp("users")
    add_user(folder / "users", "vera", "viewer", "vera-pass-123")
    add_user(folder / "users", "ann", "analyst", "ann-pass-1234")
    env = {"CANDOR_USERS_FILE": str(folder / "users"), "CANDOR_SESSION_DB": str(folder / "sessions.sqlite3"),
           "CANDOR_CACHE_DIR": str(tmp_path_factory.mktemp("cache")), "CANDOR_MAX_UPLOAD_MB": "1",
           "CANDOR_STATE_DIR": str(tmp_path_factory.mktemp("state")), "CANDOR_WARM": "0"}
    with running_app([], env, tmp_path_factory.mktemp("log") / "server.log") as base:
        yield base


def _log_in(browser, base, name, password):
    browser.delete_all_cookies()
    browser.get(base + "/login")
    browser.find_element(By.ID, "username").send_keys(name)
    browser.find_element(By.ID, "password").send_keys(password)
    browser.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    wait_until(lambda: "/login" not in browser.current_url, f"{name}'s login")


def _open_upload_page(browser, base):
    browser.get(base + "/upload")
    wait_until(lambda: browser.find_elements(By.ID, "upload-model"), "the upload page")


def _refusal(browser) -> str:
    return wait_until(lambda: "".join(e.text for e in browser.find_elements(By.ID, "candor-refusal")),
                      "the refusal's line on the page")


def _upload(browser, n_bytes: int) -> None:
    browser.execute_script(
        "window.dash_clientside.set_props('upload-model', {filename: 'm.skops', "
        "contents: 'data:application/octet-stream;base64,' + 'A'.repeat(arguments[0])});", n_bytes)


def test_a_viewer_is_told_which_role_an_action_needs(guarded_server):
    with chromium_driver() as browser:
        _log_in(browser, guarded_server, "vera", "vera-pass-123")
        _open_upload_page(browser, guarded_server)
        assert not browser.find_elements(By.ID, "candor-refusal"), _refusal(browser)
        browser.execute_script("window.dash_clientside.set_props('upload-sample', {n_clicks: 1});")
        line = _refusal(browser)
        assert "This needs the analyst role; you are logged in as vera (viewer)" in line
        assert browser.find_element(By.ID, "candor-refusal").get_attribute("role") == "alert"
        assert "\n" not in line.strip()
        _upload(browser, 1_500_000)  # over the 1,024 KiB a non-analyst's request may have
        wait_until(lambda: "1,024 KiB" in _refusal(browser), "the size refusal")
        assert "uploads need the analyst role" in _refusal(browser)


def test_opening_a_page_as_a_viewer_is_refused_nothing(guarded_server):
    """Found with the hook: a viewer opening /upload was refused twice (its buttons' callbacks were called when
    the page was drawn) and opening /surrogate once (the default frontier's first call has no changed input)."""
    with chromium_driver() as browser:
        _log_in(browser, guarded_server, "vera", "vera-pass-123")
        for path, ready in (("/upload", "upload-model"), ("/surrogate", "surrogate-progress-box")):
            browser.execute_cdp_cmd("Network.enable", {})
            browser.get(guarded_server + path)
            wait_until(lambda: browser.find_elements(By.ID, ready), path)
            wait_until(lambda: browser.execute_script(
                "return !document.querySelector('[data-dash-is-loading=\"true\"]')"), f"{path} drawn")
            refused = [e["message"] for e in browser.get_log("browser") if "403" in e["message"]]
            assert refused == [] and not browser.find_elements(By.ID, "candor-refusal"), (path, refused)


def test_an_upload_over_the_limit_names_the_limit(guarded_server):
    with chromium_driver() as browser:
        _log_in(browser, guarded_server, "ann", "ann-pass-1234")
        _open_upload_page(browser, guarded_server)
        _upload(browser, 3_000_000)  # over 4/3 of CANDOR_MAX_UPLOAD_MB=1 plus 1 MiB: waitress's 413
        line = _refusal(browser)
        assert "The request is larger than the 1 MiB upload limit (CANDOR_MAX_UPLOAD_MB)" in line
