"""Text in figures: user strings made literal for Plotly (:func:`esc`), long labels wrapped (:func:`tick_label`),
the room they take (:func:`text_px`, :func:`label_margin`) and a figure's text alternative (:func:`alt_text`).

:mod:`app.views.figures` re-exports these; figure modules import them from there.
"""
from __future__ import annotations

import functools

FONT_FAMILY = 'Arial, "Liberation Sans", Helvetica, sans-serif'
"""The figures' font (:mod:`app.views.figures`' template): one set of widths on every system (Liberation Sans and
Helvetica have Arial's), so that :func:`label_margin` can size a figure's margins before it is drawn. Plotly's own ("Open Sans", then Verdana,
then Arial) is Verdana on Windows and macOS, a fifth wider."""
def esc(text) -> str:
    """User text as Plotly must draw it literally: ``&``, ``<`` and ``>`` as HTML entities.

    Parameters
    ----------
    text : object
        Any value; it is shown as ``str(text)``.

    Returns
    -------
    str
        ``'<a href="x">y</a>'`` becomes ``'&lt;a href="x"&gt;y&lt;/a&gt;'``, which Plotly draws as typed
        (no link, no line break, no style). Distinct inputs stay distinct.
    """
    return str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def esc_all(texts) -> list[str]:
    """:func:`esc` of every item of ``texts``, as a list."""
    return [esc(t) for t in texts]


def alt_text(text: str) -> str:
    """``text`` as a figure's plain-text alternative: tags dropped, any other angle bracket made harmless.

    The alternative holds user text (feature names); it is read into an ``aria-label``, never drawn, but no
    user text reaches Plotly as markup (tests/security/test_markup.py), so ``<a href=...>x</a>`` becomes ``x``.
    """
    import html as _html
    import re

    plain_text = re.sub(r"<[^<>]*>", "", _html.unescape(str(text)))
    return plain_text.replace("<", "‹").replace(">", "›")


def wrap_note(text: str, width: int = 90) -> str:
    """A long ``<sup>`` note of a title broken into lines of about ``width`` characters (Plotly never wraps titles,
    so a long note ran off the figure's right edge: "± 1 standard error ... (their order is")."""
    import textwrap

    return "<br>".join(textwrap.wrap(text, width, break_long_words=False, break_on_hyphens=False)) or text


def unidentified_marks(e, order, labels: list[str], note: str) -> tuple[list[str], str]:
    """LIME's features its neighbourhood did not identify (``e.params["unidentified"]``, fewer than
    ``params["min_changes"]`` changes a fit; :class:`explainers.LimeExplainer`): their drawn labels get ``"† "``
    and the title note one line saying so. ``order``: the drawn features' indices, ``labels`` their labels."""
    out = set((e.params.get("unidentified") or ()) if isinstance(e.params, dict) else ())
    marked = [e.feature_names[j] in out for j in order]
    if not any(marked):
        return labels, note
    line = wrap_note(f"†: {sum(marked)} shown not identified in this neighbourhood (changed in fewer than "
                     f"{e.params.get('min_changes', '?')} samples a fit), not judged for convergence")
    return ([("† " if m else "") + t for m, t in zip(marked, labels)],
            note + "<br><sup>" + line.replace("<br>", "</sup><br><sup>") + "</sup>")


def tick_label(text: str, width: int = 26, max_lines: int = 3) -> str:
    """An escaped axis label broken into lines of at most ``width`` characters (at spaces and ``_``), at most
    ``max_lines`` lines (the rest ends in "…"), so a long feature name is neither clipped by the figure's
    edge nor squeezing the plot to nothing. ``text`` is user text: it is escaped here."""
    import textwrap

    raw = str(text)
    if len(raw) <= width:
        return esc(raw)
    spaced = raw.replace("_", "_\u200b")  # a break opportunity after each underscore, removed below
    lines = [ln.replace("\u200b", "") for ln in textwrap.wrap(spaced, width, break_on_hyphens=True)]
    if len(lines) > max_lines:
        lines = lines[:max_lines]
        lines[-1] = lines[-1][: width - 1].rstrip() + "…"
    return "<br>".join(esc(ln) for ln in lines)


def tick_labels(texts, width: int = 26) -> list[str]:
    """:func:`tick_label` of each text, kept distinct (Plotly merges equal category names into one bar): a
    label cut to the same text as an earlier one gets its position, e.g. ``"… (2)"``."""
    out, seen = [], set()
    for i, t in enumerate(texts):
        label = tick_label(t, width)
        if label in seen:
            label = f"{label} ({i + 1})"
        seen.add(label)
        out.append(label)
    return out


@functools.lru_cache(maxsize=64)
def _lines_of(texts: tuple, width: int = 26) -> int:
    """The most lines any of ``texts`` takes as a tick label (:func:`tick_labels` at ``width``), memoized: a row
    page asks it of every feature's widest label on each row change (108 features: a few ms each time)."""
    return _label_lines(tick_labels(texts, width))


def _label_lines(labels) -> int:
    """The largest number of lines of ``labels`` (as :func:`tick_label` wrote them)."""
    return max((str(t).count("<br>") + 1 for t in labels), default=1)


_ARIAL = dict(zip(
    " !\"#$%&'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_`abcdefghijklmnopqrstuvwxyz{|}~",
    (278, 278, 355, 556, 556, 889, 667, 191, 333, 333, 389, 584, 278, 333, 278, 278, *(556,) * 10, 278, 278, 584,
     584, 584, 556, 1015, 667, 667, 722, 722, 667, 611, 778, 722, 278, 500, 667, 556, 833, 722, 778, 667, 778, 722,
     667, 611, 722, 667, 944, 667, 667, 611, 278, 278, 278, 469, 556, 333, 556, 556, 500, 556, 556, 278, 556, 556,
     222, 222, 500, 222, 833, 556, 556, 556, 556, 333, 500, 278, 556, 500, 722, 500, 500, 500, 334, 260, 334, 584)))
_ARIAL.update({"±": 584, "−": 584})  # a value text's "± SE" and a minus sign as typeset
"""Advance widths of Arial's printable ASCII characters, in thousandths of the font size (the metrics Helvetica
published, which Arial and Liberation Sans share)."""


def text_px(text: str, font_size: float = 12) -> float:
    """Width in pixels of one line of ``text`` drawn in :data:`FONT_FAMILY` at ``font_size`` px.

    Arial's own width for ASCII, ± and −; any other character counts as a full em (as wide as a CJK ideograph, wider
    than an accented letter), so the estimate errs on the wide side. HTML entities and tags, as Plotly
    labels carry them (``&lt;``, ``<sup>``), are read as the text they draw.
    """
    import html
    import re

    shown = html.unescape(re.sub(r"<[^>]+>", "", str(text)))
    return sum(_ARIAL.get(ch, 1000) for ch in shown) * font_size / 1000


def label_margin(labels, font_size: int = 12) -> int:
    """Left margin (px) that holds the widest line of ``labels`` (tick labels as :func:`tick_label` wrote them),
    measured by :func:`text_px`, plus 14 px between the labels and the plot.

    The row figures are drawn with Plotly's ``automargin`` off (:func:`app.views.figures.waterfall`, :func:`app.views.figures.attribution_bar`):
    automargin measures every label it drew and may draw the figure again, 8-10 ms of each row change in
    Chromium; their margins are this one. Other figures keep automargin, which starts from this margin.
    """
    widest = max((text_px(line, font_size) for t in labels for line in str(t).split("<br>")), default=0)
    return int(widest) + 14
