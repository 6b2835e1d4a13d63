"""Issue 11 kind 9: user text is never drawn as markup, and no user string reaches a JS object as a key.

Plotly draws a subset of HTML in every text it shows (``<br>``, ``<sub>``, ``<span style>``, ``<a href>``),
so a column named ``<span style="color:white">top</span>`` made the top-ranked label invisible and one
named ``<a href="https://evil.example">x</a>`` became a live link in a tick label. A column named
``__proto__`` made ``dcc.Dropdown`` (its search index is a plain JS object) throw on the Persuasive and
Surrogate pages.

The unit tests build every figure through the services and callbacks on a real LogisticRegression whose
breast-cancer columns, levels and class labels are hostile; the e2e test serves such a model to headless
Chromium.
"""
from __future__ import annotations

import sys
import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
import skops.io as sio
from sklearn.compose import ColumnTransformer
from sklearn.datasets import load_breast_cancer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

EVIL = '<a href="https://evil.example">x</a>'
WHITE = '<span style="color:white">top</span>'
BREAK = "a<br>b"
AMP = "&amp;"
LEVEL_HIGH, LEVEL_LOW = "<b>high</b>", '<a href="https://evil.example">low</a>'
POSITIVE = "yes<sub>x</sub>"  # sorts after "no": the class every page explains
# What Plotly must receive to draw each string as typed (written out here, not computed by the app's code).
ESCAPED = {
    EVIL: '&lt;a href="https://evil.example"&gt;x&lt;/a&gt;',
    WHITE: '&lt;span style="color:white"&gt;top&lt;/span&gt;',
    BREAK: "a&lt;br&gt;b",
    AMP: "&amp;amp;",
    LEVEL_HIGH: "&lt;b&gt;high&lt;/b&gt;",
    LEVEL_LOW: '&lt;a href="https://evil.example"&gt;low&lt;/a&gt;',
    POSITIVE: "yes&lt;sub&gt;x&lt;/sub&gt;",
}
COLUMNS = {"worst concave points": EVIL, "worst radius": WHITE, "mean texture": BREAK, "worst smoothness": AMP,
           "mean symmetry": "__proto__", "mean fractal dimension": "constructor"}
FEATURES = [*COLUMNS.values(), "grade"]
ROOT = Path(__file__).resolve().parents[2]


def hostile_frame() -> pd.DataFrame:
    """Six breast-cancer columns renamed, a categorical ``grade`` with markup levels, a markup class label."""
    d = load_breast_cancer(as_frame=True)
    frame = d.data[list(COLUMNS)].rename(columns=COLUMNS)
    frame["grade"] = np.where(d.data["worst area"] > d.data["worst area"].median(), LEVEL_HIGH, LEVEL_LOW)
    frame["y"] = np.where(d.target == 0, POSITIVE, "no")
    return frame


def hostile_model(frame: pd.DataFrame) -> Pipeline:
    numeric = [c for c in FEATURES if c != "grade"]
    prep = ColumnTransformer([("num", StandardScaler(), numeric), ("cat", OneHotEncoder(), ["grade"])])
    return Pipeline([("prep", prep), ("lr", LogisticRegression(max_iter=2000))]).fit(frame[FEATURES], frame["y"])


def _strings(obj):
    """Every string in a figure's JSON tree (property values, list items, array items)."""
    if isinstance(obj, str):
        yield obj
    elif isinstance(obj, dict):
        for v in obj.values():
            yield from _strings(v)
    elif isinstance(obj, (list, tuple, np.ndarray)):
        for v in (obj.tolist() if isinstance(obj, np.ndarray) else obj):
            yield from _strings(v)


def _hovertemplates(obj):
    if isinstance(obj, dict):
        for k, v in obj.items():
            if k == "hovertemplate":
                yield from _strings(v)
            else:
                yield from _hovertemplates(v)
    elif isinstance(obj, (list, tuple)):
        for v in obj:
            yield from _hovertemplates(v)


def assert_escaped(fig, must_show=()):
    """No user markup in ``fig`` (no ``<a``, ``<span``, ``<b>``, ``<sub>``, ``a<br>b``, an unescaped ``&amp;``), no user
    text in a hovertemplate, and every string of ``must_show`` present in its escaped form."""
    tree = fig.to_plotly_json()
    texts = list(_strings(tree))
    blob = "\n".join(texts)
    for raw in ("<a ", "<a>", "</a>", "<span", "<b>", "<sub>", BREAK):
        assert raw not in blob, f"{raw!r} reaches Plotly as markup: {[t for t in texts if raw in t][:3]}"
    assert not [t for t in texts if t == AMP or t.startswith(AMP + " ")], "the column '&amp;' is drawn as '&'"
    assert not any("evil.example" in t or "&lt;" in t for t in _hovertemplates(tree))
    # a long name is drawn on several lines (app.views.figures.tick_label breaks at spaces and after '_')
    drawn = (blob, blob.replace("<br>", " "), blob.replace("<br>", ""))
    for s in must_show:
        assert any(ESCAPED.get(s, s) in b for b in drawn), f"{ESCAPED.get(s, s)!r} not in the figure"


@pytest.fixture(scope="module")
def hostile_workspace(tmp_path_factory):
    """The hostile model and table saved with skops and CSV, loaded as ``python -m app`` would, installed."""
    from app import services
    from workspace.workspace import load_user_workspace

    folder = tmp_path_factory.mktemp("markup")
    frame = hostile_frame()
    sio.dump(hostile_model(frame), folder / "m.skops")
    frame.to_csv(folder / "d.csv", index=False)
    previous = services.state().workspace
    ws = load_user_workspace(folder / "m.skops", folder / "d.csv", "y")
    services.init(ws, warm=False)
    yield ws
    if previous is not None:
        services.init(previous, warm=False)


def test_tabular_figures_draw_names_levels_and_classes_as_text(hostile_workspace):
    """Attack: feature names, a categorical level and a class label written as Plotly markup became a live
    ``<a href>`` link, an invisible white label and a line break in the Descriptive and Persuasive figures."""
    from app.views import figures_attention
    from app import services
    from app.views import descriptive, persuasive

    assert list(hostile_workspace.X.columns) == FEATURES
    top = services.global_importance().feature_names[int(np.argmax(services.global_importance().importance))]
    bar, beeswarm, _ = descriptive.render_global(None)
    assert_escaped(bar, must_show=[EVIL, WHITE, BREAK, AMP, "__proto__", "constructor", POSITIVE, top])
    assert_escaped(beeswarm, must_show=[EVIL, WHITE, BREAK, AMP, "__proto__"])
    waterfall, lime, *_ = descriptive.render_local(0)
    assert_escaped(waterfall, must_show=[EVIL, WHITE, BREAK, AMP, POSITIVE])
    assert any(ESCAPED[level] in y for y in waterfall.data[0].y for level in (LEVEL_HIGH, LEVEL_LOW))
    assert_escaped(lime)
    for grouping in ([], ["on"]):
        out = persuasive.render_persuasive(0, len(FEATURES), "exact", grouping, [])
        full, shown, tradeoff = out[5:]
        assert_escaped(full, must_show=[EVIL, WHITE, BREAK, AMP])
        assert_escaped(shown, must_show=[top])
        assert_escaped(tradeoff)
    assert_escaped(figures_attention.attention_heatmaps(np.full((2, 2, len(FEATURES)), 0.1), tuple(FEATURES)),
                   must_show=[EVIL, WHITE, BREAK, AMP])


def test_surrogate_figures_and_error_figures_draw_user_text_as_text(hostile_workspace):
    """Attack: a class label ``yes<sub>x</sub>`` was drawn as a subscript in the surrogate-vs-model confusion
    matrix, and an error message naming a column drew that column's markup in the placeholder figure."""
    from app import services
    from app.views import surrogate
    from app.views.components import empty_figure

    summary, rules, confusion = surrogate.render_surrogate(services.default_muse_key())
    assert_escaped(confusion, must_show=[POSITIVE, "no"])
    assert_escaped(empty_figure(f"column {EVIL} is not numeric; neither is {WHITE} nor {BREAK}"),
                   must_show=[EVIL, WHITE, BREAK])


def test_text_figures_draw_words_labels_and_relations_as_text():
    """Attack: a typed sentence, an uploaded CSV's labels or a CoNLL-U file's relation names holding markup
    were drawn as links, styles and line breaks in the Text page's figures."""
    from app.views import figures_lopardo, figures_text

    words = ["the", EVIL, WHITE, BREAK, AMP]
    assert_escaped(figures_text.prediction_bar([POSITIVE, EVIL], [0.3, 0.7], f"head from {AMP}"),
                   must_show=[POSITIVE, EVIL, AMP])
    w = np.full((2, len(words), len(words)), 1 / len(words))
    assert_escaped(figures_text.head_view(words, w, 0, [0, 1]), must_show=[EVIL, WHITE, BREAK, AMP])
    v = np.linspace(-1, 1, len(words))
    assert_escaped(figures_text.aggregates_view(words, [("CLS row", np.abs(v))], [(f"IG (log-odds of {POSITIVE})", v)]),
                   must_show=[EVIL, WHITE, BREAK, AMP, POSITIVE])
    assert_escaped(figures_lopardo.score_strips(words, {"LIME": v, "α-avg": np.abs(v)}, POSITIVE),
                   must_show=[EVIL, POSITIVE])
    z = np.full((1, 2), 0.5)
    roles = SimpleNamespace(confidence=z, labels=[[[f"syntactic({EVIL})"], []]], modal_offset=z, modal_share=z,
                            share_prev=z, share_next=z, rare_share=z, syntactic_best=[[WHITE, ""]],
                            syntactic_accuracy=z, syntactic_baseline=z, n_queries=3)
    assert_escaped(figures_text.roles_view(roles), must_show=[EVIL, WHITE])


def _options(tree):
    """Every ``options`` list in a serialized layout."""
    if isinstance(tree, dict):
        for k, v in tree.items():
            if k == "options" and isinstance(v, list):
                yield v
            else:
                yield from _options(v)
    elif isinstance(tree, list):
        for v in tree:
            yield from _options(v)


_PAGE_OPTIONS = """
import json, sys, dash
dash.Dash(__name__, use_pages=True, pages_folder="")
import app.views.figures  # the plotly template
from plotly.utils import PlotlyJSONEncoder
from app import services
from workspace.workspace import load_user_workspace
services.init(load_user_workspace(sys.argv[1], sys.argv[2], "y"), warm=False)
import app.pages.persuasive, app.pages.surrogate
print(json.dumps([json.loads(json.dumps(p.layout(), cls=PlotlyJSONEncoder))
                  for p in (app.pages.persuasive, app.pages.surrogate)]))
"""


def test_dropdowns_of_user_strings_hold_no_proto_key(hostile_workspace, tmp_path):
    """Attack: ``__proto__`` as a feature name reached ``dcc.Dropdown``'s search index (plain JS objects keyed
    by every substring of each option's value, string label and search text) and threw, breaking the
    Persuasive and Surrogate pages. The browser test below proves the pages; this one pins what is sent, and
    that what the user picks reads back as the user's names."""
    import json
    import subprocess

    from tests.markdown_render import component_text

    from app.views import persuasive

    frame = hostile_frame()
    sio.dump(hostile_model(frame), tmp_path / "m.skops")
    frame.to_csv(tmp_path / "d.csv", index=False)
    out = subprocess.run([sys.executable, "-c", _PAGE_OPTIONS, str(tmp_path / "m.skops"), str(tmp_path / "d.csv")],
                         capture_output=True, text=True, timeout=300, cwd=str(ROOT))
    assert out.returncode == 0, out.stderr[-2000:]
    sensitive = None
    for layout in json.loads(out.stdout.strip().splitlines()[-1]):
        named = [options for options in _options(layout) if len(options) == len(FEATURES)]
        assert named, "no dropdown of the features"
        for o in (o for options in named for o in options):
            value, label = (o.get("value"), o.get("label")) if isinstance(o, dict) else (o, o)
            assert "__proto__" not in str(value).lower(), o
            assert not isinstance(label, str) or "__proto__" not in label.lower(), o
            assert "__proto__" not in str(o.get("search", "") if isinstance(o, dict) else "").lower(), o
        sensitive = sensitive or named[0]
    shown = [o["label"]["props"]["children"] for o in sensitive]
    assert shown == FEATURES
    chosen = [o["value"] for o, name in zip(sensitive, shown) if name in ("__proto__", EVIL)]
    dropped = component_text(persuasive.render_persuasive(0, 1, "exact", [], chosen)[3])
    assert "__proto__ (sensitive)" in dropped or json.dumps(f"{EVIL} (sensitive)")[1:-1] in dropped


@pytest.mark.e2e
def test_hostile_column_names_in_the_browser(tmp_path):
    """Attack: served to a browser, a column ``__proto__`` threw in ``dcc.Dropdown`` on the Persuasive and
    Surrogate pages (SEVERE console errors) and a column ``<a href="https://evil.example">evil</a>`` -- the
    top-ranked feature -- was drawn as a live link labelled "evil" instead of its name."""
    from selenium.webdriver.common.by import By

    from tests.e2e.browser import chromium_driver, severe_console_errors, wait_for_figures
    from tests.e2e.serving import running_app

    evil = '<a href="https://evil.example">evil</a>'
    d = load_breast_cancer(as_frame=True)
    names = {"worst concave points": evil, "mean symmetry": "__proto__", "mean texture": "constructor",
             "worst smoothness": WHITE}
    frame = d.data[list(names)].rename(columns=names)
    frame["y"] = np.where(d.target == 0, "malignant", "benign")
    model = Pipeline([("scale", StandardScaler()), ("lr", LogisticRegression(max_iter=2000))])
    model.fit(frame[list(names.values())], frame["y"])
    sio.dump(model, tmp_path / "m.skops")
    frame.to_csv(tmp_path / "d.csv", index=False)
    env = {"CANDOR_TEXT_DIR": str(tmp_path / "text"), "CANDOR_CACHE_DIR": str(tmp_path / "cache")}
    args = ["--model", str(tmp_path / "m.skops"), "--data", str(tmp_path / "d.csv"), "--target", "y"]
    with running_app(args, env, tmp_path / "server.log") as base, chromium_driver() as driver:
        for path, minimum in (("/persuasive", 4), ("/surrogate", 2)):
            driver.get(base + path)
            wait_for_figures(driver, timeout=120, minimum=minimum)
            time.sleep(2)  # let late renders (dropdown menus, figures) log their errors
            errors = severe_console_errors(driver)
            assert errors == [], f"{path}: {len(errors)} errors, first: {errors[0][:300]}"
            links = driver.execute_script(
                "return Array.from(document.querySelectorAll('svg a')).map(a => a.getAttribute('href') || "
                "a.getAttributeNS('http://www.w3.org/1999/xlink', 'href') || '')")
            assert not [h for h in links if "evil.example" in h], f"{path}: links in the figures: {links}"
            assert not driver.find_elements(By.CSS_SELECTOR, 'svg a[*|href*="evil.example"]')
        driver.get(base + "/persuasive")
        wait_for_figures(driver, timeout=120, minimum=4)
        ticks = driver.execute_script(
            "return Array.from(document.querySelectorAll('#persuasive-topk-bar .ytick text')).map(t => t.textContent)")
        assert evil in ticks, f"the top-ranked label is drawn as {ticks}"
        # the table of dropped features (a Markdown panel) names the hidden columns as written, links nowhere
        dropped = driver.find_element(By.ID, "persuasive-dropped").text
        assert any(f"\n{name}" in dropped for name in names.values()), dropped
        assert not driver.find_elements(By.CSS_SELECTOR, 'a[href*="evil.example"], [style*="color:white"]')
        assert not severe_console_errors(driver)
