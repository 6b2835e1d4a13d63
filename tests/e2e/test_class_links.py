"""In Chromium: a link's ``?class=`` leaves the server's class alone; the note's button switches it (issue 27).

A 3-class model (scikit-learn's wine data) served by ``python -m app``; the local user may switch the class.
"""
from __future__ import annotations

import numpy as np
import pytest
import requests
from selenium.webdriver.common.by import By
from sklearn.datasets import load_wine
from sklearn.ensemble import GradientBoostingClassifier

from tests.byo.conftest import write_pair
from tests.e2e.browser import chromium_driver, severe_console_errors, wait_for_figures, wait_until
from tests.e2e.serving import running_app

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def wine_server(tmp_path_factory):
    data = load_wine(as_frame=True)
    X, y = data.data, np.array(["barolo", "grignolino", "barbera"])[data.target]
    model = GradientBoostingClassifier(n_estimators=20, max_depth=2, random_state=0).fit(X, y)
    m, d = write_pair(tmp_path_factory.mktemp("wine"), model, X.assign(cultivar=y), name="wine")
    env = {"CANDOR_CACHE_DIR": str(tmp_path_factory.mktemp("cache")),
           "CANDOR_STATE_DIR": str(tmp_path_factory.mktemp("state"))}
    with running_app(["--model", str(m), "--data", str(d), "--target", "cultivar"], env,
                     tmp_path_factory.mktemp("log") / "server.log") as base:
        yield base


def _classes(base) -> list:
    return requests.get(base + "/_candor/workspace", timeout=30).json()["classes"]


def test_a_class_link_switches_nothing_until_asked(wine_server):
    assert _classes(wine_server) == ["not grignolino", "grignolino"]
    with chromium_driver() as browser:
        browser.get(wine_server + "/descriptive?class=barolo&row=3")
        wait_for_figures(browser, timeout=120, minimum=4)
        original = ["not grignolino", "grignolino"]
        wait_until(lambda: browser.find_elements(By.ID, "url-class-note") or _classes(wine_server) != original,
                   "the link's class note (or the server's class switched)")
        assert _classes(wine_server) == original  # was: ["not barolo", "barolo"], switched for everyone
        note = browser.find_element(By.ID, "url-class-note")
        assert "This link was made for class 'barolo'; every page explains 'grignolino' now" in note.text
        assert severe_console_errors(browser) == []
        browser.find_element(By.ID, "url-class-switch").click()  # the local user may: an explicit POST
        wait_until(lambda: _classes(wine_server) == ["not barolo", "barolo"], "the switch the user asked for")
