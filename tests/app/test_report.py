"""The review report (``python -m app report``, the navbar's Export report): its values are the services' values,
checked against explainers called directly; it is one file that fetches nothing; CLI errors are one line."""
from __future__ import annotations

import json
import re
from html.parser import HTMLParser

import numpy as np
import pandas as pd
import pytest

from explainers.numbers import plain
from workspace import settings

ROWS = [3, 17]


@pytest.fixture(scope="module")
def report(sample_workspace, tmp_path_factory):
    """The sample's report for rows 3 and 17, built in-process (MUSE fitted in a fresh cache)."""
    from app.report.content import report_content
    from app.report.render import render_html

    cache = tmp_path_factory.mktemp("report-cache")
    with settings.overridden(cache_dir=cache):
        content = report_content(ROWS)
        html = render_html(content)
    return content, html, cache


def _figures(html: str) -> dict[str, dict]:
    return {m.group(1): json.loads(m.group(2).replace("<\\/", "</")) for m in
            re.finditer(r'<script type="application/json" data-figure="([^"]+)">(.*?)</script>', html, re.S)}


def _array(value) -> list:
    """A figure array as plotly.js reads it: a list, or plotly's typed array ``{"dtype", "bdata"}`` (base64)."""
    if isinstance(value, dict):
        import base64

        return np.frombuffer(base64.b64decode(value["bdata"]), dtype=value["dtype"]).tolist()
    return list(value)


class _Fetching(HTMLParser):
    """Every attribute a browser would fetch from (src, href of link, poster, srcset, data of object)."""

    def __init__(self):
        super().__init__()
        self.found: list[tuple[str, str, str]] = []

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if name in ("src", "srcset", "poster", "data") or (tag == "link" and name == "href"):
                self.found.append((tag, name, value or ""))


def test_report_is_one_file_that_fetches_nothing(report):
    content, html, _ = report
    parser = _Fetching()
    parser.feed(html)
    assert parser.found == []  # no script src, no stylesheet link, no image: everything inline
    from plotly.offline import get_plotlyjs

    bundle = get_plotlyjs()
    assert html.count(bundle) == 1 and html.count("<script>") == 2  # plotly.js once, then the drawing script
    assert re.search(r"@import|url\(\s*['\"]?https?:", html) is None  # no CSS import or font from a network
    figs = _figures(html)
    # model performance (ROC, precision-recall, calibration, confusion at 0.5), global SHAP, permutation importance
    # beside it (the table's global methods), the surrogate's confusion matrix, the held-out curve, 2 for each of the
    # 3 dependence views, the Cohorts page's error tree and ranking, then 3 per row (full, story, tradeoff)
    assert len(figs) == 4 + 4 + 2 * 3 + 2 + 3 * len(ROWS) == int(re.search(r'data-figures-expected="(\d+)"', html).group(1))
    assert "Rows chosen by the person who exported: 3, 17." in html


def test_report_bars_are_the_shap_values_of_the_explainer_called_directly(report, sample_workspace):
    """The descriptive bar of row 17 shows SHAP values equal to explainers.ShapExplainer on the same row, and
    the persuasive bar shows the top-k of them."""
    from explainers import ShapExplainer

    _, html, _ = report
    ws = sample_workspace
    e = ShapExplainer(ws.adapter, background=ws.X.iloc[ws.train_idx],
                      target_index=ws.model.index, target_name=ws.classes[1],
                      background_size=100, seed=0).explain(ws.X.iloc[[17]])
    figs = _figures(html)
    row17 = [f for f in figs.values() if f["layout"]["title"]["text"].startswith("Descriptive")][1]
    bar = row17["data"][0]
    shown = dict(zip(_array(bar["y"]), _array(bar["x"])))
    expected = {n: v for n, v in zip(e.feature_names, e.values) if v != 0}
    assert len(shown) == len(expected) == 30
    for name, value in expected.items():
        assert shown[name] == pytest.approx(value, abs=1e-9)
    story = [f for f in figs.values() if f["layout"]["title"]["text"].startswith("Persuasive")][1]["data"][0]
    top3 = np.argsort(-np.abs(e.values))[:3]
    assert sorted(_array(story["y"])) == sorted(e.feature_names[j] for j in top3)
    assert sorted(_array(story["customdata"])) == pytest.approx(sorted(e.values[top3]), abs=1e-9)


def test_report_cost_and_surrogate_figures_are_the_pages(report):
    """The cost table holds the Persuasive page's fidelity figures; the surrogate its Wilson interval."""
    from explainers.intervals import wilson_interval

    content, html, _ = report
    view = content.rows[0].persuasive
    after = view.simplification.fidelity_after
    assert f"<td>Sufficiency</td><td>{after['sufficiency']:.3f}</td>" in html
    assert f"<td>Share of |attribution| shown</td><td>{after['mass_retained']:.1%}</td>" in html
    q, n = content.surrogate.heldout, content.surrogate.n_eval
    low, high = wilson_interval(round(q.agreement * n), n)
    assert f"95 % Wilson interval {low:.3f} to {high:.3f}) on {n} held-out rows" in html
    dropped = [d.feature for d in view.dropped]
    assert len(dropped) == 27 and '<th scope="col">dropped feature</th>' in html
    assert all(f"<td>{name}</td>" in html for name in dropped[:25])  # by name, then the rest in one line
    rest = view.dropped[25:]
    assert f"<td>2 more features</td><td></td><td>{plain(sum(d.attribution for d in rest), signed=True)}</td>" in html


def test_default_rows_are_the_highest_lowest_and_median_held_out_outputs(sample_workspace):
    from app.report.content import default_rows

    ws = sample_workspace
    test = np.asarray(ws.test_idx)
    p = ws.model.predict_proba(pd.DataFrame(ws.X.iloc[test]))[:, 1]
    order = np.argsort(p, kind="stable")
    rows, reasons, rule = default_rows()
    assert rows == [int(test[order[-1]]), int(test[order[0]]), int(test[order[len(p) // 2]])]
    assert reasons[0].startswith("highest P(malignant)") and "median" in rule and "143 held-out rows" in rule


def test_export_button_downloads_the_current_rows_report_and_a_viewer_may_start_it(report):
    """The navbar's callback returns the report of the row in the row box, as an HTML download; its role rule
    lets a viewer start that job by clicking, and nothing else."""
    from app.serve.callback_roles import required_role
    from app.callbacks.report import export_report
    from app.report.button import DOWNLOAD, EXPORT, STATUS

    content, html, cache = report
    progress = []
    with settings.overridden(cache_dir=cache):
        download, status = export_report(progress.append, 1, 17)
    assert download["filename"] == "candor-review-Breast-cancer--bundled-sample--row-17.html"
    assert '<section class="row-section" id="row-17">' in download["content"]
    assert 'id="row-3"' not in download["content"] and status == "report downloaded"
    assert progress == [("computing the report ...",), ("writing the HTML ...",)]
    key = f"..{DOWNLOAD}.data...{STATUS}.children.."
    assert required_role(key, {"changedPropIds": [f"{EXPORT}.n_clicks"]}, background=True) == "viewer"
    assert required_role(key, {"changedPropIds": ["row-input.value"]}, background=True) == "analyst"
    _, error = export_report(progress.append, 1, 10_000)
    assert "row 10000 does not exist" in str(error)


@pytest.mark.parametrize("argv, message", [
    (["--rows", "3,x"], "candor: error: --rows takes row numbers separated by commas, e.g. 3,17,42; got 'x'"),
    (["--rows", "3,569"], "candor: error: row 569 does not exist; rows are numbered 0 to 568"),
    (["--rows", "-1"], "candor: error: row -1 does not exist; rows are numbered 0 to 568"),
    ([], "candor: error: the following arguments are required: --out"),
    (["--model", "m.skops"], "candor: error: --model, --data and --target go together (CANDOR_MODEL, CANDOR_DATA, "
                             "CANDOR_TARGET)"),
])
def test_cli_errors_are_one_line_and_exit_2(argv, message, tmp_path, capsys, sample_workspace):
    from app.__main__ import main

    out = ["--out", str(tmp_path / "r.html")] if argv else []
    try:
        status = main(["report", *argv, *out])
    except SystemExit as exc:  # argparse's own errors
        status = exc.code
    err = capsys.readouterr().err
    assert status == 2 and err == message + "\n"
    assert not (tmp_path / "r.html").exists()


def test_a_feature_name_cannot_close_the_figure_block():
    """A user's column named like markup stays data: the block's JSON parses back to the exact name."""
    import plotly.graph_objects as go

    from app.report.render import Figures

    name = '</script><script>alert(1)</script><!--'
    block = Figures().add(go.Figure(go.Bar(x=[1.0], y=[name])))
    assert block.count("</script>") == 1 and "<script>alert" not in block
    assert _figures(block)["figure-1"]["data"][0]["y"] == [name]


EXPONENT = re.compile(r"(?<![\w.#])[-+]?\d+(?:\.\d+)?[eE][-+]?\d+\b")
"""A number in scientific notation ("2.415e-05", "3.3e-16"): the project's rule is that no reader sees one."""


def _strings(value, key=""):
    """Every string a figure shows (titles, texts, hover texts, tick labels), not its data arrays."""
    if isinstance(value, str):
        if key not in ("bdata", "dtype", "hovertemplate", "texttemplate", "tickformat", "hoverformat"):
            yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from _strings(v, k)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v, key)


def test_report_shows_no_number_in_scientific_notation(report, sample_workspace):
    """A new user read "lowest P(malignant) of the held-out rows (2.415e-05)" in the default report."""
    from app.report.content import default_rows

    _, html, _ = report
    text = re.sub(r"<script.*?</script>|<style.*?</style>", " ", html, flags=re.S)
    assert EXPONENT.search(text) is None, EXPONENT.search(text)
    shown = [s for fig in _figures(html).values() for s in _strings(fig)]
    assert [s for s in shown if EXPONENT.search(s)] == []
    ws = sample_workspace
    test = np.asarray(ws.test_idx)
    p = ws.model.predict_proba(pd.DataFrame(ws.X.iloc[test]))[:, 1]
    _, reasons, _ = default_rows()
    assert p.min() < 1e-4  # the sample's lowest held-out probability is one "g" formats as 2.415e-05
    assert reasons[1] == f"lowest P(malignant) of the held-out rows ({plain(p.min(), 4, trim=True)})"
    assert all(EXPONENT.search(r) is None for r in reasons)


def test_check_output_shows_no_number_in_scientific_notation(report, sample_workspace):
    """``python -m app check`` printed "additivity gap 3.3e-16": the pages' words are "< 0.000001"."""
    import io

    from app import services
    from app.cli.check import _pages

    out = io.StringIO()
    with settings.overridden(cache_dir=report[2]):  # the report's cache: its MUSE fit is reused
        _pages(services, 3, False, out)
    text = out.getvalue()
    assert EXPONENT.search(text) is None, text
    gap = services.local_view(3).shap.additivity_gap
    assert ("additivity gap < 0.000001;" in text) == (gap < 1e-6) and "shap    row 3" in text


def test_each_row_carries_its_story_test_and_counterfactuals_as_the_page_computes_them(report):
    """The story test's section per row (issue 25): the Persuasive page's service at the report's k, nothing held."""
    from html import escape

    from app.services import counterfactuals as cfs

    content, html, _ = report
    for sec in content.rows:
        t = cfs.story_view(sec.row, content.k).test
        assert sec.story is not None and sec.story.test.story == t.story
        part = html.split(f'id="row-{sec.row}"')[1].split("</section>")[0]
        assert "Story test: can the story" in part and escape(cfs.verdict(t)) in part
        for c in t.any_feature.shown:
            assert escape(f"{c.changes[0].feature}: {c.changes[0].before} → {c.changes[0].after}") in part


def test_report_cohorts_section_is_the_pages(report):
    """The report's Cohorts section draws the page's error tree (each leaf's error rate) and its ranking table."""
    content, html, _ = report
    v = content.cohorts
    assert "Cohorts: where the model errs and where the story misleads most" in html and v.cohort.n_rows == 143
    tree = next(f for f in _figures(html).values() if f["layout"]["title"]["text"].startswith("Error rate per"))
    assert _array(tree["data"][0]["x"]) == pytest.approx([leaf.error_rate for leaf in v.tree.leaves][::-1])
    assert all(f"<td>{c.name}</td><td>{c.n_rows:,}</td>" in html for c in v.ranked)
