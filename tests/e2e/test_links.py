"""Links (issue 15): every page's state travels in its URL and comes back in a fresh tab; bad parameters are named.

Each page is opened from a link with non-default values for every state parameter of its schema
(:data:`app.shell.url_state.PAGES`, plus the navbar's row); the controls (read from Dash's own layout
state) must hold them, the URL the browser then shows (written by the clientside writer) must hold
them, and that URL opened in a fresh tab must give the same controls.
"""
from __future__ import annotations

import time
from urllib.parse import parse_qs, urlsplit

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from app.shell.pages import ROW_PAGES
from app.shell.url_state import PAGES
from tests.e2e.browser import wait_text

READ = ("try { const n = window.dash_component_api.getLayout(arguments[0]); return n ? n.props[arguments[1]] : null; }"
        " catch (e) { return null; }")  # not rendered yet

# path -> {parameter: (link value(s), the control's value it must give)}; the navbar's row is one parameter of
# every row page (app.callbacks.shell reads it), so it is checked on the two pages that explain a row cheaply
ROW_CHECKED_ON = ("/", "/attention")
LINKS = {
    "/": {"table_page": ("3", 3), "columns": ("2", 2), "row": ("5", 5)},
    "/descriptive": {"beeswarm": ("on", ["on"])},  # players does not apply to the sample: REFUSED_ON_SAMPLE
    "/surrogate": {"foi": (["mean area", "worst radius"], ["mean area", "worst radius"]), "max_rules": ("5", 5),
                   "max_width": ("2", 2), "max_neighborhoods": ("3", 3),
                   "lambdas": ("0.2, 0.1, 0.1, 1, auto", "0.2, 0.1, 0.1, 1, auto"), "point": ("cart|5", "cart|5")},
    "/persuasive": {"k": ("5", 5), "values": ("0.05", "0.05"), "grouping": ("on", ["on"]),
                    "sensitive": (["mean radius"], ["mean radius"]), "rules": ("cart|10", "cart|10"),
                    "rules_shown": ("2", 2), "rules_round": ("2", 2), "rules_plain": ("on", ["on"]),
                    "immutable": (["mean radius"], ["mean radius"])},
    "/attention": {"row": ("9", 9)},
    "/text": {"text": ("the film was a quiet delight", "the film was a quiet delight"), "layer": ("2", 2),
              "heads": (["1", "3"], [1, 3]), "method": ("gxi", "gxi"), "metric": ("kendall", "kendall"),
              "query": ("mean", "mean")},
    "/performance": {"threshold": ("30", 30)},
    "/dependence": {"feature": ("worst radius", "worst radius")},
    "/cohorts": {"cohort": ("mean radius > 15", "mean radius > 15"), "sensitive": (["mean radius"], ["mean radius"])},
}

REFUSED_ON_SAMPLE = {"/descriptive": {"players": ("raw", "children")}}
"""Parameters that do not apply to the sample (path -> {parameter: (link value, the control's default)}): its SHAP
already has the raw columns as players, so ``players=raw`` is named in the note, the control keeps its default and
the URL drops it; applied on a one-hot tree Pipeline (``tests/e2e/test_real_table_links.py``)."""


def _link(path: str, values: dict) -> str:
    from urllib.parse import urlencode

    pairs = [(k, x) for k, (v, _) in values.items() for x in (v if isinstance(v, list) else [v])]
    return path + "?" + urlencode(pairs)


def _where(path: str, name: str) -> tuple[str, str]:
    """(component, property) the parameter's value is read back from in the browser."""
    if name == "row":
        return "row-input", "value"
    p = {p.name: p for p in PAGES[path]}[name]
    return p.source or (p.component, p.prop)


def _control(driver, path: str, name: str):
    cid, prop = _where(path, name)
    value = driver.execute_script(READ, cid, prop)
    if name == "text":
        return (value or {}).get("text")
    if name == "point":  # the shown surrogate's key: "<frontier key>|method|budget"
        return "|".join(value.split("|")[1:]) if value and "|" in value else None
    return value


def _controls(driver, path: str, names, timeout: float = 150) -> dict:
    """Every parameter's control value once all of them hold their link's value (or the timeout)."""
    deadline = time.time() + timeout
    while True:
        got = {n: _control(driver, path, n) for n in names}
        if got == {n: LINKS[path][n][1] for n in names} or time.time() > deadline:
            return got
        time.sleep(0.5)


def _query(driver) -> dict:
    return parse_qs(urlsplit(driver.current_url).query, keep_blank_values=True)


def test_every_state_parameter_is_declared_here():
    """The round trip below covers each page's whole schema (a parameter added later must be added here)."""
    for path, params in PAGES.items():
        assert set(ROW_CHECKED_ON) <= set(ROW_PAGES)
        names = {p.name for p in params} | ({"row"} if path in ROW_CHECKED_ON else set())
        assert set(LINKS[path]) | set(REFUSED_ON_SAMPLE.get(path, {})) == names, path


@pytest.mark.parametrize("path", [path for path, values in LINKS.items() if values])
def test_link_round_trip_restores_every_parameter(server, browser, path):
    values = LINKS[path]
    browser.get(server + _link(path, values))
    first = _controls(browser, path, values)
    assert first == {n: v for n, (_, v) in values.items()}
    assert browser.find_element(By.ID, "url-note").text == ""
    deadline = time.time() + 30  # the writer has put every control's value in the URL
    while not set(values) <= set(_query(browser)) and time.time() < deadline:
        time.sleep(0.3)
    copied = browser.current_url
    q = _query(browser)
    for name, (given, _) in values.items():
        assert q[name] == (given if isinstance(given, list) else [given]), name
    first_tab = browser.current_window_handle
    browser.switch_to.new_window("tab")
    try:
        browser.get(copied)
        assert _controls(browser, path, values) == first
    finally:
        browser.close()
        browser.switch_to.window(first_tab)


@pytest.mark.parametrize("path", list(REFUSED_ON_SAMPLE))
def test_a_parameter_moot_for_the_model_is_named_and_left_out(server, browser, path):
    browser.get(server + _link(path, {**REFUSED_ON_SAMPLE[path], "row": ("5", 5)}))
    note = wait_text(browser, "url-note", "ignored", timeout=60)
    assert note.count("\n") == 0  # one line
    for name, (given, default) in REFUSED_ON_SAMPLE[path].items():
        assert f"{name}={given}: not a choice for this model" in note
        assert _control(browser, path, name) == default
    deadline = time.time() + 30  # the writer has rewritten the URL: the row kept, the moot parameter gone
    while set(REFUSED_ON_SAMPLE[path]) & set(_query(browser)) and time.time() < deadline:
        time.sleep(0.3)
    q = _query(browser)
    assert q["row"] == ["5"] and not set(REFUSED_ON_SAMPLE[path]) & set(q)


def test_a_control_change_rewrites_the_url_without_reloading(server, browser):
    browser.get(server + "/persuasive?row=7")
    wait_text(browser, "persuasive-rules-cost", "Agreement", timeout=120)
    browser.execute_script("window.__candor_same_page = true;")
    box = browser.find_element(By.ID, "persuasive-rules-keep")
    box.send_keys(Keys.CONTROL, "a")
    box.send_keys("1")
    deadline = time.time() + 20
    while _query(browser).get("rules_shown") != ["1"] and time.time() < deadline:
        time.sleep(0.2)
    assert _query(browser)["rules_shown"] == ["1"] and _query(browser)["row"] == ["7"]
    assert browser.execute_script("return window.__candor_same_page === true;")  # no reload


def test_bad_parameters_are_named_and_ignored(server, browser):
    browser.get(server + "/persuasive?k=abc&colour=red&row=99999&sensitive=no%20such%20feature&values=0.05")
    note = wait_text(browser, "url-note", "ignored", timeout=60)
    for part in ("k=abc: not a whole number", "colour: not a setting of this page", "row=99999: outside 0–568",
                 "sensitive=no such feature: no feature named 'no such feature'"):
        assert part in note
    assert "values" not in note
    assert note.count("\n") == 0  # one line
    assert _control(browser, "/persuasive", "values") == "0.05"  # the good parameter still applies
    assert _control(browser, "/persuasive", "k") == 3  # the page's default
    wait_text(browser, "persuasive-statement", "What a reader is told", timeout=90)  # the page still explains
    q = _query(browser)
    assert "colour" not in q and "k" not in q and q["values"] == ["0.05"]  # the URL now says what the page shows
