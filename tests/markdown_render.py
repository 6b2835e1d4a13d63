"""What a Markdown panel shows, by an independent CommonMark renderer (markdown-it-py, GitHub's table extension
on): the oracle of :mod:`app.views.markdown`'s escaping, and the text tests read from a page's Markdown panels."""
from __future__ import annotations

import html
import json
import re

from markdown_it import MarkdownIt

_MD = MarkdownIt("commonmark", {"html": False}).enable("table")


def rendered_html(markdown: str) -> str:
    """``markdown`` as HTML (raw HTML in it is escaped, as ``dcc.Markdown`` with ``dangerously_allow_html=False``)."""
    return _MD.render(markdown)


def rendered_text(markdown: str) -> str:
    """The text a reader sees: tags dropped (a cell or line boundary as one space), entities decoded."""
    return html.unescape(" ".join(re.sub(r"<[^>]+>", " ", rendered_html(markdown)).split()))


def component_text(component) -> str:
    """A component tree as JSON text with each Markdown component's children replaced by :func:`rendered_text`."""
    def render(node):
        if isinstance(node, dict):
            if node.get("type") == "Markdown" and isinstance(node.get("props", {}).get("children"), str):
                return {**node, "props": {**node["props"], "children": rendered_text(node["props"]["children"])}}
            return {k: render(v) for k, v in node.items()}
        if isinstance(node, list):
            return [render(v) for v in node]
        return node

    raw = json.loads(json.dumps(component, default=lambda o: o.to_plotly_json()))
    return json.dumps(render(raw), ensure_ascii=False)
