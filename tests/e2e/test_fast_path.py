"""A row change costs one Dash request (issue 14), counted in headless Chromium with the benchmarks' probe.

"Random row" picks a held-out row in the browser and each row page's one callback sends its panels and
the navbar's status line together; these tests count the ``_dash-update-component`` requests a click
starts and the bytes they carry (deterministic: no timings are asserted here, those are in
``benchmarks.vs_peer``).
"""
from __future__ import annotations

import re
import time

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from benchmarks import browser_timing as bt

EXPLAIN = "overview-explain-links"
PLOTS = bt.VISIBLE_PLOTS.strip().removeprefix("return ").rstrip(";")
ROW_PAGE_BYTES = 60_000
"""What one row change may send back on the Descriptive page (two figures, two cards, the status line)."""


@pytest.fixture(scope="module")
def probed(browser):
    bt.install_probe(browser)
    return browser


def _settle(driver, drawn: str, before: int | None = None) -> dict:
    return bt.wait_settled(driver, drawn, since_started=before, timeout=240)


def _row(driver) -> int:
    return int(driver.find_element(By.ID, "row-input").get_attribute("value"))


def _click_random(driver, drawn: str) -> list[dict]:
    bt.reset_click(driver)
    before = bt.click(driver, "document.getElementById('row-random')")
    _settle(driver, drawn, before)
    return bt.requests_since(driver, before)


GLOBAL_DRAWN = "!document.querySelector('#descriptive-global-note .spinner-border, #descriptive-global-methods .spinner-border')"
"""The Descriptive page's global panels drawn: while the warm-up computes them they poll once a second (requests of
their own, not of a click; the suite's load once kept them polling through the clicks)."""


def test_a_row_change_on_the_descriptive_page_is_one_request(server, probed):
    drawn = f"return ({PLOTS}) >= 4 && document.getElementById('row-status').innerText.length > 0 && {GLOBAL_DRAWN};"
    probed.get(server + "/descriptive?row=7")
    _settle(probed, drawn)
    assert _row(probed) == 7  # the URL's row
    seen = {7}
    for _ in range(2):
        sent = _click_random(probed, drawn)
        row = _row(probed)
        assert len(sent) == 1, [r["output"] for r in sent]  # before: the pick, then status, panels, stability: 4
        assert "descriptive-shap-waterfall.figure" in sent[0]["output"]
        assert "row-status-data" in sent[0]["output"]
        assert 0 < sent[0]["received"] <= ROW_PAGE_BYTES, sent[0]["received"]
        assert row not in seen  # a new row each click
        seen.add(row)
        status = probed.find_element(By.ID, "row-status").text
        assert status.startswith("held-out · true "), status  # picked among the held-out rows, status arrived
        assert re.search(rf"[?&]row={row}(&|$)", probed.current_url), probed.current_url  # URL follows, no request
    box = probed.find_element(By.ID, "row-input")
    before = bt.state(probed)["started"]
    box.send_keys(Keys.CONTROL, "a")
    box.send_keys("12\n")  # the box is debounced: Enter commits the value
    _settle(probed, drawn, before)
    sent = bt.requests_since(probed, before)
    assert len(sent) == 1, [r["output"] for r in sent]
    deadline = time.time() + 10
    while "row=12" not in probed.current_url and time.time() < deadline:
        time.sleep(0.1)
    assert "row=12" in probed.current_url and _row(probed) == 12


def test_the_landing_page_asks_nothing_for_its_row_and_a_new_row_is_one_request(server, probed):
    """Model & data comes with its opening row's links and navbar status (the URL's row): no request of its own for
    them (they were the landing page's last request, 110 ms of Adult's landing); navigating there with another
    row in the box asks for that row once."""
    drawn = "return document.querySelectorAll('#overview-table tbody tr').length > 1;"
    probed.get(server + "/?row=9")
    _settle(probed, drawn)
    sent = [r["output"] for r in bt.requests_since(probed, 0)]
    assert not any("overview-explain-links" in o for o in sent), sent
    assert probed.find_element(By.ID, EXPLAIN).text.startswith("Row 9:")
    assert probed.find_element(By.ID, "row-status").text.startswith("train · true ")  # row 9 is a training row
    probed.get(server + "/descriptive?row=12")
    _settle(probed, f"return ({PLOTS}) >= 4;")
    before = bt.state(probed)["started"]
    probed.find_element(By.CSS_SELECTOR, "a.nav-link[href='/']").click()  # the navbar's link: no row in it
    bt.wait_settled(probed, f"return document.getElementById('{EXPLAIN}') !== null && "
                            f"document.getElementById('{EXPLAIN}').innerText.startsWith('Row 12:');",
                    since_started=before, timeout=60)
    assert sum("overview-explain-links" in r["output"] for r in bt.requests_since(probed, before)) == 1


def test_a_table_click_chooses_its_row_in_one_request(server, probed):
    drawn = "return document.querySelectorAll('#overview-table tbody tr').length > 1;"
    probed.get(server + "/")
    _settle(probed, drawn)
    before = bt.state(probed)["started"]
    rows = [tr for tr in probed.find_elements(By.CSS_SELECTOR, "#overview-table tbody tr")
            if tr.find_elements(By.CSS_SELECTOR, "td")]
    rows[1].find_elements(By.CSS_SELECTOR, "td")[1].click()  # the second row of the first page: row 1
    bt.wait_settled(probed, "return document.getElementById('overview-explain-links').innerText.startsWith('Row 1:');",
                    since_started=before, timeout=60)
    sent = bt.requests_since(probed, before)
    assert len(sent) == 1, [r["output"] for r in sent]  # before: the cell to the row, then links and status: 3
    assert _row(probed) == 1
    assert probed.find_element(By.ID, "row-status").text.startswith("train · true ")


def test_random_row_keys_and_seed_the_same_rows_after_a_reload(server, probed):
    """"Random row" from the keyboard (Enter and Space on the focused button) picks as a click does, one request
    each, and the picks follow the click count: a reloaded page picks the same rows in the same order (oracle:
    the first visit's picks)."""
    drawn = f"return ({PLOTS}) >= 4 && document.getElementById('row-status').innerText.length > 0;"
    first = []
    for keys in (Keys.ENTER, Keys.SPACE, Keys.ENTER):
        if not first:
            probed.get(server + "/descriptive?row=7")
            _settle(probed, drawn)
        before = bt.state(probed)["started"]
        probed.find_element(By.ID, "row-random").send_keys(keys)
        _settle(probed, drawn, before)
        assert len(bt.requests_since(probed, before)) == 1
        first.append(_row(probed))
    assert len(set(first)) == 3 and 7 not in first
    probed.get(server + "/descriptive?row=7")
    _settle(probed, drawn)
    again = [(_click_random(probed, drawn), _row(probed))[1] for _ in range(3)]
    assert again == first
