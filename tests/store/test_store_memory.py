"""A store's files read without copies of their bytes (issue 23: peak memory at the server's start).

The sample's store holds ``persuasive_rows.json`` of 21.7 MB (569 rows' panels as JSON text). Reading it kept its
blocks in a list and joined them (two copies), then parsed the bytes while they were still held (bytes, their
decoded text and the parsed object at once): about 42 MB above the server's resident memory at its start, its
peak. Oracles: ``json.loads`` and ``hashlib`` of the file, and the sizes the old reading held.
"""
from __future__ import annotations

import hashlib
import json
import tracemalloc

import pytest

from store.manifest import _checked_file
from store.packed import PackedTexts, pack_panels
from store.structure import parse_json
from workspace.errors import CandorError


@pytest.fixture(scope="module")
def big_json(tmp_path_factory):
    """A JSON object of 400 rows' panel text (about 8 MB), as ``persuasive_rows.json`` holds them."""
    doc = {"rows": {str(r): json.dumps([{"props": {"children": f"row {r} " + "x" * 20_000}, "type": "Div"}])
                    for r in range(400)}}
    path = tmp_path_factory.mktemp("store") / "persuasive_rows.json"
    path.write_text(json.dumps(doc))
    return path


def _peak(fn):
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        out = fn()
        return out, tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()


def test_a_file_is_read_once_into_one_buffer(big_json):
    raw = big_json.read_bytes()
    entry = {"bytes": len(raw), "sha256": hashlib.sha256(raw).hexdigest()}
    data, peak = _peak(lambda: _checked_file(big_json.parent, big_json.name, entry))
    assert bytes(data) == raw
    assert peak < 1.1 * len(raw), (peak, len(raw))  # blocks then their join: twice the file


def test_parsing_never_holds_the_bytes_the_text_and_the_object_at_once(big_json):
    raw = big_json.read_bytes()
    expected = json.loads(raw)
    value, peak = _peak(lambda: parse_json(big_json.parent, big_json.name, bytearray(raw)))  # the only reference
    assert value == expected
    # held at once before: the bytes, their text and the parsed rows (each about the file's size); now the bytes and
    # the text, then the text and the rows, never three
    assert peak < 2.3 * len(raw), (peak, len(raw))
    data = bytearray(raw)
    parse_json(big_json.parent, big_json.name, data)
    assert len(data) == 0  # let go once decoded


def test_bytes_that_are_not_a_json_object_are_still_refused(tmp_path):
    for bad in (b"\xff\xfe{", b"[1, 2]", b"{"):
        with pytest.raises(CandorError, match="is not a JSON object"):
            parse_json(tmp_path, "x.json", bytearray(bad))


def test_the_row_panels_are_held_compressed_and_read_back_as_they_were(big_json):
    """Kept as text, Adult's 500 prepared rows' Persuasive panels held 19.1 MB for the server's life (issue 23)."""
    raw = big_json.read_bytes()
    expected = json.loads(raw)["rows"]
    data = bytearray(raw)
    tracemalloc.start()
    try:
        documents = {"persuasive_rows.json": parse_json(big_json.parent, big_json.name, data),
                     "muse_default.json": {"rows": {"1": "not a panel file: left alone"}}}
        parsed = tracemalloc.get_traced_memory()[0]
        pack_panels(documents)
        packed = tracemalloc.get_traced_memory()[0]  # the texts let go, their compressed copies kept
    finally:
        tracemalloc.stop()
    text_bytes = sum(len(v) for v in expected.values())
    assert parsed > text_bytes and packed < 0.05 * text_bytes, (parsed, packed, text_bytes)
    rows = documents["persuasive_rows.json"]["rows"]
    assert isinstance(rows, PackedTexts) and dict(rows) == expected and rows.get("no such row") is None
    assert documents["muse_default.json"] == {"rows": {"1": "not a panel file: left alone"}}
    odd = PackedTexts({"a": "\ud800 a lone surrogate, as json.loads gives it", "b": 7})
    assert odd["a"] == "\ud800 a lone surrogate, as json.loads gives it" and odd["b"] == 7
