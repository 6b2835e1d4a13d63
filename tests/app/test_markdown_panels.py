"""Markdown panels (app/views/markdown.py) draw user text as itself, checked by an independent CommonMark renderer."""
import random
import string
import time

import pytest

from app.views.markdown import markdown_panel, md_table, md_text, only_structure
from tests.markdown_render import rendered_html, rendered_text

HOSTILE = ['<a href="https://evil.example">x</a>', "**bold** _it_ [link](javascript:alert(1))", "a|b", "1. item",
           "# heading", "`code`", "<https://evil.example>", "&amp; &lt;", "back\\slash", "- list", "+0.123",
           "![img](https://evil.example/x.png)", "> quote", "a  \nb", "___", "~~gone~~", "[x]: https://evil.example"]


@pytest.mark.parametrize("text", HOSTILE)
def test_user_text_renders_as_itself_and_never_as_markup(text):
    out = rendered_html(md_text(text))
    assert rendered_text(md_text(text)) == " ".join(text.split())
    for tag in ("<a", "<img", "<em", "<strong", "<code", "<h1", "<ol", "<ul", "<blockquote", "<del", "<hr"):
        assert tag not in out, (text, out)


def test_unescaped_the_same_text_would_be_markup():
    """The oracle can tell: without the escapes these strings render as a link, emphasis and a heading."""
    assert "<a href" in rendered_html("[link](https://evil.example)")
    assert "<strong>" in rendered_html("**bold**") and "<h1>" in rendered_html("# heading")


def test_random_printable_text_round_trips():
    rng = random.Random(0)
    for _ in range(300):
        text = "".join(rng.choice(string.printable[:95]) for _ in range(rng.randint(1, 40)))
        assert rendered_text(md_text(text)) == " ".join(text.split()), repr(text)


def test_a_table_keeps_its_cells_whatever_they_hold():
    rows = [["a|b", 1, "+0.5000"], ["<td>", 2, "-0.0100"], ["| x |", 3, "10.0%"]]
    out = rendered_html(md_table(("feature", "rank", "value"), rows, right=(False, True, True)))
    assert out.count("<tr>") == 4 and out.count("<td ") == 9 and out.count("<th ") == 3
    assert out.count('style="text-align:right"') == 8  # two right-aligned columns, four rows
    assert "<td style=\"text-align:left\">a|b</td>" in out and "&lt;td&gt;" in out
    with pytest.raises(ValueError, match="2 cells under 3 headings"):
        md_table(("a", "b", "c"), [[1, 2]])


def test_only_what_the_builders_write_counts_as_a_panel():
    """What a stored panel's Markdown may hold (a store is not signed): the builders' text and tables pass; a link,
    an image, an autolink, HTML, a named entity or a reference to a letter do not."""
    built = md_table(("a", "b"), [[t, 1] for t in HOSTILE]) + "\n\n- **shown:** " + md_text(HOSTILE[0])
    assert only_structure(built)
    for crafted in ("[x](https://evil.example)", "![i](x.png)", "<https://evil.example>", "www.evil.example",
                    "<b>x</b>", "&lt;b&gt;", "&#97;", "a\\b", None):
        assert not only_structure(crafted), crafted
    for crafted in ("[x](https://evil.example)", "<https://evil.example>"):  # and the oracle agrees they are links
        assert "<a href" in rendered_html(crafted)


def test_the_panel_renders_no_raw_html():
    panel = markdown_panel(md_text("<b>x</b>"), "c")
    assert panel.dangerously_allow_html is False and panel.className == "c"


_APP = """
import json, sys
sys.path.insert(0, sys.argv[2])
from dash import Dash, html
from app.views.markdown import markdown_panel, md_table, md_text, only_structure
texts = json.loads(sys.argv[3])
app = Dash(__name__)
app.layout = html.Div([markdown_panel(md_text(t), "m") for t in texts]
                      + [markdown_panel(md_table(("name", "n"), [(t, i) for i, t in enumerate(texts)]), "t")])
app.run(port=int(sys.argv[1]), debug=False)
"""


@pytest.mark.e2e
def test_dash_markdown_in_chromium_draws_user_text_as_itself(tmp_path):
    """The renderer that matters is Dash's own ``dcc.Markdown`` in a browser (it honoured backslash escapes only for
    some characters: ``\\<`` was drawn with its backslash): each text, and each table cell, reads as written."""
    import json
    import sys
    from pathlib import Path

    from selenium.webdriver.common.by import By

    from tests.e2e.browser import chromium_driver
    from tests.e2e.serving import _serving

    root = str(Path(__file__).resolve().parents[2])
    texts = HOSTILE + ["x < y & z > w", "50% | 1/2 = 0.5", "__proto__", "constructor"]
    cmd = [sys.executable, "-c", _APP, "{port}", root, json.dumps(texts)]
    with _serving(cmd, {}, tmp_path / "server.log", "/", 60) as base, chromium_driver() as driver:
        driver.get(base)
        deadline = time.time() + 30
        while len(driver.find_elements(By.CSS_SELECTOR, ".t td")) < 2 * len(texts):
            assert time.time() < deadline, "the Markdown panels were not drawn"
            time.sleep(0.2)
        shown = driver.execute_script("return Array.from(document.querySelectorAll('.m')).map(e => e.innerText.trim());")
        assert shown == [" ".join(t.split()) for t in texts]
        cells = driver.execute_script("return Array.from(document.querySelectorAll('.t td')).map(e => e.innerText.trim());")
        assert cells[::2] == [" ".join(t.split()) for t in texts] and cells[1::2] == [str(i) for i in range(len(texts))]
        assert not driver.find_elements(By.CSS_SELECTOR, ".m a, .m img, .m strong, .m em, .m h1, .m code, .t a, .t img")
