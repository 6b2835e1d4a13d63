"""Row panels a build draws once for every viewer (issue 27): the Persuasive and Attention pages' row views of the
stored rows, as the server sends them.

Shared by 20 viewers, a row change on these pages computed the row live on its first ask in each worker: the
Persuasive page's measures (model calls) and figures about 120 ms of CPU a row, the Attention page's Integrated
Gradients, GradientExplainer and heatmaps about 180 ms, which saturated two cores (row change p95 1.4-1.7 s).
``python -m app build`` now draws both views of each stored row prepared ahead
(:func:`app.services.row_pool.prepared_rows`: those the "Random row" button picks from, at most 500, or every row of a
store of a whole table of at most 1,000 rows; the Descriptive page's warmed rows) with the finished store installed, so with the very code and values a server of that store runs live, and writes what the callback sends
(Plotly figures and Dash components as JSON text, ``persuasive_rows.json`` and ``attention_rows.json``). A click on
such a row at the page's opening controls (:func:`controls`) then sends those panels (:func:`stored_first`).

What is sent must be what the live path computes: the documents record the SHA-256 of Candor's Python sources and
the library versions that drew them (:func:`drawn_by`), and a server running other code or libraries ignores them
(every row live again, as for a store built before them or with ``--skip row_panels``). Any other control (another
k, rounding, grouping, a sensitive feature, an edited row) is computed live.
"""
from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Mapping
from pathlib import Path

from plotly.io.json import to_json_plotly

from app import services
from app.views.attention import draw_attention
from app.views.drawn import as_sent
from app.views.markdown import only_structure
from app.views.persuasive import draw_row
from store.provenance import library_versions
from workspace.errors import CandorError

FILES = {"persuasive": "persuasive_rows.json", "attention": "attention_rows.json"}
"""The store's file of each page's drawn row panels (:data:`store.format.HOLDS`)."""
COMPONENTS = {"dash_html_components": {"Div", "P", "Span", "Ul", "Li", "Details", "Summary", "Table", "Thead",
                                        "Tbody", "Tr", "Th", "Td"},
              "dash_bootstrap_components": {"Alert", "Badge", "Card", "CardHeader", "CardBody"},
              "dash_core_components": {"Markdown"}}
"""The components the two pages' row panels are drawn with, and their :data:`PROPS`: stored panels holding any other
component or property (a crafted store: a Markdown with raw HTML or a link, a frame) are not sent; the row is drawn
live (a store's manifest is not signed, SECURITY.md). A Markdown (:func:`app.views.markdown.markdown_panel`) also
needs raw HTML off and text :func:`app.views.markdown.only_structure` accepts."""
PROPS = {"children", "className", "class_name", "color", "text_color", "title", "dangerously_allow_html", "dedent"}
_SOURCES = ("app", "explainers", "store", "workspace", "sample_models")
"""Candor's packages whose Python sources :func:`drawn_by` fingerprints."""


def controls(page: str) -> tuple:
    """The arguments after the row with which ``page``'s callback draws a row at the page's opening controls:
    (k, rounding, grouping, sensitive) for the Persuasive page (:func:`app.views.persuasive.draw_row`), none for
    the Attention page."""
    return (services.persuasive_opening_k(), "exact", False, ()) if page == "persuasive" else ()


@functools.cache
def drawn_by() -> dict:
    """What drew the panels: the SHA-256 of Candor's Python sources (file names and contents, sorted) and the
    library versions (:func:`store.provenance.library_versions`); computed once per process."""
    root = Path(__file__).resolve().parents[2]
    digest = hashlib.sha256()
    for package in _SOURCES:
        for path in sorted((root / package).rglob("*.py")):
            digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes() + b"\0")
    return {"code_sha256": digest.hexdigest(), "libraries": library_versions()}


def _draw(page: str, row: int):
    return draw_row(row, *controls(page)) if page == "persuasive" else draw_attention(row)


def draw_rows(page: str, rows, progress=None) -> dict[str, str]:
    """``page``'s panels of each of ``rows`` at its opening controls, as the JSON text Dash would send, by row number
    (text); a row whose view cannot be drawn (:class:`~workspace.errors.CandorError`) is left out: computed live,
    its panels say why. ``progress(done, total)`` is called after each row."""
    drawn = {}
    for i, row in enumerate(rows):
        try:
            drawn[str(row)] = to_json_plotly(list(as_sent(_draw(page, row))))
        except CandorError:
            pass
        if progress is not None:
            progress(i + 1, len(rows))
    return drawn


def draw_stored(page: str, progress=None, drawn_rows=draw_rows) -> dict:
    """The document of ``page``'s drawn panels of the stored rows prepared ahead
    (:func:`app.services.row_pool.prepared_rows`: those "Random row" picks from, at most 500, or every row of a
    whole small table; the rows the warm-up draws on the Descriptive page), with the store being built installed.

    Each row's panels are kept as the JSON text Dash would send, parsed on the row's ask (1-3 ms): parsed whole
    when the store opens, breast cancer's 143 rows (8 MB of JSON) took 0.2-1.0 s of every server start and 36 MB
    of each worker's memory.

    ``drawn_rows(page, rows, progress)`` draws them (:func:`draw_rows`; the build's Dask workers share them out,
    :mod:`app.cli.build_panels`).

    Raises
    ------
    CandorError
        If the page does not apply (no attention model): the build lists the file as skipped.
    """
    if page == "attention" and not services.has_attention_model():
        raise CandorError("no attention model is loaded: the Attention page is not served")
    drawn = drawn_rows(page, services.prepared_rows(), progress)
    return {"page": page, "controls": json.loads(json.dumps(controls(page))), "drawn_by": drawn_by(), "rows": drawn}


def stored(page: str, row, args: tuple) -> tuple | None:
    """``page``'s panels of ``row`` at ``args`` as the build drew them, or None: not a stored row, other controls,
    no such file in the store (built before it, or skipped), or drawn by other code or libraries."""
    number = services.stored_row_number(row)
    st = services.built_store()
    if number is None or st is None or args != controls(page):
        return None
    doc = st.json(FILES[page])
    if not isinstance(doc, dict) or doc.get("drawn_by") != drawn_by() or not isinstance(doc.get("rows"), Mapping):
        return None
    found = doc["rows"].get(str(number))
    panels = json.loads(found) if isinstance(found, str) else None
    return tuple(panels) if isinstance(panels, list) and _drawable(panels) else None


def _drawable(value) -> bool:
    """Whether every component in ``value`` is one the pages draw (:data:`COMPONENTS`, :data:`PROPS`)."""
    if isinstance(value, list):
        return all(_drawable(v) for v in value)
    if not isinstance(value, dict):
        return True
    if "namespace" in value or "props" in value:
        props = value.get("props")
        if value.get("type") not in COMPONENTS.get(value.get("namespace"), ()) or not isinstance(props, dict) \
                or not set(props) <= PROPS:
            return False
        if value.get("type") == "Markdown":
            return props.get("dangerously_allow_html") is False and only_structure(props.get("children"))
        if "dangerously_allow_html" in props or "dedent" in props:
            return False
    return all(_drawable(v) for v in value.values())


def stored_first(page: str, draw):
    """``draw(row, *args)``, answered from the store when it holds the panels (:func:`stored`)."""
    @functools.wraps(draw)
    def call(row, *args):
        found = stored(page, row, args)
        return found if found is not None else draw(row, *args)

    call.cache_clear = getattr(draw, "cache_clear", lambda: None)
    return call
