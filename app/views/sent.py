"""Send a row page only the panels that changed (issue 25: a what-if edit settled in the browser within 300 ms).

A row page's callback answers every panel at each change. When an edit leaves a panel as it was (a tree model's
edit within the same leaves: the same SHAP values, the same story, the same table of dropped features), sending it
again is not free in the browser: Dash mounts every component of the new ``children`` afresh, and each mount
dispatches a state reset that re-runs every mounted component's selector (Dash 4's renderer). On the Persuasive
page (554 components with the what-if editor open), an edit that re-sent an unchanged table of 27 dropped features
(148 components) settled in 600-1,000 ms against 300-400 ms for an edit that changed it (Chromium profile, 2 of
every 5 edits of ``benchmarks.tablestakes``).

The page keeps, in a store of its own layout (:func:`store`), a digest of what each panel last received;
:func:`only_changed` replaces a panel whose new value has the same digest by ``no_update``. The store is part of the
page's layout, so a page opened afresh starts without digests and receives everything. A digest the browser
forges only withholds that browser's own panels, never anyone else's.
"""
from __future__ import annotations

import hashlib
import json
import zlib
from typing import Sequence

from dash import dcc, no_update
from plotly.io.json import to_json_plotly

MAX_PANELS = 64
"""Most panels a page's digests may name (more is not a store this module wrote: every panel is sent)."""


def store_id(page: str) -> dict:
    """The id of ``page``'s store of digests (a dict id: one per row page)."""
    return {"type": "sent-digests", "page": page}


def store(page: str) -> dcc.Store:
    """``page``'s store of digests, empty as the page opens (put it in the page's layout, not the shell's)."""
    return dcc.Store(id=store_id(page), data=None)


def digest(value) -> str:
    """A 16-hex-digit digest of ``value`` as Dash sends it (components and figures through Plotly's JSON encoder).

    Parameters
    ----------
    value : a callback output's value (a component tree, a figure, a dict, a string, ...)

    Returns
    -------
    str
        BLAKE2b (8 bytes) of its JSON text: equal values, equal digests.
    """
    return hashlib.blake2b(to_json_plotly(value).encode(), digest_size=8).hexdigest()


def as_text(values: Sequence) -> tuple[bytes, ...]:
    """Callback outputs kept for later as compact JSON text, as Dash sends them (Plotly's encoder; a component as its
    JSON, which Dash's renderer reads as the component), compressed (zlib, level 1). Text holds about a quarter of the
    memory of the figures' dicts and the components' objects, compressed a third of that (Adult's 500 prepared rows:
    5.9 MB of text, 2.0 MB compressed, part of the server's peak memory against the peer's, issue 23);
    :func:`from_text` reads them back (about 0.1 ms for a row page's panels, 0.03 of it to decompress)."""
    return tuple(zlib.compress(to_json_plotly(v).encode(), 1) for v in values)


def from_text(kept: Sequence[bytes]) -> tuple:
    """Outputs kept by :func:`as_text`, ready to return from a callback (dicts: the JSON Dash sends)."""
    return tuple(json.loads(zlib.decompress(v)) for v in kept)


def only_changed(values: Sequence, sent) -> tuple[list, dict]:
    """``values`` with each one the browser already shows replaced by ``no_update``, and the digests to store.

    Parameters
    ----------
    values : sequence
        A callback's panel outputs, in a fixed order (``no_update`` where the callback leaves one alone).
    sent : dict or None
        The page's store (:func:`store`): ``{"0": digest, ...}`` of what each panel last received; anything else
        (``None``, a forged value) means nothing is known and every panel is sent.

    Returns
    -------
    values : list
        As given, but ``no_update`` where the new value's digest equals the stored one.
    digests : dict
        The store's new data: each panel's digest (a panel left alone keeps its earlier one).
    """
    known = sent if _well_formed(sent) else {}
    out, now = [], {}
    for i, value in enumerate(values):
        key = str(i)
        if value is no_update:
            if key in known:
                now[key] = known[key]
            out.append(value)
            continue
        now[key] = digest(value)
        out.append(no_update if known.get(key) == now[key] else value)
    return out, now


def _well_formed(sent) -> bool:
    return (isinstance(sent, dict) and len(sent) <= MAX_PANELS
            and all(isinstance(k, str) and isinstance(v, str) and len(v) <= 64 for k, v in sent.items()))
