"""The Text attention page in real headless Chromium against `python -m app` (fixtures in conftest.py).

Opens /text, submits a typed sentence with Enter, waits for the figures, checks the truncation note of
a long text, runs the head analysis as a background job, trains the Lopardo et al. (2024) attention
classifier (background job) and checks its seven strips, and asserts the console has no SEVERE errors.
A second server serves a user's Hugging Face classifier folder (``CANDOR_TEXT_MODEL``, issue 7) with
another shape (2 layers x 12 heads) and three labels.
"""
from __future__ import annotations

import re
import time

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from tests.app.test_text_user_model import build_user_classifier
from tests.e2e.browser import severe_console_errors, svg_text, wait_for_figures, wait_text
from tests.e2e.serving import running_app

pytestmark = pytest.mark.e2e

_SET_VALUE = """
const el = document.getElementById(arguments[0]);
const setter = Object.getOwnPropertyDescriptor(window.HTMLTextAreaElement.prototype, 'value').set;
setter.call(el, arguments[1]);
el.dispatchEvent(new Event('input', {bubbles: true}));
"""




def _click(driver, element_id: str) -> None:
    button = driver.find_element(By.ID, element_id)
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'}); arguments[0].click();", button)




def test_text_page_sentence_long_text_and_head_analysis(server, browser, tmp_path):
    browser.get(server + "/text")
    assert wait_for_figures(browser, minimum=5, timeout=120) >= 5
    wait_text(browser, "text-notes", "Predicted positive", timeout=90)  # the first built-in example
    assert "Text attention" in browser.find_element(By.CSS_SELECTOR, ".navbar").text

    box = browser.find_element(By.ID, "text-input")
    box.send_keys(Keys.CONTROL, "a")
    box.send_keys("The staff were rude and the food was cold.", Keys.ENTER)
    notes = wait_text(browser, "text-notes", "for typed")
    assert "Predicted negative" in notes and "2 special tokens ([CLS], [SEP])" in notes
    assert "attention to a word = sum over its pieces" in notes
    wait_for_figures(browser, minimum=5, timeout=60)
    assert "head 0" in svg_text(browser, "#text-head-view .annotation-text")
    deadline = time.time() + 30
    while "Integrated Gradients" not in svg_text(browser, "#text-aggregates .yaxislayer-above text") and time.time() < deadline:
        time.sleep(0.2)
    rows = svg_text(browser, "#text-aggregates .yaxislayer-above text")
    assert "rollout" in rows and "Integrated Gradients" in rows and "gradient x input" in rows
    assert "Spearman" in svg_text(browser, "#text-agreement .gtitle")

    long = " ".join(["The service was slow but the view was lovely."] * 40)
    browser.execute_script(_SET_VALUE, "text-input", long)
    _click(browser, "text-submit")
    notes = wait_text(browser, "text-notes", "Truncated at the model maximum of 256 tokens")
    assert "truncated to 256 of 402 tokens" in notes and "first dropped word #254 'but'" in notes
    assert "takes more than 2 s" in notes
    wait_for_figures(browser, minimum=5, timeout=60)

    csv = tmp_path / "reviews.csv"
    csv.write_text("id,review,sentiment\n1,Great food and friendly staff.,positive\n2,Cold soup.,negative\n")
    browser.find_element(By.CSS_SELECTOR, "#text-upload input[type=file]").send_keys(str(csv))
    wait_text(browser, "text-upload-status", "reviews.csv: 2 rows, columns id, review, sentiment")
    wait_text(browser, "text-dataset-note", "2 texts from column 'review'; labels from column 'sentiment'")
    _click(browser, "text-builtin")
    wait_text(browser, "text-dataset-note", "built-in examples")

    _click(browser, "text-heads-run")
    summary = wait_text(browser, "text-heads-summary", "Accuracy of the model", timeout=120)
    assert "built-in examples: all 12 texts" in summary and "n = 12" in summary
    wait_for_figures(browser, minimum=8, timeout=60)
    assert "Pruning curve" in svg_text(browser, "#text-pruning .gtitle")

    _click(browser, "text-lopardo-run")  # Lopardo et al. 2024 classifier, trained on the built-in examples
    summary = wait_text(browser, "text-lopardo-summary", "training accuracy", timeout=120)
    assert "Trained on all 12 labelled texts of built-in examples" in summary
    rows = svg_text(browser, "#text-lopardo-scores .yaxislayer-above text")
    assert all(name in rows for name in ("α-avg", "α-max", "LIME", "G-avg", "G-L1", "G-L2", "G×I"))
    assert "Spearman" in svg_text(browser, "#text-lopardo-agreement .gtitle")
    assert severe_console_errors(browser) == []


def _layers(browser, figure: str) -> list[str]:
    """The "layer N" tick labels of a figure's y axis, sorted."""
    return sorted(re.findall(r"layer \d+", svg_text(browser, f"{figure} .ytick text")))


def test_text_page_serves_a_user_classifier_folder(browser, tmp_path_factory):
    folder = tmp_path_factory.mktemp("user-classifier")
    build_user_classifier(folder)
    # CANDOR_WARM=0: the warm-up precomputes the bundled sample's tabular values (global SHAP, MUSE, ...), which this
    # test never opens, on the server's CPU while the text page computes; the text model is never warmed
    env = {"CANDOR_TEXT_MODEL": str(folder), "CANDOR_TEXT_DIR": str(tmp_path_factory.mktemp("candor-text-user")),
           "CANDOR_CACHE_DIR": str(tmp_path_factory.mktemp("candor-background-user")), "CANDOR_WARM": "0"}
    with running_app([], env, tmp_path_factory.mktemp("server-user") / "server.log") as base:
        browser.get(base + "/text")
        notes = wait_text(browser, "text-notes", "2 layers x 12 heads", timeout=120)
        shown = browser.find_element(By.ID, "_pages_content").text
        assert f"your Hugging Face model from the folder {folder.name}" in shown and str(folder) not in shown
        assert f"{folder.name} (bert): 2 layers x 12 heads, labels sad, neutral, happy, max length 512" in notes
        assert wait_for_figures(browser, minimum=5, timeout=120) >= 5
        assert svg_text(browser, "#text-prediction .ytick text").split() == ["sad", "neutral", "happy"]
        assert _layers(browser, "#text-model-view") == ["layer 0", "layer 1"]
        deadline = time.time() + 30  # the layer picker was filled from the model: its last layer is 1
        while "layer 1" not in svg_text(browser, "#text-head-view .gtitle") and time.time() < deadline:
            time.sleep(0.2)
        assert "Head view: layer 1" in svg_text(browser, "#text-head-view .gtitle")
        assert "head 3" in svg_text(browser, "#text-head-view .annotation-text")
        assert _layers(browser, "#text-agreement") == ["layer 0", "layer 1"]
        assert severe_console_errors(browser) == []
