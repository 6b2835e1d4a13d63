"""Long feature names in real Chromium: every tick label drawn, inside its figure, none over another.

The figures are built by :mod:`app.views.figures` and :mod:`app.views.figures_persuasive` with names of 40 to 70
characters and drawn by the plotly.js the app serves, in boxes the size of the page's graphs (no server
needed). For each figure the test compares each tick label's bounding box with the figure's box and with
its neighbours', and counts the labels against the bars.
"""
from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace as NS

import numpy as np
import plotly
import pytest

from app.views import figures, figures_rows
from app.views.figures_persuasive import persuasive_items
from app.services.row_plots import beeswarm_of
from explainers import Explanation
from explainers.types import GlobalImportance

pytestmark = pytest.mark.e2e

PLOTLY_JS = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"
LONG = ["number of months since the applicant's most recent serious delinquency (bureau)",
        "credit_bureau_inquiries_last_6_months_excluding_promotional_ones",
        "ratio of revolving balance to the total revolving credit limit",
        "external risk estimate", "age"]


def _names(n: int) -> list[str]:
    return [f"{LONG[j % len(LONG)]} {j}" for j in range(n)]


def _explanation(n: int) -> Explanation:
    rng = np.random.default_rng(0)
    v = rng.normal(size=n) / np.arange(1, n + 1)
    return Explanation(method="shap", feature_names=tuple(_names(n)), values=v, base_value=0.3,
                       prediction=0.3 + float(v.sum()), feature_values=rng.normal(size=n) * 1e5,
                       output_space="probability", target="bad", source="test", params={})


def _figures():
    """(name, figure, width px, number of y categories or None) as the pages lay them out at 1400 px."""
    e = _explanation(30)
    rng = np.random.default_rng(1)
    g = GlobalImportance(feature_names=tuple(_names(30)), values=rng.normal(size=(50, 30)),
                         feature_values=rng.normal(size=(50, 30)), base_value=0.0, output_space="probability",
                         target="bad", source="test")
    items = [NS(name=n, value=(-1) ** j * (40 - j) / 40, shown=(40 - j) / 400, strength=None)
             for j, n in enumerate(_names(40))]
    return [("every SHAP attribution (Persuasive, 30 bars)", figures.attribution_bar(e, max_display=30), 440, 30),
            ("SHAP waterfall (Descriptive)", figures.waterfall(e), 680, 13),
            ("LIME bars (Descriptive)", figures.attribution_bar(e, max_display=10), 680, 10),
            ("global importance (Descriptive)", figures.importance_bar(g), 560, 15),
            ("beeswarm (Descriptive)", figures_rows.beeswarm(beeswarm_of(g)), 800, 12),
            ("shown items (Persuasive, k = 40)", persuasive_items(NS(items=items, parent=NS(output_space="probability")),
                                                                  "Persuasive: 40 items"), 440, 40)]


_CHECK = """
const out = [];
for (const box of document.querySelectorAll('.fig')) {
  const r = box.getBoundingClientRect();
  const ticks = [...box.querySelectorAll('.yaxislayer-above .ytick text')].filter(t => t.textContent.trim());
  const rects = ticks.map(t => t.getBoundingClientRect()).sort((a, b) => a.top - b.top);
  const outside = rects.filter(b => b.left < r.left - 0.5 || b.right > r.right + 0.5 || b.top < r.top - 0.5
                                    || b.bottom > r.bottom + 0.5).length;
  let overlaps = 0;
  for (let i = 1; i < rects.length; i++) if (rects[i].top < rects[i - 1].bottom - 1) overlaps++;
  out.push({name: box.dataset.name, n: ticks.length, outside: outside, overlaps: overlaps,
            minLeft: Math.min(...rects.map(b => b.left)) - r.left});
}
return out;
"""


def _draw(browser, tmp_path, cases, fixed_height: bool = True) -> None:
    """Draw ``cases`` ((name, figure, width, _) each) with the plotly.js the app serves, one box per figure."""
    divs, calls = [], []
    for i, (name, fig, width, _) in enumerate(cases):
        height = f";height:{int(fig.layout.height or 450)}px" if fixed_height else ""
        divs.append(f'<div class="fig" id="f{i}" data-name="{name}" style="width:{width}px{height}"></div>')
        calls.append(f"Plotly.newPlot('f{i}', {fig.to_json()}.data, {fig.to_json()}.layout, {{displayModeBar: false}});")
    page = tmp_path / "figures.html"
    page.write_text(f"<!doctype html><html lang='en'><head><script src='{PLOTLY_JS.as_uri()}'></script></head>"
                    f"<body style='margin:0'>{''.join(divs)}<script>{''.join(calls)}</script></body></html>")
    browser.get(page.as_uri())


def test_long_feature_names_are_drawn_whole(browser, tmp_path):
    cases = _figures()
    _draw(browser, tmp_path, cases)
    found = browser.execute_script(_CHECK)
    assert [f["name"] for f in found] == [c[0] for c in cases]
    problems = []
    for f, (name, _, _, expected) in zip(found, cases):
        if expected is not None and f["n"] != expected:
            problems.append(f"{name}: {f['n']} of {expected} labels drawn (others hidden)")
        if f["outside"]:
            problems.append(f"{name}: {f['outside']} labels clipped by the figure's edge (left {f['minLeft']:.0f} px)")
        if f["overlaps"]:
            problems.append(f"{name}: {f['overlaps']} labels drawn over their neighbour")
    assert problems == [], "\n".join(problems) + "\n" + json.dumps(found, indent=1)


_LABEL_ROOM = """
return [...document.querySelectorAll('.fig')].map(gd => {
  const box = gd.getBoundingClientRect();
  const lefts = [...gd.querySelectorAll('.yaxislayer-above .ytick text')].filter(t => t.textContent.trim())
    .map(t => t.getBoundingClientRect().left - box.left);
  return {name: gd.dataset.name, n: lefts.length, left: Math.min(...lefts), automargin: [
    gd._fullLayout.xaxis.automargin, gd._fullLayout.yaxis.automargin]};
});
"""

WIDE = ["WORST CONCAVE POINTS MEASURED", "MMMMMMMMMMMMMMMMMMMMMMMMM", "capital_gain_in_dollars_1999",
        "iiiiiiiiiiiiiiiiiiiiiiiiiiiiii", "Ümlaut und Größe (Maß)", "1234567890 0987654321", "age"]


def test_row_figures_are_drawn_once_with_room_for_their_labels(browser, tmp_path):
    """The Descriptive row figures are drawn once: Plotly's automargin (which measures the labels it drew and may
    draw the figure again: 8-10 ms of each row change) is off, and the margin sized beforehand from Arial's widths
    (``figures.label_margin``) holds every label, whatever its letters (capitals, a row of M, of i, digits,
    accents), with at most 40 px to spare. Oracle: the labels' boxes as Chromium draws them."""
    rng = np.random.default_rng(2)
    v = rng.normal(size=len(WIDE))
    shap = Explanation(method="shap", feature_names=tuple(WIDE), values=v, base_value=0.3, prediction=0.3 + v.sum(),
                       feature_values=rng.normal(size=len(WIDE)) * 1e4, output_space="probability", target="bad",
                       source="test", params={})
    cases = []
    for name in WIDE:  # one figure per kind of name, so that it is the widest label there
        one = np.where(np.array(WIDE) == name, 10.0, 0.01 * v)
        e = Explanation(**{**shap.__dict__, "values": one, "prediction": 0.3 + one.sum()})
        cases += [(f"waterfall {name}", figures.waterfall(e, max_display=3, value_labels=["1"] * len(WIDE)), 680, None),
                  (f"LIME {name}", figures.attribution_bar(e, max_display=3), 680, None)]
    _draw(browser, tmp_path, cases, fixed_height=False)
    found = browser.execute_script(_LABEL_ROOM)
    assert len(found) == len(cases) and all(f["n"] >= 1 for f in found)
    assert all(f["automargin"] == [False, False] for f in found)
    clipped = [f"{f['name']}: {f['left']:.1f} px" for f in found if f["left"] < 0]
    roomy = [f"{f['name']}: {f['left']:.1f} px" for f in found if f["left"] > 40]
    assert clipped == [] and roomy == [], (clipped, roomy)


_TEXTS = """
const gd = document.querySelector('.fig'), plot = gd.querySelector('.cartesianlayer .bg, .bglayer .bg, rect.bg');
const area = gd.querySelector('.draglayer .nsewdrag').getBoundingClientRect(), box = gd.getBoundingClientRect();
return {legend: gd.querySelectorAll('.legend').length,
        texts: [...gd.querySelectorAll('.textpoint text')].filter(t => t.textContent.trim())
          .map(t => { const r = t.getBoundingClientRect(); return {text: t.textContent, left: r.left - area.left,
                                                                   right: box.right - r.right}; })};
"""


def test_waterfall_value_texts_stay_between_the_axis_labels_and_the_edge(browser, tmp_path):
    """A row whose prediction is near 0 and whose steps go left (a new user's wine row 0): every value text is
    drawn inside the plot area, none over the feature names on its left or past the figure's right edge, and no
    legend ("trace 0") takes the room."""
    steps = np.array([-0.0925, -0.0745, -0.0519, -0.0311, -0.0283, 0.0138, -0.0181, 0.00836, -0.0123, -0.0068,
                      0.00269, 0.0])
    names = tuple(f"feature {j}" for j in range(len(steps)))
    e = Explanation(method="shap", feature_names=names, values=steps, base_value=0.269,
                    prediction=0.269 + float(steps.sum()), feature_values=np.arange(len(steps)) * 1035.0,
                    output_space="probability", target="class_2", source="test",
                    params={"standard_error": tuple(np.full(len(steps), 0.000649))})
    _draw(browser, tmp_path, [("waterfall", figures.waterfall(e), 680, None)])
    found = browser.execute_script(_TEXTS)
    assert found["legend"] == 0
    assert len(found["texts"]) == 13  # base, 10 steps, "other features", prediction
    outside = [t for t in found["texts"] if t["left"] < -0.5 or t["right"] < -0.5]
    assert outside == [], outside
