"""The Persuasive and Attention pages' row panels drawn by the build (issue 27, app/views/stored_panels.py).

One store of the bundled sample is built per module with its first 3 held-out rows (the global parts skipped).
Oracle: the live drawing of the same row and controls, computed afresh (the services' caches emptied) in a process
serving that store, compared as the JSON Dash sends.
"""
from __future__ import annotations

import json
import shutil

import pytest
from plotly.io.json import to_json_plotly

from workspace.errors import CandorError
from tests.store.building import built_sample_store
from workspace.settings import Settings

ROWS = 3


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """``(manifest, workspace, store folder)``; the services are put back afterwards."""
    with built_sample_store(tmp_path_factory.mktemp("panels-build"), max_rows=ROWS, chunk_rows=4,
                            skip=("persuasive", "surrogates", "permutation_importance", "cohorts")) as found:
        yield found


def _serve(folder, ws):
    from app import services
    from store.read import open_for

    settings = Settings(store=folder, warm=False)
    services.use_built_store(open_for(settings, ws))
    services.init(ws, warm=False)  # nothing computed: the live oracle starts from the stored values only


def _sent(panels) -> list:
    """``panels`` as the JSON Dash sends, parsed (key order aside)."""
    from app.views.drawn import as_sent

    return json.loads(to_json_plotly(list(as_sent(tuple(panels)))))


def test_every_stored_row_is_served_as_its_live_drawing(built, monkeypatch):
    from app import services
    from app.callbacks import attention as attention_cb, persuasive as persuasive_cb
    from app.views import stored_panels
    from app.views.attention import draw_attention, render_attention
    from app.views.persuasive import draw_row, render_persuasive

    from app.cli import build_panels

    manifest, ws, folder = built
    assert tuple(stored_panels.FILES.values()) == build_panels.FILES
    assert {"persuasive_rows.json", "attention_rows.json"} <= set(manifest["files"])
    _serve(folder, ws)
    rows = services.prepared_rows()
    assert rows == sorted(int(r) for r in ws.test_idx[:ROWS])
    k = stored_panels.controls("persuasive")[0]
    assert k == 3  # the slider's opening value on the sample's 30 columns
    stored = {(page, r): stored_panels.stored(page, r, stored_panels.controls(page))
              for page in stored_panels.FILES for r in rows}
    assert all(v is not None for v in stored.values())
    for r in rows:
        services.init(ws, warm=False)  # the oracle computes the row from nothing but the store's values
        live = _sent(draw_row(r, k, "exact", False, ()))
        assert _sent(stored["persuasive", r]) == live
        assert live[5]["data"][0]["type"] == "bar" and "k = 3" in json.dumps(live[0])  # a drawing, not an error
        assert _sent(stored["attention", r]) == _sent(draw_attention(r))

    # the callbacks send them without computing: every live path refuses now
    def refuse(*_):
        raise CandorError("computed live")

    monkeypatch.setattr(services, "persuasive_view", refuse)
    monkeypatch.setattr(services, "attention_view", refuse)
    services.init(ws, warm=False)
    persuasive_cb._row_drawn.cache_clear()
    attention_cb._attention_drawn.cache_clear()
    r = rows[-1]
    assert _sent(render_persuasive(r, k, "exact", [], [], persuasive_cb._row_drawn)) == _sent(stored["persuasive", r])
    assert _sent(render_attention(r, attention_cb._attention_drawn)) == _sent(stored["attention", r])
    # other controls, a row not stored, an edited row: computed live (refused here, so the panels say so)
    for other in ((r, 2, "exact", [], []), (r, k, "0.1", [], []), (r, k, "exact", ["on"], []),
                  (r, k, "exact", [], [str(ws.X.columns[0])]), (int(ws.train_idx[0]), k, "exact", [], []),
                  ({"row": r, "edits": {str(ws.X.columns[0]): 1.0}}, k, "exact", [], [])):
        assert "computed live" in json.dumps(_sent(render_persuasive(*other, persuasive_cb._row_drawn))), other
    assert "computed live" in json.dumps(_sent(render_attention(int(ws.train_idx[0]), attention_cb._attention_drawn)))


def test_a_store_without_panels_or_drawn_by_other_code_is_read_and_drawn_live(built, tmp_path, monkeypatch):
    from app import services
    from app.views import stored_panels
    from app.views.persuasive import draw_row

    _, ws, folder = built
    old = tmp_path / "old"
    shutil.copytree(folder, old)
    manifest = json.loads((old / "manifest.json").read_text())
    for name in stored_panels.FILES.values():  # as a store built before them
        (old / name).unlink()
        del manifest["files"][name]
        manifest["skipped"].pop(name, None)
    (old / "manifest.json").write_text(json.dumps(manifest))
    _serve(old, ws)
    r = int(ws.test_idx[0])
    controls = stored_panels.controls("persuasive")
    assert services.built_store() is not None and services.shap_row(r) is not None
    assert stored_panels.stored("persuasive", r, controls) is None
    assert _sent(draw_row(r, *controls))[5]["data"][0]["type"] == "bar"

    _serve(folder, ws)
    assert stored_panels.stored("persuasive", r, controls) is not None
    monkeypatch.setattr(stored_panels, "drawn_by", lambda: {"code_sha256": "another version", "libraries": {}})
    assert stored_panels.stored("persuasive", r, controls) is None
    assert stored_panels.stored("attention", r, ()) is None


def test_stored_panels_with_a_component_the_pages_never_draw_are_drawn_live(built):
    from app import services
    from app.views import stored_panels

    _, ws, folder = built
    _serve(folder, ws)
    r = int(ws.test_idx[0])
    controls = stored_panels.controls("persuasive")
    served = stored_panels.stored("persuasive", r, controls)
    assert served is not None
    doc = services.built_store().json("persuasive_rows.json")
    rows = doc["rows"] = dict(doc["rows"])  # held compressed and read-only (store/packed.py): a crafted copy instead
    for crafted in ({"namespace": "dash_core_components", "type": "Markdown",
                     "props": {"children": "<img src=x onerror=alert(1)>", "dangerously_allow_html": True}},
                    {"namespace": "dash_core_components", "type": "Markdown",
                     "props": {"children": "[a link](https://evil.example)", "dangerously_allow_html": False}},
                    {"namespace": "dash_html_components", "type": "Div",
                     "props": {"children": "x", "dangerously_allow_html": True}},
                    {"namespace": "dash_html_components", "type": "Div", "props": {"children": "x", "id": "y"}},
                    {"namespace": "dash_html_components", "type": "Iframe", "props": {"src": "https://example.org"}}):
        rows[str(r)] = json.dumps([crafted, *served[1:]])  # a crafted store (the manifest is not signed)
        assert stored_panels.stored("persuasive", r, controls) is None, crafted
    rows[str(r)] = json.dumps(list(served))
    assert stored_panels.stored("persuasive", r, controls) is not None
