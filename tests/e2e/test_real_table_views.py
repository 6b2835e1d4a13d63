"""Issue 25's views in headless Chromium on a real table: UCI Adult (the session's ``adult_server``,
tests/e2e/conftest.py: 1,200 rows, a one-hot Pipeline of gradient-boosted trees, 300 held-out rows). Each test
computes what the page shows on its own, from the model and the held-out rows: Performance against scikit-learn's
metrics and counts at a threshold moved by keyboard, Dependence against a brute-force average over the rows (a
number and, picked by keyboard, a one-hot category) with its fidelity figure from the ICE curves, and permutation
importance against scikit-learn's on the same seed, with its rank agreement beside mean |SHAP|."""
from __future__ import annotations

import re
from urllib.parse import parse_qs, urlsplit

import numpy as np
import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from explainers.numbers import plain
from tests.e2e.browser import plot_data, severe_console_errors, wait_for_figures, wait_text, wait_until
from tests.e2e.test_performance import _counts
from tests.e2e.test_wcag_axe import _tab_to

pytestmark = pytest.mark.e2e

ROW = 17


def _expected_counts(y: np.ndarray, p: np.ndarray, t: float) -> tuple[int, int, int, int]:
    called = p >= t
    return (int((called & y).sum()), int((called & ~y).sum()), int((~called & ~y).sum()), int((~called & y).sum()))


def test_adult_performance_equals_sklearn_and_its_threshold_moves_by_keyboard(adult_server, browser):
    from sklearn.calibration import calibration_curve
    from sklearn.metrics import average_precision_score, brier_score_loss, roc_auc_score

    d, a = browser, adult_server
    X, y = a.rows()
    p = a.p(X)
    d.get(f"{a.base}/performance?threshold=30")
    wait_text(d, "performance-threshold-text", "Threshold 0.30", timeout=180)
    wait_for_figures(d, minimum=4, timeout=60)
    alts = {f["alt"].split(" ")[0]: f for f in plot_data(d)}
    roc, pr, cal = alts["ROC"], alts["precision-recall"], alts["calibration"]
    assert roc["alt"].startswith(f"ROC curve over 300 held-out rows; ROC AUC {roc_auc_score(y, p):.3f} (95% interval")
    assert f"average precision {average_precision_score(y, p):.3f} (95% interval" in pr["alt"]
    assert f"Brier score {brier_score_loss(y, p):.3f}" in cal["alt"]
    true, predicted = calibration_curve(y, p, n_bins=10, strategy="uniform")
    model_trace = next(t for t in cal["traces"] if t["name"] == "model")
    np.testing.assert_allclose(model_trace["x"], predicted, atol=1e-12)
    np.testing.assert_allclose(model_trace["y"], true, atol=1e-12)
    assert _counts(d) == ("0.30", _expected_counts(y, p, 0.30))

    thumb = d.find_element(By.CSS_SELECTOR, "#performance-threshold [role='slider']")
    for _ in range(5):  # five hundredths up, by keyboard
        thumb.send_keys(Keys.ARROW_RIGHT)
    wait_until(lambda: _counts(d)[0] == "0.35", "the counts at 0.35", 30)
    assert _counts(d) == ("0.35", _expected_counts(y, p, 0.35))
    tp, fp, tn, fn = _expected_counts(y, p, 0.35)
    rates = d.find_element(By.ID, "performance-rates").text
    assert f"precision {tp / (tp + fp):.3f} {tp} of {tp + fp} called >50K" in rates, rates
    wait_until(lambda: parse_qs(urlsplit(d.current_url).query).get("threshold") == ["35"], "the URL's threshold", 10)
    assert severe_console_errors(d) == []


def _pdp(driver) -> tuple[dict, dict]:
    """The PDP figure as drawn and its average's trace (a number's line, a category's points)."""
    fig = plot_data(driver, "#dependence-pdp")[0]
    return fig, next(t for t in fig["traces"] if t["name"] in ("PDP (average)", "PDP ± 95 % CI"))


def _ice(a, X, feature: str, values) -> np.ndarray:
    """Every held-out row's ICE curve by brute force: the model's P(>50K) with ``feature`` set to each value."""
    return np.column_stack([a.p(X.assign(**{feature: v})) for v in values])


def test_adult_dependence_equals_a_brute_force_average_and_its_fidelity_figure(adult_server, browser):
    d, a = browser, adult_server
    X, _ = a.rows()
    d.get(f"{a.base}/dependence?feature=age")
    notes = wait_text(d, "dependence-notes", "The PDP of age", timeout=180)
    wait_for_figures(d, minimum=2, timeout=60)
    fig, pdp = _pdp(d)
    grid = np.asarray(pdp["x"], dtype=float)
    assert len(grid) == 20 and fig["title"].startswith("Partial dependence and ICE of age (100 of 300 curves drawn, "
                                                       "300 of 300 held-out rows)")
    ice = _ice(a, X, "age", grid)  # every held-out row's ICE curve
    np.testing.assert_allclose(pdp["y"], ice.mean(axis=0), atol=1e-9)
    slopes = ice @ (grid - grid.mean())  # the fidelity figure: curves whose least-squares slope runs against the PDP's
    against = int(np.sum(np.sign(slopes) == -np.sign(slopes.mean())))
    direction = "rising" if slopes.mean() > 0 else "falling"
    assert (f"The PDP of age ({direction}) hides its curves: {plain(100 * against / 300, 1, trim=True)} % of the "
            f"300 ICE curves run the other way") in notes, notes
    shap = plot_data(d, "#dependence-shap")[0]
    assert shap["title"].startswith("SHAP dependence of age (1,200 of 1,200 explained rows, coloured by ")
    drawn = np.concatenate([t["x"] for t in shap["traces"]])
    np.testing.assert_array_equal(np.sort(drawn), np.sort(a.frame.age.to_numpy(dtype=float)))

    d.find_element(By.TAG_NAME, "body").click()  # a one-hot category, by keyboard: Tab, Enter, arrows, Enter
    _tab_to(d, lambda el: el.get_attribute("id") == "dependence-feature").send_keys(Keys.ENTER)
    options = wait_until(lambda: d.find_elements(By.CSS_SELECTOR, "[role='option']"), "the list to open", 10)
    names = [o.text for o in options]  # the list opens with the focus on the current feature
    wait_until(lambda: d.switch_to.active_element.get_attribute("value") == "age", "the focus on age", 10)
    steps = names.index("sex") - names.index("age")
    for _ in range(abs(steps)):
        d.switch_to.active_element.send_keys(Keys.ARROW_DOWN if steps > 0 else Keys.ARROW_UP)
    wait_until(lambda: d.switch_to.active_element.get_attribute("value") == "sex", "the focus on sex", 10)
    d.switch_to.active_element.send_keys(Keys.ENTER)
    notes = wait_text(d, "dependence-notes", "The PDP of sex", timeout=60)
    wait_until(lambda: "feature=sex" in d.current_url, "the URL to name sex", 10)
    wait_until(lambda: "of sex" in plot_data(d, "#dependence-pdp")[0]["title"], "the PDP of sex drawn", 30)
    fig, pdp = _pdp(d)
    levels = fig["ticktext"]
    assert sorted(levels) == ["Female", "Male"]
    np.testing.assert_allclose(pdp["y"], _ice(a, X, "sex", levels).mean(axis=0), atol=1e-9)
    assert "ICE curves rank those two levels the other way" in notes
    assert severe_console_errors(d) == []


def test_adult_permutation_importance_equals_sklearn_beside_mean_shap(adult_server, browser):
    from scipy.stats import kendalltau, spearmanr
    from sklearn.inspection import permutation_importance
    from sklearn.metrics import roc_auc_score

    d, a = browser, adult_server
    X, y = a.rows()
    d.get(f"{a.base}/descriptive?row={ROW}")
    text = wait_text(d, "descriptive-global-methods", "Rank agreement with mean |SHAP|", timeout=300)
    # the text is in the page before Plotly has drawn the figure beside it (plotly.js may still be loading)
    fig = wait_until(lambda: plot_data(d, "#descriptive-global-methods"), "the importance figure drawn", 30)[0]
    shap, perm = fig["traces"]
    assert fig["title"].startswith("Permutation importance ± standard error (10 shuffles, 300 held-out rows)")
    expected = permutation_importance(a.model, X, y, n_repeats=10, random_state=0,
                                      scoring=lambda m, rows, truth: roc_auc_score(truth, a.p(rows)))
    column = {name: j for j, name in enumerate(X.columns)}
    order = [column[name] for name in perm["y"]]
    assert sorted(order) == list(range(8))  # all eight features drawn
    np.testing.assert_allclose(perm["x"], expected.importances_mean[order], atol=1e-12)
    se = expected.importances.std(axis=1, ddof=1) / np.sqrt(10)
    np.testing.assert_allclose(perm["customdata"], se[order], atol=1e-12)
    assert shap["y"] == perm["y"]
    clipped = np.clip(perm["x"], 0, None)  # the agreement counts negative drops as 0, over every feature
    rho, tau = spearmanr(shap["x"], clipped).statistic, kendalltau(shap["x"], clipped).statistic
    assert f"Spearman ρ {rho:.3f}, Kendall τ-b {tau:.3f}" in text, text
    assert re.search(r"drop of roc_auc \(baseline ([0-9.]+)\)", text).group(1) == f"{roc_auc_score(y, a.p(X)):.4f}"
    assert severe_console_errors(d) == []
