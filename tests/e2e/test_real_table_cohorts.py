"""Issue 25's row-and-group views in headless Chromium on a real table: UCI Adult (the session's ``adult_server``,
tests/e2e/conftest.py). Each test checks what the page shows on its own: a cohort's rows and accuracy against a
pandas group-by (a cohort from its link, another typed), fairness rates by sex (picked by keyboard) against a
group-by, and the story test's counterfactuals (run by keyboard, sex held fixed) by calling the model on each:
it flips the decision, stays within the training rows' values, keeps sex, and its distance is as stated."""
from __future__ import annotations

import re
from urllib.parse import parse_qs, quote, urlsplit

import numpy as np
import pandas as pd
import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from explainers.numbers import plain
from tests.e2e.browser import plot_data, severe_console_errors, wait_for_figures, wait_text, wait_until
from tests.e2e.conftest import ADULT_NUMERIC
from tests.e2e.test_wcag_axe import _tab_to

pytestmark = pytest.mark.e2e

ROW = 17


def _held_out(a) -> pd.DataFrame:
    """The held-out rows with the model's label and whether it is right (what the Cohorts page measures)."""
    X, y = a.rows()
    called = a.p(X) >= 0.5
    return X.assign(truth=y, called=called, correct=called == y)


def _table(driver, element_id: str) -> list[list[str]]:
    return [[td.text for td in tr.find_elements(By.TAG_NAME, "td")]
            for tr in driver.find_elements(By.CSS_SELECTOR, f"#{element_id} tbody tr")]


def test_adult_cohort_accuracy_equals_a_pandas_group_by(adult_server, browser):
    d, a = browser, adult_server
    rows = _held_out(a)
    cohort = "age > 40; marital-status == Married-civ-spouse"
    d.get(f"{a.base}/cohorts?cohort={quote(cohort)}")
    note = wait_text(d, "cohort-note", f"Your cohort: {cohort}", timeout=300)
    inside = rows.assign(inside=(rows.age > 40) & (rows["marital-status"] == "Married-civ-spouse"))
    by = inside.groupby("inside").correct.agg(["size", "mean"])
    assert note.endswith(f"{by.loc[True, 'size']} of 300 held-out rows"), note
    name, n, accuracy = _table(d, "cohort-table")[0][:3]
    assert (name, n) == (f"Your cohort: {cohort}", str(by.loc[True, "size"]))
    assert accuracy.startswith(f"{by.loc[True, 'mean']:.3f} ["), accuracy
    wait_for_figures(d, minimum=2, timeout=60)
    leaves = [r for r in _table(d, "cohort-leaves") if r[0].startswith("Leaf")]
    sizes = [int(r[1].replace(",", "")) for r in leaves]
    right = sum(s * float(r[2].split(" ")[0]) for s, r in zip(sizes, leaves))
    assert sum(sizes) == 300 and abs(right - rows.correct.sum()) <= 0.0005 * 300  # the leaves cover every row

    box = d.find_element(By.ID, "cohort-filter")  # another cohort, typed: Enter applies it
    d.execute_script("arguments[0].focus(); arguments[0].select();", box)
    box.send_keys("sex == Female", Keys.ENTER)
    note = wait_text(d, "cohort-note", "Your cohort: sex == Female", timeout=60)
    by = rows.groupby("sex").correct.agg(["size", "mean"])
    assert note.endswith(f"{by.loc['Female', 'size']} of 300 held-out rows"), note
    wait_until(lambda: _table(d, "cohort-table")[0][0] == "Your cohort: sex == Female", "the cohort's row", 30)
    assert _table(d, "cohort-table")[0][2].startswith(f"{by.loc['Female', 'mean']:.3f} [")
    wait_until(lambda: parse_qs(urlsplit(d.current_url).query).get("cohort") == ["sex == Female"], "the URL", 10)
    assert severe_console_errors(d) == []


CONDITION = re.compile(r"^(.+?) (<=|>|==|in) (.+)$")


def _leaf_rows(rows: pd.DataFrame, text: str) -> pd.Series:
    """Which raw rows satisfy a leaf's conditions as the page writes them (numbers compared, levels as a set)."""
    inside = pd.Series(True, index=rows.index)
    for part in text.split("; "):
        feature, op, value = CONDITION.match(part).groups()
        col = rows[feature]
        if feature in ADULT_NUMERIC:
            inside &= col <= float(value) if op == "<=" else col > float(value)
        else:
            assert op in ("==", "in"), f"a category compared by order: {part}"
            inside &= col.fillna("(missing)").isin(value.split(", "))
    return inside


def test_adult_error_tree_leaf_on_a_category_becomes_its_cohort(adult_server, browser):
    d, a = browser, adult_server
    rows = _held_out(a)
    d.get(f"{a.base}/cohorts")
    wait_text(d, "cohort-leaves", "Leaf 1", timeout=300)
    texts = dict(li.text.split(": ", 1) for li in d.find_elements(By.CSS_SELECTOR, "#cohort-leaves li"))
    leaf = next(name for name, text in texts.items() if "marital-status" in text or "occupation" in text)
    d.find_element(By.ID, "cohort-leaf").click()  # the leaf picker: its option sets the cohort's conditions
    wait_until(lambda: [o for o in d.find_elements(By.CSS_SELECTOR, "[role='option']")
                        if o.text.startswith(f"{leaf}: ")], "the leaf's option", 10)[0].click()
    note = wait_text(d, "cohort-note", f"Your cohort: {texts[leaf]}", timeout=60)
    inside = _leaf_rows(rows, texts[leaf])
    by = rows.assign(inside=inside).groupby("inside").correct.agg(["size", "mean"])
    assert note.endswith(f"{by.loc[True, 'size']} of 300 held-out rows"), note
    assert _table(d, "cohort-table")[0][2].startswith(f"{by.loc[True, 'mean']:.3f} [")
    wait_until(lambda: parse_qs(urlsplit(d.current_url).query).get("cohort") == [texts[leaf]], "the URL", 10)
    assert severe_console_errors(d) == []


def test_adult_fairness_by_sex_picked_by_keyboard_equals_a_group_by(adult_server, browser):
    d, a = browser, adult_server
    rows = _held_out(a)
    d.get(f"{a.base}/cohorts")
    wait_text(d, "cohort-note", "All held-out rows · 300 of 300", timeout=300)
    d.find_element(By.ID, "cohort-filter").click()  # just before the pickers in the Tab order
    picker = _tab_to(d, lambda el: el.get_attribute("id") == "cohort-sensitive")
    picker.send_keys(Keys.ENTER)
    search = wait_until(lambda: "dash-dropdown-search" in (d.switch_to.active_element.get_attribute("class") or "")
                        and d.switch_to.active_element, "the picker's search box", 10)
    search.send_keys("sex")
    wait_until(lambda: [o.text for o in d.find_elements(By.CSS_SELECTOR, "[role='option']")] == ["sex"],
               "the list narrowed to sex", 10)
    search.send_keys(Keys.ENTER)
    search.send_keys(Keys.ESCAPE)
    text = wait_text(d, "cohort-fairness", "Fairness by sex", timeout=120)
    wait_until(lambda: plot_data(d, "#cohort-fairness"), "the rates figure", 30)
    traces = {t["name"]: t for t in plot_data(d, "#cohort-fairness")[0]["traces"]}
    groups = rows.groupby("sex")
    expected = {"selection rate": groups.called.mean(),
                "true positive rate": rows[rows.truth].groupby("sex").called.mean(),
                "false positive rate": rows[~rows.truth].groupby("sex").called.mean()}
    for name, rate in expected.items():
        assert traces[name]["x"] == ["Female", "Male"], traces[name]["x"]
        np.testing.assert_allclose(traces[name]["y"], rate.loc[["Female", "Male"]].to_numpy(), atol=1e-12)
    gaps = {r[0]: r[1:] for r in _table(d, "cohort-fairness")}
    selection = expected["selection rate"]
    assert gaps["selection rate"][0].startswith(f"{selection.max() - selection.min():.3f} [")
    assert gaps["selection rate"][1].startswith(f"{selection.min() / selection.max():.3f} [")
    assert "sex" in text and ("The story hides sex" in text or "The top story shows sex" in text)
    wait_until(lambda: parse_qs(urlsplit(d.current_url).query).get("sensitive") == ["sex"], "the URL", 10)
    assert severe_console_errors(d) == []


CHANGE = re.compile(r"^(.+?): (.+) → (.+?)( \(hidden by the story\))?$")


def _value(feature: str, text: str):
    """A value as the page writes it, as the model takes it."""
    if feature in ADULT_NUMERIC:
        return int(text.replace(",", ""))
    return np.nan if text == "(missing)" else text


def _distance_cost(train: pd.DataFrame, feature: str, before, after) -> float:
    """Wachter et al.'s L1 over the training rows' median absolute deviation; a category's change counts 1."""
    if feature not in ADULT_NUMERIC:
        return 1.0
    col = train[feature].to_numpy(dtype=float)
    mad = float(np.median(np.abs(col - np.median(col)))) or float(col.std()) or 1.0
    return abs(after - before) / mad


def test_adult_story_test_counterfactuals_flip_the_model(adult_server, browser):
    d, a = browser, adult_server
    X = a.frame.drop(columns="income")
    train, _ = a.rows("train")
    before = a.p(X.iloc[[ROW]])[0]
    d.get(f"{a.base}/persuasive?row={ROW}&immutable=sex")
    wait_text(d, "persuasive-statement", "(k = 3)", timeout=180)
    wait_until(lambda: "sex" in d.find_element(By.ID, "persuasive-story-immutable").text, "sex held fixed", 10)
    run = d.find_element(By.ID, "persuasive-story-run")
    wait_until(run.is_enabled, "the Run button", 30)
    d.execute_script("arguments[0].focus();", run)
    d.switch_to.active_element.send_keys(Keys.ENTER)  # run by keyboard
    card = wait_text(d, "persuasive-story-card", "the story at k = 3", timeout=240)
    story = re.search(r"Story names: (.+?) · held fixed: sex", card).group(1).split(", ")
    rows = _table(d, "persuasive-story-card")
    assert 1 <= len(rows) <= 5
    for _, distance, n_changed, changes, output in rows:
        row, cost = X.iloc[[ROW]].copy(), 0.0
        lines = changes.split("\n")
        assert int(n_changed) == len(lines)
        for line in lines:
            feature, was, now, hidden = CHANGE.match(line).groups()
            assert feature != "sex" and (hidden is not None) == (feature not in story), line
            old, new = _value(feature, was), _value(feature, now)
            assert pd.isna(old) if pd.isna(X[feature].iloc[ROW]) else old == X[feature].iloc[ROW], line
            if feature in ADULT_NUMERIC:
                assert train[feature].min() <= new <= train[feature].max(), line
            else:
                assert pd.isna(new) or new in set(train[feature].dropna()), line
            row[feature] = new
            cost += _distance_cost(train, feature, old, new)
        after = a.p(row)[0]
        assert (after >= 0.5) != (before >= 0.5), (changes, before, after)  # the model's decision flips
        assert output == plain(after, 3, trim=True) and distance == plain(cost, 3, trim=True), (output, distance)
    wait_until(lambda: d.find_element(By.ID, "persuasive-story-cancel").get_attribute("disabled"), "the job's end", 10)
    assert severe_console_errors(d) == []
