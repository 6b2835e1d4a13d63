"""The row panels a store holds (``persuasive_rows.json``, ``attention_rows.json``) kept compressed once opened.

Each row's panels are the JSON text the server sends for it (``app/views/stored_panels.py``), parsed only when the
row is asked. Kept as text, Adult's 500 prepared rows of ``persuasive_rows.json`` held 19.1 MB of the server for the
whole of its life, part of its peak memory against the peer's (issue 23); compressed (zlib, level 1) 4.0 MB, in
0.17 s of the open, and a row's text costs 0.1 ms more to read.
"""
from __future__ import annotations

import zlib
from collections.abc import Iterator, Mapping

PANEL_FILES = ("persuasive_rows.json", "attention_rows.json")
"""The store's JSON files whose ``rows`` map a row number to the text of its panels."""


class PackedTexts(Mapping):
    """A read-only mapping of keys to texts, each held compressed and decompressed when read.

    Parameters
    ----------
    texts : dict of str to object
        Emptied as it is read (each text let go once compressed): the texts and their compressed copies are never
        all held at once. A value that is not a ``str`` is kept as it is.
    """

    def __init__(self, texts: dict) -> None:
        self._packed: dict = {}
        while texts:
            key, value = texts.popitem()
            self._packed[key] = zlib.compress(value.encode("utf-8", "surrogatepass"), 1) if type(value) is str \
                else (value,)

    def __getitem__(self, key):
        value = self._packed[key]
        return value[0] if type(value) is tuple else zlib.decompress(value).decode("utf-8", "surrogatepass")

    def __iter__(self) -> Iterator:
        return iter(self._packed)

    def __len__(self) -> int:
        return len(self._packed)


def pack_panels(documents: dict) -> None:
    """Each of :data:`PANEL_FILES` in ``documents`` (parsed JSON by file name) with its ``rows`` made
    :class:`PackedTexts`, in place; anything else (a file without such ``rows``) is left as it is."""
    for name in PANEL_FILES:
        doc = documents.get(name)
        if isinstance(doc, dict) and isinstance(doc.get("rows"), dict):
            doc["rows"] = PackedTexts(doc["rows"])
