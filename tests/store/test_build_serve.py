"""Build, then serve (issue 14): a store built on the bundled sample is served without recomputation.

The store is built once per module with the first 6 held-out rows (the Persuasive and Surrogate parts
skipped: they are the same services' JSON, checked in tests/app through the JSON cache). Independent
oracle for SHAP: :class:`explainers.ShapExplainer` called directly with the documented settings.
"""
from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import explainers as ex
from workspace.errors import CandorError
from workspace.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
ROWS = 6


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """``(settings with the store, workspace, store folder)``; the services are put back afterwards."""
    from app import services
    from app.cli.build import build

    folder = tmp_path_factory.mktemp("store-build")
    settings = Settings(warm=False, cache_dir=folder / "cache", state_dir=folder / "state")
    previous = services.state().workspace
    build(settings, folder / "store", max_rows=ROWS, chunk_rows=4, skip=("persuasive", "surrogates", "cohorts"))
    ws = services.workspace()
    yield Settings(store=folder / "store", warm=False, cache_dir=folder / "cache", state_dir=folder / "state"), ws, \
        folder / "store"
    services.use_built_store(None)
    if previous is not None:
        services.init(previous, warm=False)


@pytest.fixture
def serving(built):
    """The services serving the built store (as ``create_app`` installs it)."""
    from app import services
    from store.read import open_for

    settings, ws, folder = built
    services.use_built_store(open_for(settings, ws))
    services.init(ws, warm=False)
    yield services, ws, folder
    services.use_built_store(None)
    services.init(ws, warm=False)


def _copy(folder: Path, tmp_path: Path) -> Path:
    target = tmp_path / "copy"
    shutil.copytree(folder, target)
    return target


def _same(a, b) -> bool:
    """Equal explanations, but for the wall-clock ``params["seconds"]`` LIME reports."""
    da, db = a.to_dict(), b.to_dict()
    for d in (da, db):
        d["params"].pop("seconds", None)
    return da == db


def test_stored_shap_equals_the_explainer_called_directly(built):
    _, ws, folder = built
    rows = np.load(folder / "rows.npy", allow_pickle=False)
    assert rows.tolist() == sorted(ws.test_idx.tolist()[:ROWS])  # the first held-out rows of the split
    oracle = ex.ShapExplainer(ws.adapter, background=ws.X.iloc[ws.train_idx],
                              target_index=ws.model.index, background_size=100,
                              seed=0).explain_many(ws.X.iloc[rows])
    np.testing.assert_allclose(np.load(folder / "shap_values.npy"), oracle.values, rtol=0, atol=1e-12)
    np.testing.assert_allclose(np.load(folder / "shap_base.npy"), oracle.base_value, rtol=0, atol=1e-12)
    np.testing.assert_allclose(np.load(folder / "prediction.npy"), ws.model.predict_proba(ws.X.iloc[rows])[:, 1],
                               rtol=0, atol=1e-12)
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["rows"]["stored"] == ROWS and manifest["facts"]["shap_exact"] is True
    assert manifest["skipped"]["muse_default.json"].startswith("not built")


def test_served_rows_and_global_view_are_the_live_ones_without_recomputing(serving, monkeypatch):
    services, ws, folder = serving
    from app.services import tabular

    row = int(np.load(folder / "rows.npy")[1])
    monkeypatch.setattr(tabular, "LIME_LIMITS", {})  # the build's stopping rule (by tolerance or samples, not time)
    tabular.reproducible_lime()
    live_shap, live_lime = tabular._live_shap_row(row), tabular._live_lime_row(row)
    def boom(*_):
        raise AssertionError("recomputed although the store has it")

    monkeypatch.setattr(tabular, "_live_shap_row", boom)
    monkeypatch.setattr(tabular, "_live_lime_row", boom)
    view = services.local_view(row)
    assert _same(view.shap, live_shap) and _same(view.lime, live_lime)
    g = services.global_importance()
    assert len(g.values) == len(ws.X) and g.source == json.loads((folder / "manifest.json").read_text())["global"]["source"]
    np.testing.assert_array_equal(g.values, np.load(folder / "global_values.npy"))


def test_the_warm_up_prepares_each_stored_rows_view_and_a_click_reads_it(serving, monkeypatch):
    """Served from a store, the warm-up prepares the Descriptive view of every stored row "Random row" picks
    from; a click on such a row reads it (no explanation read, no agreement computed), and it is the view
    computed on demand (oracle: the same services with the prepared views set aside)."""
    services, ws, folder = serving
    from app.services import row_view

    rows = np.load(folder / "rows.npy").tolist()
    on_demand = {r: services.local_view(r) for r in rows}  # before the warm-up: computed per call
    prepared = row_view.stored_views()
    assert sorted(prepared) == rows and services.is_ready("stored_row_views")
    for r in rows:
        a, b = prepared[r], on_demand[r]
        assert _same(a.shap, b.shap) and _same(a.lime, b.lime) and a.labels == b.labels and a.agreement == b.agreement

    def boom(*_):
        raise AssertionError("computed although the warm-up prepared it")

    monkeypatch.setattr(row_view, "shap_row", boom)
    monkeypatch.setattr(row_view, "lime_row", boom)
    assert all(services.local_view(r) is prepared[r] for r in rows)
    assert services.local_view(np.int64(rows[0])) is prepared[rows[0]]  # a row number as numpy hands it over
    with pytest.raises(AssertionError, match="prepared it"):  # another k, or a row not stored, is computed
        services.local_view(rows[0], k=3)
    with pytest.raises(AssertionError, match="prepared it"):
        services.local_view(int(ws.train_idx[0]))


def test_the_warm_up_draws_each_stored_rows_panels_and_a_click_sends_them(serving, monkeypatch):
    """The Descriptive page's panels of each stored row are drawn by the warm-up (figures as JSON text); a click sends
    those, and they are what drawing the row on demand gives (oracle: ``render_local`` called directly, as JSON)."""
    services, ws, folder = serving
    from dash._utils import to_json

    from app.callbacks import descriptive
    from app.views import sent

    services.join_late()  # the page module may be imported only now, after the fixture installed the workspace
    rows = np.load(folder / "rows.npy").tolist()
    drawn = descriptive.rendered_stored_rows()
    assert sorted(drawn) == rows and services.is_ready("descriptive_rendered_rows")
    for r in rows[:3]:
        assert all(isinstance(p, bytes) for p in drawn[r]) and len(drawn[r]) == 4  # kept as text, compressed
        assert json.loads(to_json(sent.from_text(drawn[r]))) == json.loads(to_json(descriptive.render_local(r)))
        assert sum(map(len, drawn[r])) < 0.4 * sum(len(to_json(p)) for p in descriptive.render_local(r))  # compressed

    def boom(*_):
        raise AssertionError("drawn again although the warm-up drew it")

    monkeypatch.setattr(descriptive, "render_local", boom)
    assert descriptive.render_row(rows[0])[:4] == sent.from_text(drawn[rows[0]])
    with pytest.raises(AssertionError, match="drew it"):  # SHAP with raw players is drawn on demand
        descriptive.render_row(rows[0], "raw")


def test_pages_register_warm_values_after_the_workspace_is_installed(serving):
    """A value registered after ``init`` (a page module's, imported when the Dash app is made) joins the installed
    workspace, and a store's warm-up computes it then."""
    services, ws, folder = serving
    from app.services import _core

    calls = []
    getter = _core.lazy("test_late_value", lambda: calls.append(1) or len(calls), warm=True)
    try:
        with pytest.raises(RuntimeError):
            getter()
        assert "test_late_value" in services.join_late(compute=True) and calls == [1]
        assert getter() == 1 and calls == [1]
    finally:
        _core._factories.pop("test_late_value", None)
        _core._warm_order.remove("test_late_value")
        _core.state()._lazies.pop("test_late_value", None)


def test_a_store_for_another_model_or_data_is_refused(built, tmp_path):
    from store.read import open_for, open_store

    settings, ws, folder = built
    with pytest.raises(CandorError, match=r"was built for another model \(SHA-256 "):
        open_store(folder, model_sha256="0" * 64, data_sha256="0" * 64, max_bytes=2**30)
    changed = _copy(folder, tmp_path)
    manifest = json.loads((changed / "manifest.json").read_text())
    manifest["data"]["sha256"] = "f" * 64
    (changed / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(CandorError, match=r"was built for another data \(SHA-256 ffffffffffff…"):
        open_for(Settings(store=changed), ws)


def test_a_tampered_or_oversized_store_is_refused(built, tmp_path):
    from store.read import open_for

    settings, ws, folder = built
    copy = _copy(folder, tmp_path)
    raw = bytearray((copy / "shap_values.npy").read_bytes())
    raw[-1] ^= 0x01  # one bit of one SHAP value, same size
    (copy / "shap_values.npy").write_bytes(bytes(raw))
    with pytest.raises(CandorError, match=r"shap_values.npy does not match the SHA-256 in its manifest"):
        open_for(Settings(store=copy), ws)
    (copy / "shap_values.npy").write_bytes(bytes(raw[:-8]))
    with pytest.raises(CandorError, match=r"shap_values.npy is \d[\d,]* bytes, the manifest says"):
        open_for(Settings(store=copy), ws)
    with pytest.raises(CandorError, match=r"over the 0 MiB limit \(CANDOR_MAX_STORE_MB\)"):
        open_for(Settings(store=folder, max_store_mb=1e-4), ws)


def test_nothing_in_a_store_needs_pickle(built):
    _, _, folder = built
    files = [p for p in folder.rglob("*") if p.is_file()]
    assert {p.suffix for p in files} <= {".npy", ".json", ".parquet"} and len(files) >= 15
    for p in files:
        if p.suffix == ".npy":
            np.load(p, allow_pickle=False)
        elif p.suffix == ".json":
            json.loads(p.read_text())
        else:
            pd.read_parquet(p)


SERVE = """
import json, sys
from pathlib import Path
from workspace.settings import Settings
from app.serve.server import create_app
from app import services
folder = Path(sys.argv[1])
create_app(settings=Settings(store=folder / "store", warm=False, cache_dir=folder / "cache", state_dir=folder / "state"))
ws = services.workspace()
services.local_view(int(ws.test_idx[0]))  # the default row, stored
services.global_importance()
before = [m for m in ("shap", "lime", "torch", "numba") if m in sys.modules]
row = services.shap_row(int(ws.train_idx[0]))
print(json.dumps({"before": before, "after": [m for m in ("shap", "numba", "lime") if m in sys.modules],
                  "algorithm": row.params["algorithm"]}))
"""


def _env():
    return {**os.environ, "PYTHONPATH": str(ROOT)}


def test_serving_a_store_imports_no_shap_lime_or_torch_even_for_a_missing_row(built):
    """A row the store lacks is explained by Candor's own Tree SHAP: shap (2 s, numba, llvmlite) stays unloaded."""
    folder = built[2].parent
    out = subprocess.run([sys.executable, "-c", SERVE, str(folder)], cwd=ROOT, env=_env(), capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["before"] == [] and result["after"] == [] and result["algorithm"] == "tree"


def test_the_server_refuses_a_store_for_other_data_in_one_line(built, tmp_path):
    changed = _copy(built[2], tmp_path)
    manifest = json.loads((changed / "manifest.json").read_text())
    manifest["data"]["sha256"] = "e" * 64
    (changed / "manifest.json").write_text(json.dumps(manifest))
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {**_env(), "CANDOR_CACHE_DIR": str(tmp_path / "cache"), "CANDOR_STATE_DIR": str(tmp_path / "state"),
           "CANDOR_WARM": "0"}
    out = subprocess.run([sys.executable, "-m", "app", "--store", str(changed), "--port", str(port)], cwd=ROOT,
                         env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 2
    assert out.stderr.strip().splitlines() == [
        f"candor: error: store {changed} was built for another data (SHA-256 eeeeeeeeeeee…, this data is "
        f"{json.loads((built[2] / 'manifest.json').read_text())['data']['sha256'][:12]}…); rebuild it with "
        "python -m app build"]


def test_the_global_panel_does_not_wait_for_the_warm_up_when_a_store_holds_it(serving, monkeypatch):
    """From a store the Descriptive page took 3.4 s in Chromium (explainerdashboard: 0.5 s): its global panel
    polled once a second for a warm-up step the store answers in milliseconds."""
    from app.callbacks.descriptive import render_global_when_ready
    from app.services import _core, warmup

    monkeypatch.setattr(_core.warm_done, "is_set", lambda: False)  # the warm-up is still running
    assert not _core.is_ready("shap_all")
    assert warmup.waiting_for("shap_all") is None
    opened = _core.built_store()
    monkeypatch.setattr(_core.state(), "built_store", None)  # without a store the panel still waits for the warm-up
    assert warmup.waiting_for("shap_all").startswith("Waiting for the warm-up to compute global SHAP")
    monkeypatch.setattr(_core.state(), "built_store", opened)
    bar, _, _, stop_polling, _ = render_global_when_ready("/descriptive")
    assert stop_polling is True and len(bar["data"][0]["y"]) > 0  # drawn once per process, kept as sent (a dict)


def test_served_global_view_stays_memory_mapped_and_its_importance_is_of_every_row(serving):
    """The global SHAP arrays are the store's memory maps, not a copy per worker (issue 14: 800 MB per array per
    worker at 1M rows x 100 features); mean |SHAP| and its standard error equal numpy's over every row."""
    services, _, folder = serving
    g = services.global_importance()
    mapped = services.built_store().array("global_values")
    assert isinstance(mapped, np.memmap) and mapped.mode == "r"
    for served, name in ((g.values, "global_values"), (g.feature_values, "global_feature_values"),
                         (g.standard_error, "global_se")):
        assert np.shares_memory(served, services.built_store().array(name)), name
    on_disk = np.load(folder / "global_values.npy", allow_pickle=False)
    np.testing.assert_allclose(g.importance, np.abs(on_disk).mean(axis=0), rtol=1e-12, atol=0)
    se = np.load(folder / "global_se.npy", allow_pickle=False)
    np.testing.assert_allclose(g.importance_standard_error, np.sqrt((se ** 2).sum(axis=0)) / len(se), rtol=1e-12, atol=0)


def test_random_row_picks_among_the_stored_rows_when_the_store_holds_some(serving, built):
    """A store built with ``--rows 6``: "Random row" draws from those 6 rows (shown at once), and says so."""
    from app.shell import layout

    services, ws, folder = serving
    stored = sorted(ws.test_idx.tolist()[:ROWS])  # what the build stored: the first held-out rows of the split
    pool = services.random_row_pool()
    assert pool == {"rows": stored, "of": len(ws.test_idx), "stored": ROWS}
    button = [c for c in layout.row_picker().children if getattr(c, "id", None) == "row-random"][0]
    assert f"the {ROWS} held-out rows the store holds (of {len(ws.test_idx)})" in button.title


def test_the_manifest_is_strict_json(built):
    """No ``Infinity`` or ``NaN`` (Python writes them, JSON has none): a build lifts LIME's and SHAP's clock
    budgets, and the manifest must still be read by any JSON reader."""
    def refuse(constant):
        raise ValueError(f"{constant} is not JSON")

    _, _, folder = built
    manifest = json.loads((folder / "manifest.json").read_text(), parse_constant=refuse)
    assert manifest["explainers"]["shap"]["agnostic_budget_s"] is None


def _resident_kb(address: int) -> int:
    """Resident kB of the memory map of this process holding ``address`` (``/proc/self/smaps``)."""
    inside = False
    for line in open("/proc/self/smaps"):
        head = line.split()[0]
        if "-" in head and not head.endswith(":"):
            lo, hi = (int(x, 16) for x in head.split("-"))
            inside = lo <= address < hi
        elif inside and line.startswith("Rss:"):
            return int(line.split()[1])
    raise AssertionError(f"no memory map holds {address:#x}")


def test_the_stored_arrays_pages_are_not_kept_once_checked(built):
    """At open every value of the arrays is checked (finite), which brings all their pages into the process: the full
    Adult store's per-row arrays were 46 MB of the server's peak memory though a click reads a row of each. Checked,
    they are let go (store.manifest.release_pages) and read back from the page cache when a row is asked."""
    from store.read import open_for

    settings, ws, folder = built
    opened = open_for(settings, ws)
    values = opened._arrays["shap_values"]
    assert _resident_kb(values.ctypes.data) == 0  # 4 kB (its one page) before: checked, it stayed
    e = opened.explanation("shap", int(opened.rows[2]))
    np.testing.assert_array_equal(e.values, np.load(folder / "shap_values.npy")[2])
    assert _resident_kb(values.ctypes.data) > 0  # asked: read back
