r"""Text panels drawn as one Markdown component each, for pages a what-if edit redraws (issue 25).

Every component a page mounts costs the browser at each update: Dash 4's renderer runs each mounted component's
selector on every state change of a callback's round trip (about 20 a what-if edit). On the Persuasive page the
claim-by-claim check, the table of dropped features and the cost table were 166 of its 441 components (the sample,
editor open); drawn as one :class:`dash.dcc.Markdown` each they are 3, and an edit settled 25 ms sooner at the
median, 43 ms at the 95th percentile (30 edits alternating between this and the old code's server, breast cancer).

User text (feature names, sentences built from them) goes through :func:`md_text`: every ASCII punctuation character
becomes a numeric character reference (``&#60;`` for ``<``), which CommonMark decodes to the literal character and
never reads as structure, so a name is drawn as itself, never as a link, emphasis, HTML, a heading or a table cell
boundary. Not backslash escapes: the Markdown renderer of Dash 4.4's ``dcc.Markdown`` honours them for a few
characters only (``\<``, ``\=``, ``\:`` were drawn with their backslash). Raw HTML is not rendered
(``dangerously_allow_html`` stays off).
"""
from __future__ import annotations

import re
from typing import Sequence

from dash import dcc

_PUNCTUATION = re.compile(r"[!-/:-@\[-`{-~]")
_REFERENCE = re.compile(r"&#[0-9]{2,3};")
_STRUCTURE = frozenset("|:-*")
"""The only ASCII punctuation the panels' Markdown holds outside character references: table pipes and alignment
colons, list dashes, bold stars (and ``:`` after a bold word). With none of ``[ ] ( ) < > ! / . @ \\`` no link,
image, autolink or HTML can be written."""


def md_text(text) -> str:
    """``text`` as Markdown that renders as exactly ``text``.

    Parameters
    ----------
    text : object
        Shown as ``str(text)``; runs of whitespace (line breaks included) become one space, as HTML shows them.

    Returns
    -------
    str
        Each ASCII punctuation character as a decimal numeric character reference (CommonMark 0.31, section 2.5).
    """
    return _PUNCTUATION.sub(lambda m: f"&#{ord(m.group())};", " ".join(str(text).split()))


def md_table(header: Sequence[str], rows: Sequence[Sequence], right: Sequence[bool] = ()) -> str:
    """A GitHub-flavoured Markdown table of escaped cells.

    Parameters
    ----------
    header : sequence of str
        Column headings (escaped here).
    rows : sequence of sequences
        Cells, ``str()`` of each escaped here; each row as long as ``header``.
    right : sequence of bool
        Per column, whether it is right-aligned (numbers); left where not given.

    Raises
    ------
    ValueError
        A row whose length differs from the header's.
    """
    n = len(header)
    align = [":--" if not (i < len(right) and right[i]) else "--:" for i in range(n)]
    lines = ["| " + " | ".join(md_text(h) for h in header) + " |", "|" + "|".join(align) + "|"]
    for row in rows:
        if len(row) != n:
            raise ValueError(f"a row of {len(row)} cells under {n} headings")
        lines.append("| " + " | ".join(md_text(c) for c in row) + " |")
    return "\n".join(lines)


def only_structure(markdown) -> bool:
    """Whether ``markdown`` could only draw text, tables, lists and bold: outside numeric character references of
    ASCII punctuation (what :func:`md_text` writes) it holds no ASCII punctuation but ``| : - *``. What a store's
    stored panels must satisfy to be sent (:mod:`app.views.stored_panels`: a store's manifest is not signed)."""
    if not isinstance(markdown, str):
        return False
    for ref in _REFERENCE.findall(markdown):
        if not _PUNCTUATION.fullmatch(chr(int(ref[2:-1]))):
            return False
    rest = _REFERENCE.sub("", markdown)
    return all(ch in _STRUCTURE for ch in _PUNCTUATION.findall(rest))


def markdown_panel(markdown: str, class_name: str) -> dcc.Markdown:
    """One component drawing ``markdown`` (built with :func:`md_text` and :func:`md_table`), raw HTML not rendered."""
    return dcc.Markdown(markdown, className=class_name, dangerously_allow_html=False, dedent=False)
